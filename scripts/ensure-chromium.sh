#!/usr/bin/env bash
# Makes sure a Chromium is on PATH for the report's browser test, installing Debian's
# package when it can. Without one the test is skipped, unless STOCKBENCH_REQUIRE_BROWSER
# is set (CI sets it), so this never fails a machine that cannot install it.
set -uo pipefail
for b in chromium chromium-browser google-chrome chrome; do
  command -v "$b" >/dev/null 2>&1 && exit 0
done
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  echo "ensure-chromium: installing Debian's chromium for the report's browser test" >&2
  $sudo apt-get update -qq >/dev/null 2>&1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 && exit 0
fi
echo "ensure-chromium: no Chromium here (apt-get install chromium); the report's browser test will be skipped" >&2
exit 0
