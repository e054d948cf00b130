#!/usr/bin/env bash
# ensure-tool.sh PACKAGE WHAT COMMAND...: makes sure one of COMMAND is on PATH for WHAT (a
# test that needs it), installing Debian's PACKAGE when it can. It never fails: without
# the tool the test is skipped, unless the test's STOCKBENCH_REQUIRE_* variable is set,
# as CI sets them.
set -uo pipefail
pkg=$1 what=$2
shift 2
for b in "$@"; do
  command -v "$b" >/dev/null 2>&1 && exit 0
done
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  echo "ensure-$pkg: installing Debian's $pkg for $what" >&2
  $sudo apt-get update -qq >/dev/null 2>&1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 && exit 0
fi
echo "ensure-$pkg: no $pkg here (apt-get install $pkg); $what will be skipped" >&2
exit 0
