#!/usr/bin/env bash
# The one-step marches (heat, Jacobi, the star and box stencil presets; 2D
# and 3D) and the temporally blocked heat on the GPU machine: the [gpu]
# tests, racecheck and memcheck over the blocked heat and the fixed-shape
# stencil tests, then bench rows at 512^3 and 16384^2 beside the peers (which
# measure the copy bandwidth in the same call). From the repo root:
#   bash .devicepack/run.sh bash tests/gpu/perf_marches.sh OUT [tests,perf]
set -uo pipefail
OUT=${1:-/tmp/gf_marches}
PART=${2:-tests,perf}  # tests: the [gpu] tests; san: racecheck + memcheck; perf: bench and peers
want() { case ",$PART," in *",$1,"*) return 0;; *) return 1;; esac; }
mkdir -p "$OUT"
fail=0
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }
if want tests; then
  check gridforge_tests "[gpu]~[oom]" > "$OUT/tests.log" 2>&1
  grep -E "FAILED|failed|passed|test cases" "$OUT/tests.log" | tail -15
fi
if want san; then
  for T in "GPU temporally blocked heat*" "GPU star and box stencils*"; do
    check timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 gridforge_tests "$T" > "$OUT/racecheck.log" 2>&1
    echo "racecheck $T: $(tail -1 "$OUT/racecheck.log")"
    check timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 gridforge_tests "$T" > "$OUT/memcheck.log" 2>&1
    echo "memcheck $T: $(tail -1 "$OUT/memcheck.log")"
  done
fi
B=(gridforge bench --devices cuda --precision float32,float64 --repeat 5 --quiet)
if want perf; then
  for p in float32 float64; do
    python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem heat3d --size 512 --precision $p --json "$OUT/peers_$p.json" 2>&1 | tail -8
  done
  python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem jacobi2d --size 16384 --precision float32 --json "$OUT/peers_jacobi2d.json" 2>&1 | tail -8
  check "${B[@]}" --workload heat --dims 3 --sizes 256,512 --time-block 1,2,3,4 --out "$OUT/b_heat3" 2>&1 | tail -12
  check "${B[@]}" --workload heat,laplace --dims 2 --sizes 16384 --out "$OUT/b_2d" 2>&1 | tail -6
  check "${B[@]}" --workload laplace --dims 3 --sizes 512 --out "$OUT/b_jac3" 2>&1 | tail -4
fi
if want perf || want stencils; then
  for st in star7 box27; do
    check "${B[@]}" --workload stencil --stencil $st --dims 3 --sizes 512 --out "$OUT/b_$st" 2>&1 | tail -4
  done
  for st in star5 box9; do
    check "${B[@]}" --workload stencil --stencil $st --dims 2 --sizes 16384 --out "$OUT/b_$st" 2>&1 | tail -4
  done
fi
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
