#!/usr/bin/env bash
# Runs the case-loader fuzzer (make fuzz). Usage: run.sh FUZZER SECONDS WORKDIR
# Seeds: tests/fuzz/corpus (kept in git), cases/, tests/data/. New inputs go
# to WORKDIR/corpus, crashes to WORKDIR/crashes; `make fuzz-merge` folds the
# new inputs that add coverage back into tests/fuzz/corpus.
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/corpus" "$work/crashes"
# -timeout: one input taking over 10 s is a hang; -rss_limit_mb: so is
# memory running away. detect_leaks stays on (the default).
set +e
"$fuzzer" "$work/corpus" "$src/tests/fuzz/corpus" "$src/cases" "$src/tests/data/bad_cases" \
  "$src/tests/data/cases" -dict="$src/tests/fuzz/case.dict" -max_total_time="$seconds" \
  -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$work/crashes/" >"$work/fuzz.log" 2>&1
rc=$?
set -e
# The log without libFuzzer's per-input progress lines: start, end, any report.
grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$work/fuzz.log" | tail -n 60
echo "fuzz: exit $rc; log in $work/fuzz.log"
exit "$rc"
