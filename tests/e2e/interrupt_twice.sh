#!/usr/bin/env bash
# A second Ctrl-C exits at once: the first SIGINT starts the final output of
# a large field (seconds of zlib:9, on purpose: the default lz4 may finish
# before the second arrives), the second, a moment later, must end the
# process within a second with exit 130 and a message, without waiting for
# that output (run.json is never rewritten from "running").
# Usage: interrupt_twice.sh GRIDFORGE CASE OUT
set -u
gf=$1 case=$2 out=$3
fail() { echo "interrupt_twice: FAIL: $*"; exit 1; }
rm -rf "$out"
"$gf" run "$case" --device cpu --out "$out" --quiet grid.dims=[256,256,256] precision=float64 \
  heat.steps=100000000 output.every=0 output.formats=[vtk] output.compression=zlib:9 \
  2>"$out.stderr" &
pid=$!
# vtk/ is made once the initial state is set up: the time loop is running.
for _ in $(seq 600); do [ -d "$out/vtk" ] && break; sleep 0.1; done
[ -d "$out/vtk" ] || { kill -KILL $pid; fail "the run did not start within 60 s"; }
sleep 0.3
kill -INT $pid
sleep 0.05
t0=${EPOCHREALTIME/./}  # microseconds
kill -INT $pid
wait $pid
rc=$?
dt_ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
echo "exit $rc, $dt_ms ms after the second SIGINT; stderr: $(cat "$out.stderr")"
[ $rc = 130 ] || fail "exit $rc, expected 130"
grep -q "interrupted again: exiting at once" "$out.stderr" || fail "no message for the second interrupt"
[ "$dt_ms" -lt 1000 ] || fail "took $dt_ms ms to exit"
grep -q '"status": "running"' "$out/run.json" || fail "run.json was rewritten: the first interrupt's output completed first"
# Whatever was being written is hidden and temporary; every visible file is whole.
for f in $(find "$out" -type f ! -name '.*'); do
  case $f in
    *.json) grep -q '}$' "$f" || fail "$f is cut short" ;;
  esac
done
echo "interrupt_twice: ok"
