#!/usr/bin/env bash
# Builds the stockbench image that runs every route with nothing installed on the host
# (deploy/runtimes/Dockerfile), tagged $STOCKBENCH_RUNTIMES_IMAGE (default
# stockbench/stockbench:runtimes), and prints its name. Its base, Debian 12 with
# redis-server and the adapters' runtimes, is made with debootstrap from Debian's
# packages and docker import (no registry needed) and kept as
# stockbench/runtimes-base:local until its package list changes; the command and the
# shipped adapters are this checkout's.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${STOCKBENCH_RUNTIMES_IMAGE:-stockbench/stockbench:runtimes}
base=stockbench/runtimes-base:local
say() { echo "runtimes-image: $*" >&2; }
# The runtimes scripts/ensure-adapters.sh installs on a host, and redis-server.
packages=redis-server,php-cli,php-redis,python3-redis,python3-rq,python3-celery,ruby-sidekiq,ruby-redis-namespace,nodejs,node-redis,ca-certificates
version=$(echo "bookworm $packages" | sha256sum | cut -c1-12)

if [ "$(docker image inspect -f '{{index .Config.Labels "org.stockbench.base"}}' "$base" 2>/dev/null)" != "$version" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing Debian's debootstrap"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
  root=$(mktemp -d)
  trap '$sudo rm -rf "$root"' EXIT
  say "making the base with debootstrap from $mirror (a few minutes)"
  $sudo debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -20 "$root.log" >&2; exit 1; }
  rm -f "$root.log"
  # What an image does not need: package lists and caches, documentation.
  $sudo rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/locale
  $sudo tar -C "$root" -c . | docker import --change "LABEL org.stockbench.base=$version" - "$base" >/dev/null
  $sudo rm -rf "$root"
  trap - EXIT
  say "made $base"
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 ${GO:-go} build -o "$ctx/stockbench" ./cmd/stockbench
mkdir -p "$ctx/adapters"
for d in node php python ruby PROTOCOL.md; do cp -r "adapters/$d" "$ctx/adapters/"; done
cp deploy/runtimes/Dockerfile "$ctx/Dockerfile"
if ! docker build -q -t "$tag" --build-arg BASE="$base" --label org.stockbench.image=runtimes "$ctx" >"$ctx/build.log" 2>&1; then
  cat "$ctx/build.log" >&2
  exit 1
fi
say "built $tag ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%d MB", $1/1000000}'))"
echo "$tag"
