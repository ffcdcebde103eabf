#!/usr/bin/env bash
# Everything that needs the GPU, in one command on the GPU machine (see
# ../shared/GPU.md): run from the repo root through .devicepack/run.sh, e.g.
#   bash .devicepack/run.sh bash tests/gpu/run_on_gpu.sh "$OUT"
# It prints a short summary last; full logs go to OUT.
set -uo pipefail
OUT=${1:-/tmp/gf_gpu}
mkdir -p "$OUT"
fail=0
step() { echo; echo "=== $*"; }
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }

step info
check gridforge info

step "[gpu] tests"
check gridforge_tests "[gpu]" --durations yes

step "validate every case, float64 and float32"
for c in cases/*.yaml; do
  for p in float64 float32; do
    check gridforge validate "$c" precision=$p output.dir=$OUT/validate/$(basename "$c" .yaml)_$p
  done
done

# The [oom] test provokes a failed cudaMalloc on purpose, which memcheck
# reports as an API error; it runs without the sanitizer above.
step "compute-sanitizer memcheck over the [gpu] tests and one validate"
check compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 gridforge_tests "[gpu]~[oom]" > "$OUT/memcheck.log" 2>&1
tail -3 "$OUT/memcheck.log"
check compute-sanitizer --tool memcheck --error-exitcode 9 gridforge validate cases/heat3d_hotspot.yaml --steps 20 output.dir=$OUT/san > "$OUT/memcheck_validate.log" 2>&1
tail -3 "$OUT/memcheck_validate.log"
for tool in racecheck initcheck synccheck; do
  check compute-sanitizer --tool $tool --error-exitcode 9 gridforge_tests "[gpu]~[oom]" > "$OUT/$tool.log" 2>&1
  echo "$tool: $(tail -1 "$OUT/$tool.log")"
done

step "512^3 explicit heat, float32 and float64 (timing.json)"
for p in float32 float64; do
  check gridforge run cases/heat3d_hotspot.yaml --device cuda --out "$OUT/heat512_$p" --quiet \
    "grid.dims=[512,512,512]" precision=$p heat.steps=400 output.every=0 "output.formats=[hdf5]"
  python3 -c "import json,sys; t=json.load(open('$OUT/heat512_$p/timing.json')); print('gridforge heat3d 512^3 $p: median %.4f ms/step, %.1f GB/s effective, compute %.3f s' % (t['per_step_ms']['median'], t['effective_GBps'], t['phases_s']['compute']))" | tee -a "$OUT/summary.txt"
done

step "512^3 stencils, float32: star7, box27, the radius-3 custom stencil"
for st in star7 box27 custom; do
  if [ $st = custom ]; then c=cases/stencil3d_custom.yaml; extra=(); else c=cases/stencil3d_box27.yaml; extra=(stencil.preset=$st stencil.coeff=1e-7); fi
  check gridforge run $c --device cuda --out "$OUT/st512_$st" --quiet "grid.dims=[512,512,512]" precision=float32 \
    stencil.steps=100 output.every=0 "output.formats=[hdf5]" "${extra[@]}"
  python3 -c "import json; t=json.load(open('$OUT/st512_$st/timing.json')); print('gridforge stencil $st 512^3 float32: median %.4f ms/step, %.1f GB/s effective' % (t['per_step_ms']['median'], t['effective_GBps']))" | tee -a "$OUT/summary.txt"
done

step "peers (same call)"
for p in float32 float64; do
  python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem heat3d --size 512 --precision $p --json "$OUT/peers_$p.json" 2>&1 | tee -a "$OUT/summary.txt"
done

echo; echo "=== summary"; cat "$OUT/summary.txt"
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
