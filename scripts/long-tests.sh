#!/usr/bin/env bash
# Prints the long suite's packages and a -run pattern naming its tests: the Test
# functions of the *_long_test.go files (build tag long), which make test leaves out.
# Output: one line "PATTERN", then one package path a line.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files --cached --others --exclude-standard '*_long_test.go' 2>/dev/null || find . -name '*_long_test.go' -not -path './.git/*')
[ -n "$files" ] || { echo "long-tests: no *_long_test.go files" >&2; exit 1; }
names=$(grep -ho '^func Test[A-Za-z0-9_]*' $files | sed 's/^func //' | sort)
dups=$(echo "$names" | uniq -d)
[ -z "$dups" ] || { echo "long-tests: a long test's name must be unique across packages: $dups" >&2; exit 1; }
pkgs=$(for f in $files; do echo "./$(dirname "$f")"; done | sort -u)
# A short test of a long package under a long test's name would run in both suites.
for p in $pkgs; do
	short=$(ls "$p"/*_test.go | grep -v '_long_test.go$' || true)
	[ -z "$short" ] && continue
	for n in $names; do
		! grep -q "^func $n(" $short || { echo "long-tests: $n is a long test's name and a short one's in $p" >&2; exit 1; }
	done
done
echo "^($(echo $names | tr ' ' '|'))\$"
echo "$pkgs"
