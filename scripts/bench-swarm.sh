#!/usr/bin/env bash
# make bench-swarm: a sharded sale run by a real orchestrator, Docker Swarm, on this engine.
# A single-node swarm is made when the engine is in none (and left at the end; one it was
# already in is kept). For each design in LOCKS: an overlay network, a stack of Redis (a
# service) and SHARDS shards (a replicated job, deploy/swarm/stack.yml), the merge as a
# second job (deploy/swarm/merge.yml), and the same sale by one process on the same Redis,
# side by side, as bench-distributed does; then the same for each queue design in QUEUES,
# whose shards each enqueue their share of the orders and run their share of the workers. The shard count and run id come from
# deploy/sale/sale.env, which the Kubernetes manifests read too. Exits 1 when a merged
# verdict's class is not the one-process run's.
#
# KILL_SHARD=i instead loses shard i mid-sale (SIGKILL of its container, as a node lost,
# KILL_AFTER seconds after the shards start buying): the merge must mark the run incomplete
# and name the shard, and the sale run again under the same run id must replace it and
# merge complete. Exits 1 when either does not happen.
#
# Everything it made (stacks, containers, the network, the swarm) goes on exit, error or
# Ctrl-C. Settings (environment): SHARDS and RUN_ID (sale.env's), BUYERS (20000), STOCK
# (500), RATE (0: every buyer at once), THINK (1ms), FAULT (none; a sharded sale takes
# faults at a rate, as worker-crash:p=0.05), LOCKS (lua,seed-setnx), QUEUES (stream), OUT
# (results/swarm), KILL_SHARD, KILL_AFTER (2), WAIT (600: seconds a job may take).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/side-by-side.sh
say() { echo "bench-swarm: $*" >&2; }

set -a
. deploy/sale/sale.env
STOCKBENCH_SHARDS=${SHARDS:-$STOCKBENCH_SHARDS}
base_id=${RUN_ID:-$STOCKBENCH_RUN_ID}
STOCKBENCH_BUYERS=${BUYERS:-20000} STOCKBENCH_STOCK=${STOCK:-500} STOCKBENCH_RATE=${RATE:-0} STOCKBENCH_THINK=${THINK:-1ms}
STOCKBENCH_FAULT=${FAULT:-none}
STOCKBENCH_USER=$(id -u):$(id -g)
set +a
locks=${LOCKS-lua,seed-setnx} queues=${QUEUES-stream} out=${OUT:-results/swarm} kill=${KILL_SHARD:-} kill_after=${KILL_AFTER:-2} wait_s=${WAIT:-600}
shards=$STOCKBENCH_SHARDS
case $shards in ''|*[!0-9]*) say "SHARDS must be a number, got '$shards'"; exit 2 ;; esac
if [ "$shards" -lt 2 ] || [ "$shards" -gt 64 ]; then say "SHARDS must be from 2 to 64, got $shards"; exit 2; fi
if [ -n "$kill" ]; then
  case $kill in *[!0-9]*) say "KILL_SHARD must be a shard's number, got '$kill'"; exit 2 ;; esac
  if [ "$kill" -ge "$shards" ]; then say "KILL_SHARD must be from 0 to $((shards - 1)), got $kill"; exit 2; fi
fi

STOCKBENCH_REDIS_IMAGE=$(scripts/redis-image.sh)
if [ -z "$STOCKBENCH_REDIS_IMAGE" ]; then say "needs a Docker engine: the shards are swarm tasks"; exit 2; fi
export STOCKBENCH_REDIS_IMAGE
STOCKBENCH_IMAGE=$(scripts/stockbench-image.sh)
export STOCKBENCH_IMAGE
mkdir -p "$out"
STOCKBENCH_RESULTS=$(cd "$out" && pwd)
export STOCKBENCH_RESULTS

