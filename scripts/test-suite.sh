#!/usr/bin/env bash
# Runs one suite of the tests (make test, make test-race, make test-long): compiles the
# packages' test binaries with BUILD-FLAGS before any test runs, so that a sale's
# timing-bound verdict never shares the CPUs with the compiler, then runs them
# (scripts/run-tests.sh), TEST_P packages at once (default 2), ./scenarios and the
# command's first (the longest), four sales at once in each (they mostly wait on TTLs).
# With TEST_ALONE=1, ./scenarios runs first and alone: raced, beside another package's
# sales, schedulers polling a drop met where they never meet alone, and under the long
# suite's network faults buyers ran out of patience. RUN, when set, is the -test.run
# pattern; TEST_TIMEOUT, each test binary's timeout (30m); TEST_FLAGS, when set, more
# flags for the test binaries (-test.v, say, for each test's time). TEST_VET, when set,
# is go test's -vet for the compile (all: go vet's checks on every package, in the same
# build).
#
# The binaries stay in bin/test/SUITE between runs: the go command links again only
# those whose packages changed (a fresh directory each run relinked all 31, 30 s of the
# warm loop). The command the end-to-end tests run is built there too, before any test
# (STOCKBENCH_TEST_BINARY): raced for the raced suites but the long one, whose commands
# sell for minutes with verdicts bound to their timing.
#
# Usage: scripts/test-suite.sh BUILD-FLAGS RUN PACKAGE...
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 run=$2
shift 2
suite=$(echo "plain $build" | tr -cs 'a-z0-9' '-' | sed 's/-$//')
bin=$PWD/bin/test/$suite
mkdir -p "$bin"
# One suite at a time in a checkout: a second would relink binaries the first is running.
exec 9>"$bin/.lock"
flock -n 9 || { echo "test-suite: waiting for the other $suite run in this checkout" >&2; flock 9; }

# -trimpath: the build does not depend on where the checkout is, so that a fresh clone
# finds its packages in the build cache a clone elsewhere filled. -s -w: no symbol table
# nor DWARF, which no test reads; it halves the links' time.
binflags=(-trimpath)
case " $build " in *" -race "*) case " $build " in *" long "*) ;; *) binflags+=(-race) ;; esac ;; esac
# A binary left from a package that has no tests in this suite now would run as its own.
# shellcheck disable=SC2086 # BUILD-FLAGS are several flags
tested=$(go list $build -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' "$@" | xargs -rn1 basename)
for f in "$bin"/*.test; do
	[ -e "$f" ] && ! echo "$tested" | grep -qxF "$(basename "$f" .test)" && rm -f "$f"
done
# shellcheck disable=SC2086 # BUILD-FLAGS are several flags
go test $build -trimpath -ldflags='-s -w' -vet="${TEST_VET:-off}" -c -o "$bin/" "$@" >/dev/null
go build "${binflags[@]}" -ldflags='-s -w' -o "$bin/stockbench" ./cmd/stockbench
export STOCKBENCH_TEST_BINARY=$bin/stockbench
flags=(-test.count=1 -test.timeout="${TEST_TIMEOUT:-30m}")
[ -z "$run" ] || flags+=(-test.run "$run")
# shellcheck disable=SC2206 # TEST_FLAGS are several flags
[ -z "${TEST_FLAGS:-}" ] || flags+=($TEST_FLAGS)

pkgs=$(go list "$@")
# ./scenarios and the command's first: the longest. The other long ones (the adapters',
# the servers') start later, once those two have taken what CPU they need: started
# beside them, the command's tests took 101 s where they had taken 83 (make test, 2 CPUs).
alone=$(go list ./scenarios) cmd=$(go list ./cmd/stockbench)
rest=$(echo "$pkgs" | grep -vxF -e "$alone" -e "$cmd" || true)
first=$(echo "$pkgs" | grep -xF -e "$alone" -e "$cmd" || true)
code=0
if [ "${TEST_ALONE:-}" = 1 ] && echo "$pkgs" | grep -qxF "$alone"; then
	scripts/run-tests.sh "$bin" 1 "$alone" -- "${flags[@]}" -test.parallel 4 || code=1
	first=$(echo "$pkgs" | grep -xF "$cmd" || true)
fi
# shellcheck disable=SC2086 # one package a word
scripts/run-tests.sh "$bin" "${TEST_P:-2}" $first $rest -- "${flags[@]}" -test.parallel 4 || code=1
exit $code
