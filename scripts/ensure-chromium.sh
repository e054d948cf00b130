#!/usr/bin/env bash
# Makes sure a Chromium is on PATH for the browser tests (the report, the live page).
exec "$(dirname "$0")/ensure-tool.sh" chromium "the browser tests" chromium chromium-browser google-chrome chrome