id=swarm-$(date -u +%Y%m%d-%H%M%S)-$$
made_swarm=
had_gwbridge=$(docker network ls -q --filter name=^docker_gwbridge$)
stacks=() networks=()
cleanup() {
  trap - INT TERM
  for s in "${stacks[@]}"; do docker stack rm "$s" >/dev/null 2>&1 || true; done
  # A job's finished tasks keep their containers, and a removed stack's go only in time:
  # remove them, and the one-process runs', then the network they were on.
  for _ in $(seq 50); do
    ids=$(docker ps -aq --filter "label=org.stockbench.run=$id")
    for s in "${stacks[@]}"; do ids="$ids $(docker ps -aq --filter "name=^$s[_-]")"; done
    [ -z "${ids// /}" ] || docker rm -f $ids >/dev/null 2>&1 || true
    left=0
    for n in "${networks[@]}"; do
      docker network rm "$n" >/dev/null 2>&1 || true
      ! docker network inspect "$n" >/dev/null 2>&1 || left=1
    done
    [ $left = 1 ] || break
    sleep 0.3
  done
  if [ -n "$made_swarm" ]; then
    docker swarm leave --force >/dev/null 2>&1 && say "left the swarm it made"
    # The bridge a swarm makes for its tasks' way out outlives it.
    [ -n "$had_gwbridge" ] || docker network rm docker_gwbridge >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT TERM

case $(docker info --format '{{.Swarm.LocalNodeState}}') in
  inactive)
    docker swarm init --advertise-addr 127.0.0.1 >/dev/null
    made_swarm=1
    say "made a single-node swarm on this engine (it is left at the end)" ;;
  active)
    if [ "$(docker info --format '{{.Swarm.ControlAvailable}}')" != true ]; then
      say "this engine is a swarm worker: run it on a manager"; exit 2
    fi
    say "using the swarm this engine is in" ;;
  *) say "this engine's swarm is $(docker info --format '{{.Swarm.LocalNodeState}}'): neither in one nor out"; exit 2 ;;
esac

# tasks SERVICE STATE: the distinct slots of SERVICE with a task in STATE.
tasks() { docker service ps "$1" --format '{{.Name}} {{.CurrentState}}' 2>/dev/null | awk -v s="$2" '$2 == s {print $1}' | sort -u; }

# await SERVICE N: wait until N slots of the job SERVICE completed, or each of the others
# failed at least once (the engine retries a failed job task without end, whatever its
# restart policy, so a failure is counted at its first). Prints the failed slots.
await() {
  local svc=$1 n=$2 deadline=$((SECONDS + wait_s)) done failed
  while :; do
    done=$(tasks "$svc" Complete)
    failed=$(comm -23 <(tasks "$svc" Failed) <(printf '%s\n' "$done"))
    if [ $(($(printf '%s' "$done" | grep -c .) + $(printf '%s' "$failed" | grep -c .))) -ge "$n" ]; then
      printf '%s\n' "$failed" | grep . || true
      return 0
    fi
    if [ $SECONDS -ge $deadline ]; then say "$svc: not done within ${wait_s}s"; return 1; fi
    sleep 0.5
  done
}

