#!/usr/bin/env bash
# Signals a run meets besides a plain Ctrl-C (issue 23, items 5-7):
#  - a reader of stderr that goes away (`run ... 2>&1 >/dev/null | head -c 10`):
#    no SIGPIPE death, the run completes and exits 0;
#  - SIGINT while every step is an output (output.every=1): the stop is
#    written once, the checkpoint and timing.json are there, exit 130 (before,
#    a Ctrl-C that cut a step short wrote its output twice and failed);
#  - SIGINT during a long CPU raymarch render: it stops between rows, writes
#    no image and exits 130 (before, it rendered to the end and exited 0).
# Usage: signals.sh GRIDFORGE SOURCE_DIR OUT
set -u
gf=$1 src=$2 out=$3
fail() { echo "signals: FAIL: $*"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
cd "$src"

# 1. SIGPIPE
"$gf" run cases/heat1d_rod.yaml --device cpu --out "$out/pipe" 2>&1 >/dev/null | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "stderr closed early: exit $rc, expected 0"
grep -q '"status": "completed"' "$out/pipe/run.json" || fail "stderr closed early: run.json $(grep status "$out/pipe/run.json")"
[ -f "$out/pipe/timing.json" ] || fail "stderr closed early: no timing.json"

# 2. SIGINT with an output at every step, at a few moments
for t in 0.5 0.6 0.7 0.8; do
  o="$out/every1_$t"
  "$gf" run cases/heat3d_hotspot.yaml --device cpu --out "$o" --quiet "grid.dims=[32,32,32]" \
    heat.steps=100000000 output.every=1 output.checkpoint_every=100000000 output.formats=[hdf5] \
    2>"$o.stderr" &
  pid=$!
  for _ in $(seq 300); do [ -f "$o/run.json" ] && break; sleep 0.1; done
  sleep "$t"
  kill -INT $pid
  wait $pid
  rc=$?
  [ $rc = 130 ] || fail "output.every=1, SIGINT after $t s: exit $rc: $(cat "$o.stderr")"
  [ -f "$o/checkpoint.h5" ] || fail "output.every=1: no checkpoint.h5"
  [ -f "$o/timing.json" ] || fail "output.every=1: no timing.json"
  grep -q '"status": "interrupted' "$o/run.json" || fail "output.every=1: run.json $(grep status "$o/run.json")"
done

# 3. SIGINT during a raymarch render on the CPU
o="$out/render"
"$gf" run cases/raymarch_cloud.yaml --device cpu --out "$o" --quiet raymarch.camera.width=3000 \
  raymarch.camera.height=3000 2>"$o.stderr" &
pid=$!
for _ in $(seq 300); do [ -f "$o/run.json" ] && break; sleep 0.1; done
sleep 0.5
t0=${EPOCHREALTIME/./}
kill -INT $pid
wait $pid
rc=$?
dt_ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
[ $rc = 130 ] || fail "raymarch: exit $rc after SIGINT, expected 130: $(cat "$o.stderr")"
[ "$dt_ms" -lt 3000 ] || fail "raymarch: took $dt_ms ms to stop"
[ ! -e "$o/raymarch_cloud.png" ] || fail "raymarch: an image was written"
grep -q '"status": "interrupted' "$o/run.json" || fail "raymarch: run.json $(grep status "$o/run.json")"
echo "signals: ok (SIGPIPE, SIGINT on output steps, SIGINT in a render: stopped in $dt_ms ms)"
