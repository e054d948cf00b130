#!/usr/bin/env bash
# Makes sure Prometheus is on PATH for the live metrics' test (Debian's service is not
# started: the test runs its own, on loopback).
exec "$(dirname "$0")/ensure-tool.sh" prometheus "the live metrics' test" prometheus