# end_job SERVICE: remove the job SERVICE and its tasks. This engine leaves a removed job's
# running tasks running (and retries its failed ones while it exists): they are stopped
# here (SIGTERM, then SIGKILL 10 s later), so that none is left to meet the next sale.
# A retry it had already scheduled may start just after the removal (CI saw a lost
# shard's retried task meet the rerun's shards), so containers are removed until the
# service is gone and none has appeared for 2 s.
end_job() {
  docker service rm "$1" >/dev/null
  local ids quiet=0 pass=0 until=$((SECONDS + 60))
  while [ $quiet -lt 4 ] && [ $SECONDS -lt $until ]; do
    ids=$(docker ps -aq --filter "label=com.docker.swarm.service.name=$1")
    pass=$((pass + 1))
    if [ -n "$ids" ] || docker service inspect "$1" >/dev/null 2>&1; then
      quiet=0
      [ -z "$ids" ] || [ $pass = 1 ] || say "$1: removed task container(s) started after the job's removal: $(echo $ids)"
      [ -z "$ids" ] || docker stop -t 10 $ids >/dev/null 2>&1 || true
      [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
    else
      quiet=$((quiet + 1))
    fi
    sleep 0.5
  done
}

# shard_container SERVICE I: the running container of shard I (slot I; slot 0 shows as the
# node's id).
shard_container() {
  local c slot
  for c in $(docker ps -q --filter "label=com.docker.swarm.service.name=$1"); do
    slot=$(docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$c" | sed -n 's/^STOCKBENCH_SHARD_SLOT=//p')
    case $slot in *[!0-9]*) slot=0 ;; esac
    if [ $((slot % shards)) = "$2" ]; then echo "$c"; return; fi
  done
}

# sale STACK TAG [kill]: the shards of the sale in STOCKBENCH_RUN_ID on the stack STACK (its
# Redis and network made at its first sale and kept for the next, as a user's Redis
# stays), then the merge into merged/STACK-TAG; with kill, shard KILL_SHARD is lost
# mid-sale. The merged record's directory in $merged, the merge's exit in $merge_code.
sale() {
  local stack=$1 tag=$2
  export STOCKBENCH_NETWORK=stockbench-$stack
  if ! printf '%s\n' "${networks[@]}" | grep -qxF "$STOCKBENCH_NETWORK"; then
    networks+=("$STOCKBENCH_NETWORK") stacks+=("$stack" "$stack-merge")
    docker network create -d overlay --attachable --label org.stockbench=true --label "org.stockbench.run=$id" "$STOCKBENCH_NETWORK" >/dev/null
  fi
  docker stack deploy -c deploy/swarm/stack.yml "$stack" >/dev/null 2>&1 || { docker stack deploy -c deploy/swarm/stack.yml "$stack"; return 1; }
  if [ "${3:-}" = kill ]; then
    local c="" until=$((SECONDS + 120))
    while [ -z "$c" ] && [ $SECONDS -lt $until ]; do sleep 0.2; c=$(shard_container "${stack}_shard" "$kill"); done
    # The shards start buying once all have met: wait for every one's container.
    while [ "$(docker ps -q --filter "label=com.docker.swarm.service.name=${stack}_shard" | wc -l)" -lt "$shards" ] && [ $SECONDS -lt $until ]; do sleep 0.2; done
    sleep "$kill_after"
    if ! docker kill --signal KILL "$c" >/dev/null 2>&1; then
      say "$lock: shard $kill ended before it could be killed:"
      docker service logs --raw "${stack}_shard" >&2 || true
      return 1
    fi
    say "$lock: killed shard $kill's container ${c:0:12} (SIGKILL) ${kill_after}s after the shards met"
  fi
  failed=$(await "${stack}_shard" "$shards")
  docker service logs --raw "${stack}_shard" >"$STOCKBENCH_RESULTS/$stack-$tag-shards.log" 2>&1 || true
  end_job "${stack}_shard"
  [ -z "$failed" ] || say "$lock: shard task(s) failed: $(echo $failed)"
  export STOCKBENCH_MERGED=merged/$stack-$tag
  docker stack deploy -c deploy/swarm/merge.yml "$stack-merge" >/dev/null 2>&1 || { docker stack deploy -c deploy/swarm/merge.yml "$stack-merge"; return 1; }
  local mfailed
  mfailed=$(await "$stack-merge_merge" 1)
  docker service logs --raw "$stack-merge_merge" >"$STOCKBENCH_RESULTS/$stack-$tag-merge.log" 2>&1 || true
  end_job "$stack-merge_merge"
  merge_code=0; [ -z "$mfailed" ] || merge_code=1
  merged=$(ls -d "$STOCKBENCH_RESULTS/$STOCKBENCH_MERGED"/*/ 2>/dev/null | head -1)
  merged=${merged%/}
}

field() { grep -m1 -o "\"$2\": \"[^\"]*\"" "$1/results.json" | cut -d'"' -f4; }

status=0
designs=()
for l in ${locks//,/ }; do designs+=("--lock $l"); done
for q in ${queues//,/ }; do designs+=("--queue $q"); done
for design in "${designs[@]}"; do
  lock=${design#* } # the design's name, in what the script says
  export STOCKBENCH_KIND=${design% *} STOCKBENCH_DESIGN=$lock STOCKBENCH_RUN_ID=$base_id-$lock
  stack=sb-${id#swarm-}-$lock
  say "$lock: $shards shards of $STOCKBENCH_BUYERS buyers, stock $STOCKBENCH_STOCK, run $STOCKBENCH_RUN_ID (swarm stack $stack)"
  if [ -n "$kill" ]; then
    sale "$stack" lost kill || { status=1; continue; }
    if [ -z "$merged" ] || [ "$merge_code" = 0 ] || ! grep -q '"lost": \[' "$merged/results.json"; then
      say "$lock: shard $kill was killed, but the merge did not mark the run incomplete with it lost"; cat "$STOCKBENCH_RESULTS/$stack-lost-merge.log" >&2; status=1; continue
    fi
    say "$lock: merged with shard $kill lost: $(class "$merged"): $(field "$merged" incomplete_reason)"
    sed -n '/^SCENARIO/,/^$/p' "$STOCKBENCH_RESULTS/$stack-lost-merge.log" >&2
    say "$lock: the sale again under the same run id $STOCKBENCH_RUN_ID, on the same Redis"
    sale "$stack" rerun || { status=1; continue; }
    if [ -z "$merged" ] || [ "$merge_code" != 0 ] || [ -n "$failed" ]; then
      say "$lock: the rerun did not merge complete"; cat "$STOCKBENCH_RESULTS/$stack-rerun-shards.log" "$STOCKBENCH_RESULTS/$stack-rerun-merge.log" >&2; status=1; continue
    fi
    say "$lock: the rerun replaced the lost attempt's records: merged complete, $(class "$merged") ($merged)"
    sed -n '/^SCENARIO/,/^$/p' "$STOCKBENCH_RESULTS/$stack-rerun-merge.log" >&2
    docker stack rm "$stack" "$stack-merge" >/dev/null
    continue
  fi
  sale "$stack" sale || { status=1; continue; }
  if [ -z "$merged" ] || [ -n "$failed" ] || [ "$merge_code" != 0 ]; then
    say "$lock: the sharded sale did not merge:"; cat "$STOCKBENCH_RESULTS/$stack-sale-shards.log" "$STOCKBENCH_RESULTS/$stack-sale-merge.log" >&2; status=1; continue
  fi
  say "$lock: the same sale in one process, on the same Redis"
  # As many application instances (--apps) as shards, each with its own pool, so that
  # both sales poll Redis through the same connections.
  docker run --name "$id-$lock-one" --network "$STOCKBENCH_NETWORK" --label org.stockbench=true --label "org.stockbench.run=$id" \
    --user "$STOCKBENCH_USER" -v "$STOCKBENCH_RESULTS:/results" "$STOCKBENCH_IMAGE" \
    run "$STOCKBENCH_KIND" "$lock" --buyers "$STOCKBENCH_BUYERS" --stock "$STOCKBENCH_STOCK" --think "$STOCKBENCH_THINK" --rate "$STOCKBENCH_RATE" \
    --fault "$STOCKBENCH_FAULT" --apps "$shards" --redis-url "redis://${stack}_redis:6379" --out /results/one >"$STOCKBENCH_RESULTS/$id-$lock-one.log" 2>"$STOCKBENCH_RESULTS/$id-$lock-one.err" ||
    { cat "$STOCKBENCH_RESULTS/$id-$lock-one.log" "$STOCKBENCH_RESULTS/$id-$lock-one.err" >&2; status=1; continue; }
  one=$STOCKBENCH_RESULTS/one/$(sed -n 's#^results: /results/one/##p' "$STOCKBENCH_RESULTS/$id-$lock-one.log")
  docker stack rm "$stack" "$stack-merge" >/dev/null
  side_by_side "bench-swarm: $lock" "$shards swarm shards" "$STOCKBENCH_RESULTS/$stack-sale-merge.log" \
    "$STOCKBENCH_RESULTS/$id-$lock-one.log" "$merged" "$one" "$merged" || status=1
done
exit $status
