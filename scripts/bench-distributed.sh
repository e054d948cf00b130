#!/usr/bin/env bash
# make bench-distributed: a sharded sale run here as a Kubernetes Indexed Job would run it.
# For each design in LOCKS: SHARDS containers of the stockbench image (deploy/Dockerfile),
# each `run --shard i/SHARDS`, on a private Docker network against a Redis container; their
# partial records merged (stockbench merge); and the same sale run by one process (one
# container, with SHARDS application instances so that it has as many connection pools) on
# the same Redis, side by side. Exits 1 when a merged verdict's class is not
# the one-process run's. Every container and the network go on exit, error or Ctrl-C.
#
# Settings (environment): SHARDS (4), BUYERS (20000), STOCK (500), LOCKS (lua,seed-setnx),
# FLAGS (more run flags, e.g. "--think 1ms"), OUT (results/distributed).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/side-by-side.sh
shards=${SHARDS:-4} buyers=${BUYERS:-20000} stock=${STOCK:-500} locks=${LOCKS:-lua,seed-setnx}
flags=${FLAGS:-} out=${OUT:-results/distributed}
say() { echo "bench-distributed: $*" >&2; }

redis_image=$(scripts/redis-image.sh)
if [ -z "$redis_image" ]; then say "needs a Docker engine: the shards are containers"; exit 2; fi
image=$(scripts/stockbench-image.sh)
# The static build the image holds: the same compile, so one cache serves both.
CGO_ENABLED=0 ${GO:-go} build -o bin/stockbench ./cmd/stockbench
mkdir -p "$out"
out=$(cd "$out" && pwd)

id=dist-$(date -u +%Y%m%d-%H%M%S)-$$
net=stockbench-$id
labels=(--label org.stockbench=true --label "org.stockbench.run=$id")
cleanup() {
  ids=$(docker ps -aq --filter "label=org.stockbench.run=$id")
  [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
  docker network rm "$net" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT TERM
docker network create "${labels[@]}" "$net" >/dev/null
docker run -d --name "$id-redis" --network "$net" "${labels[@]}" --entrypoint redis-server "$redis_image" \
  --save '' --appendonly no --protected-mode no >/dev/null
for _ in $(seq 100); do
  docker logs "$id-redis" 2>&1 | grep -q "Ready to accept connections" && break
  sleep 0.1
done
url=redis://$id-redis:6379
user=(--user "$(id -u):$(id -g)")

# run NAME ARGS...: one stockbench container on the network, its results under $out.
run() {
  local name=$1; shift
  docker run --name "$id-$name" --network "$net" "${labels[@]}" "${user[@]}" -v "$out:/results" "$image" "$@"
}

status=0
for lock in ${locks//,/ }; do
  sale=(--lock "$lock" --buyers "$buyers" --stock "$stock" --redis-url "$url" $flags)
  say "$lock: $shards shards of $buyers buyers, stock $stock"
  pids=()
  for i in $(seq 0 $((shards - 1))); do
    run "$lock-shard-$i" run "${sale[@]}" --shard "$i/$shards" --run-id "$id-$lock" --out /results >"$out/$id-$lock-shard-$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { say "a shard failed:"; cat "$out/$id-$lock"-shard-*.log >&2; exit 1; }; done
  ./bin/stockbench merge "$out/$id-$lock" --out "$out/merged" >"$out/$id-$lock-merge.log" 2>"$out/$id-$lock-merge.err" ||
    { cat "$out/$id-$lock-merge.log" "$out/$id-$lock-merge.err" >&2; exit 1; }
  merged=$(sed -n 's/^results: //p' "$out/$id-$lock-merge.log")
  say "$lock: the same sale in one process"
  # The shards are SHARDS load generators with a pool each: the one process gets as many
  # application instances (--apps), each with its own pool, so that both sales poll Redis
  # through the same connections.
  run "$lock-one" run "${sale[@]}" --apps "$shards" --out /results/one >"$out/$id-$lock-one.log" 2>"$out/$id-$lock-one.err" ||
    { cat "$out/$id-$lock-one.log" "$out/$id-$lock-one.err" >&2; exit 1; }
  one=$out/one/$(sed -n 's#^results: /results/one/##p' "$out/$id-$lock-one.log")
  ./bin/stockbench report "$merged" "$one" --out "$out/$id-$lock-compare" >/dev/null
  side_by_side "bench-distributed: $lock" "$shards shards" "$out/$id-$lock-merge.log" "$out/$id-$lock-one.log" \
    "$merged" "$one" "side by side: $out/$id-$lock-compare/report.html" || status=1
done
exit $status
