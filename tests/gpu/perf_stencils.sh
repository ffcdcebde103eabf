#!/usr/bin/env bash
# Stencil timings on the GPU machine (see ../shared/GPU.md): the [gpu]
# stencil tests, then ms/step at 512³ (3D) and 16384² (2D) for the presets
# and the radius-3 custom stencil, and the device copy bandwidth from
# peers.py in the same call, e.g.
#   bash .devicepack/run.sh bash tests/gpu/perf_stencils.sh "$OUT"
set -uo pipefail
OUT=${1:-/tmp/gf_gpu}
mkdir -p "$OUT"
fail=0
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }
check gridforge_tests "GPU stencils*" --durations yes

time_case() {  # label case precision dims steps overrides...
  local label=$1 c=$2 p=$3 dims=$4 steps=$5; shift 5
  check gridforge run "$c" --device cuda --out "/tmp/gf_perf/$label" --quiet "grid.dims=$dims" precision=$p \
    stencil.steps=$steps output.every=0 "output.formats=[hdf5]" "$@"
  python3 -c "import json; t=json.load(open('/tmp/gf_perf/$label/timing.json')); print('%-28s median %.4f ms/step, %7.1f GB/s effective' % ('$label', t['per_step_ms']['median'], t['effective_GBps']))" | tee -a "$OUT/stencil_summary.txt"
  cp "/tmp/gf_perf/$label/timing.json" "$OUT/$label.timing.json"; rm -rf "/tmp/gf_perf/$label"
}
for p in float32 float64; do
  for st in star7 star13 box27; do
    time_case "${st}_512_$p" cases/stencil3d_box27.yaml $p "[512,512,512]" 100 stencil.preset=$st stencil.coeff=1e-7
  done
  time_case "custom_r3_512_$p" cases/stencil3d_custom.yaml $p "[512,512,512]" 100
  for st in star5 star9 box9; do
    time_case "${st}_16384_$p" cases/stencil2d_star9.yaml $p "[16384,16384]" 100 stencil.preset=$st stencil.coeff=5e-10
  done
done
python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem heat3d --size 512 --precision float32 2>&1 | grep -i copy | tee -a "$OUT/stencil_summary.txt"
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
