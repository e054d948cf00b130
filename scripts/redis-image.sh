#!/usr/bin/env bash
# Prints the Redis image the harness should run, making sure the Docker engine has it.
#
# Order: $STOCKBENCH_REDIS_IMAGE (or redis:7) if the engine has it or can pull it; otherwise a
# local image built FROM scratch out of Debian's redis-server binary and the libraries ldd lists
# (for machines whose engine reaches no registry), its first process the keeper that restarts
# the server inside the container (internal/servers/keeper), with iproute2's ip beside it: the Sentinel
# topology cuts a server off its peers with a blackhole route inside its own container. When no Docker engine answers it prints
# nothing and makes sure redis-server is installed: the harness then runs it as a process.
# Progress goes to stderr, the image name to stdout.
set -euo pipefail

want=${STOCKBENCH_REDIS_IMAGE:-redis:7}
local_tag=${STOCKBENCH_LOCAL_IMAGE:-stockbench/redis:local}
say() { echo "redis-image: $*" >&2; }

if ! command -v docker >/dev/null 2>&1 || ! timeout 10 docker info >/dev/null 2>&1; then
  say "no Docker engine answers; the harness will start redis-server as a process"
  "$(dirname "$0")/ensure-redis-server.sh" >&2
  exit 0
fi
if docker image inspect "$want" >/dev/null 2>&1; then echo "$want"; exit 0; fi
if timeout 120 docker pull -q "$want" >/dev/null 2>&1; then say "pulled $want"; echo "$want"; exit 0; fi
version=local-4 # bump when the image's contents change: an older local image is rebuilt
if [ "$(docker image inspect -f '{{index .Config.Labels "org.stockbench.image"}}' "$local_tag" 2>/dev/null)" = "$version" ]; then
  say "$want cannot be pulled; using the local image $local_tag"
  echo "$local_tag"; exit 0
fi

say "$want cannot be pulled; building $local_tag from this machine's redis-server"
"$(dirname "$0")/ensure-redis-server.sh" >&2
server=$(readlink -f "$(command -v redis-server)")
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
mkdir -p "$root/usr/bin" "$root/data" "$root/tmp"
chmod 1777 "$root/tmp"
cp "$server" "$root/usr/bin/redis-server"   # a copy, not the symlink: redis picks its mode from argv[0]
# The first process: restarts the server inside the container when the harness asks, in
# the milliseconds a process restart takes (internal/servers/keeper).
(cd "$(dirname "$0")/.." && CGO_ENABLED=0 ${GO:-go} build -trimpath -ldflags=-s -o "$root/usr/bin/stockbench-keeper" ./internal/servers/keeper)
ipbin=$(command -v ip || true)
if [ -z "$ipbin" ] && command -v apt-get >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo -n"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends iproute2 >/dev/null && ipbin=$(command -v ip || true)
fi
bins=("$server")
if [ -n "$ipbin" ]; then
  cp "$(readlink -f "$ipbin")" "$root/usr/bin/ip"
  bins+=("$(readlink -f "$ipbin")")
else
  say "no ip (iproute2) here: the image cannot cut a Sentinel master off"
fi
for bin in "${bins[@]}"; do
  ldd "$bin" | grep -oE '/[^ ]+' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
EXPOSE 6379
WORKDIR /data
ENTRYPOINT ["/usr/bin/stockbench-keeper", "/usr/bin/redis-server"]
CMD ["--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
DOCKERFILE
if ! out=$(docker build -q -t "$local_tag" --label org.stockbench.image=$version "$ctx" 2>&1); then echo "$out" >&2; exit 1; fi
say "built $local_tag ($(du -sh "$root" | cut -f1) rootfs, $(redis-server --version | grep -oE "v=[0-9.]+"))"
echo "$local_tag"
