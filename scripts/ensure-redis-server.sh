#!/usr/bin/env bash
# Makes sure redis-server (and redis-cli) are on PATH, installing Debian's package when it can.
set -euo pipefail
command -v redis-server >/dev/null 2>&1 && exit 0
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  echo "ensure-redis-server: installing Debian's redis-server" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  # The package's service is not wanted: the harness starts its own servers.
  $sudo service redis-server stop >/dev/null 2>&1 || true
  exit 0
fi
echo "ensure-redis-server: redis-server is not on PATH; install Redis 7 (brew install redis, apt-get install redis-server)" >&2
exit 1
