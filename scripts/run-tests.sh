#!/usr/bin/env bash
# Runs test binaries built beforehand (go test -c -o DIR/), each in its package's
# directory as go test runs it, JOBS packages at a time, and prints each package's output
# when it ends, with an ok or FAIL line and its time. The Makefile builds every binary
# first so that no sale's timing-bound verdict shares the CPUs with the compiler; running
# the binaries itself, rather than go test once more, links nothing a second time.
#
# Usage: scripts/run-tests.sh DIR JOBS PACKAGE... [-- TEST-BINARY FLAGS]
# A package whose binary is not in DIR has no test files (go test -c writes none).
set -uo pipefail
dir=$(cd "$1" && pwd) jobs=$2
shift 2
pkgs=() flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do pkgs+=("$1"); shift; done
[ $# -gt 0 ] && shift && flags=("$@")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

one() { # one package, as "DIR IMPORT-PATH": its output, its verdict
	pkgdir=${1%% *} name=${1#* }
	bin=$dir/$(basename "$pkgdir").test
	if [ ! -x "$bin" ]; then
		printf '?   \t%s\t[no test files]\n' "$name"
		return 0
	fi
	log=$logs/$(echo "$name" | tr / _)
	start=$(date +%s%N)
	(cd "$pkgdir" && "$bin" "${flags[@]}") >"$log" 2>&1
	code=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	took=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))s
	if [ $code = 0 ]; then
		grep -v '^PASS$' "$log"
		printf 'ok  \t%s\t%s\n' "$name" "$took"
	else
		cat "$log"
		printf 'FAIL\t%s\t%s\n' "$name" "$took"
	fi
	return $code
}
export -f one
export dir logs
export FLAGS_FILE=$logs/flags
printf '%s\n' "${flags[@]}" >"$FLAGS_FILE"
# One go list for every package, in the order given (a go command per package was a
# fifth of a second of CPU each, beside the tests).
go list -f '{{.Dir}} {{.ImportPath}}' "${pkgs[@]}" >"$logs/pkgs" || exit 1
# xargs passes each package to a shell of its own, which reads the flags back.
# shellcheck disable=SC2016 # $1 is the inner shell's
xargs -P "$jobs" -I{} bash -c 'mapfile -t flags <"$FLAGS_FILE"; one "$1"' _ {} <"$logs/pkgs"
