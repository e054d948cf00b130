#!/usr/bin/env bash
# Makes sure Prometheus is on PATH for the live metrics' test, installing Debian's
# package when it can (Debian's service is not started: the test runs its own, on
# loopback). Without one the test is skipped, unless STOCKBENCH_REQUIRE_PROMETHEUS is
# set (CI sets it), so this never fails a machine that cannot install it.
set -uo pipefail
command -v prometheus >/dev/null 2>&1 && exit 0
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  echo "ensure-prometheus: installing Debian's prometheus for the live metrics' test" >&2
  $sudo apt-get update -qq >/dev/null 2>&1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 && exit 0
fi
echo "ensure-prometheus: no Prometheus here (apt-get install prometheus); the live metrics' test will be skipped" >&2
exit 0
