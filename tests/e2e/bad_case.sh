#!/usr/bin/env bash
# One broken case file of tests/data/bad_cases/: `gridforge run` must exit 2
# with exactly the message its first line promises, one line that starts
# with file:line:col, and must not create the output folder.
#
# The first line of each case is "# expect: LINE:COL: key: message", the
# message without its leading "<case path>:"; "{data}" in it stands for the
# absolute path of tests/data, the case folder's parent (messages name
# resolved paths).
# Usage (from the source root): bad_case.sh GRIDFORGE CASE OUT
set -u
gf=$1 case=$2 out=$3
fail() { echo "bad_case: FAIL: $case: $*"; exit 1; }
rm -rf "$out"
expect=$(head -n 1 "$case" | sed -n 's/^# expect: //p')
[ -n "$expect" ] || fail "the first line is not '# expect: LINE:COL: key: message'"
data=$(cd "$(dirname "$case")/.." && pwd)
expect="$case:${expect//\{data\}/$data}"
err=$("$gf" run "$case" --out "$out" 2>&1 >/dev/null)
rc=$?
printf 'exit %s\nstderr: %s\n' "$rc" "$err"
[ "$rc" = 2 ] || fail "exit $rc, expected 2"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "expected a one-line message"
[[ $err =~ ^"$case":[0-9]+:[0-9]+:\  ]] || fail "the message does not start with $case:LINE:COL:"
[ "$err" = "$expect" ] || fail "expected: $expect"
[ ! -e "$out" ] || fail "the output folder $out was created"
echo "bad_case: ok"
