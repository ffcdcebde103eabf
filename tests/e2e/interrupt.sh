#!/usr/bin/env bash
# SIGINT during a run: the run stops after the step in progress, writes the
# state it reached as a final output and (the case has checkpoint_every) as
# checkpoint.h5, keeps whole files only, and exits 130.
# Usage: interrupt.sh GRIDFORGE CASE OUT
set -u
gf=$1 case=$2 out=$3
rm -rf "$out"
"$gf" run "$case" --device cpu --out "$out" --quiet heat.steps=100000000 output.every=0 &
pid=$!
for _ in $(seq 100); do [ -f "$out/run.json" ] && break; sleep 0.1; done
sleep 1
kill -INT $pid
wait $pid
rc=$?
fail() { echo "interrupt: FAIL: $*"; exit 1; }
[ $rc = 130 ] || fail "exit $rc, expected 130"
grep -q '"status": "interrupted' "$out/run.json" || fail "run.json does not say interrupted"
[ -f "$out/fields.h5" ] || fail "no fields.h5"
[ -f "$out/timing.json" ] || fail "no timing.json"
[ -f "$out/checkpoint.h5" ] || fail "no checkpoint.h5 (the case checkpoints)"
steps=$(ls "$out"/vtk/*.vti | wc -l)
[ "$steps" = 1 ] || fail "expected one final .vti, found $steps"
leftovers=$(find "$out" -name '.*' -o -name '*.tmp' -o -name '*.partial')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
echo "interrupt: ok: exit 130, $(tail -1 "$out/log.csv" | cut -d, -f1) steps done"
