#!/usr/bin/env bash
# A run that diverges (tests/data/cases/diverge.yaml: Inf from step 1024,
# output.check_every: 10) stops at the next check with exit 1, names the
# step and the field, and keeps the outputs written before: steps 0, 500
# and 1000, whole, and nothing after.
# Usage: diverge.sh GRIDFORGE CASE OUT [PYTHON]
set -u
gf=$1 case=$2 out=$3 py=${4:-}
fail() { echo "diverge: FAIL: $*"; exit 1; }
rm -rf "$out"
err=$("$gf" run "$case" --device cpu --out "$out" --quiet 2>&1)
rc=$?
echo "exit $rc; stderr: $err"
[ "$rc" = 1 ] || fail "exit $rc, expected 1"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "expected one line of message"
want="error: diverged: field u has 8 NaN/Inf values at step 1030 (t = 1030); the last good output (step 1000) is kept in $out"
[ "$err" = "$want" ] || fail "expected: $want"
grep -q '"status": "failed: diverged' "$out/run.json" || fail "run.json does not say failed"
vtis=$(cd "$out/vtk" && ls | tr '\n' ' ')
[ "$vtis" = "diverge_000000.vti diverge_000500.vti diverge_001000.vti " ] || fail "vtk/ holds $vtis"
[ -f "$out/fields.h5" ] || fail "no fields.h5"
[ "$(tail -n 1 "$out/log.csv" | cut -d, -f1)" = 1030 ] || fail "log.csv does not end at step 1030"
leftovers=$(find "$out" -name '.*')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
if [ -n "$py" ]; then
  "$py" - "$out/fields.h5" <<'PY' || fail "fields.h5 is not what it should be"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    steps = sorted(f["steps"])
    assert steps == ["000000", "000500", "001000"], steps
    for s in steps:
        assert np.isfinite(f["steps"][s]["u"][...]).all(), s
PY
fi
echo "diverge: ok"
