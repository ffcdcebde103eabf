#!/usr/bin/env bash
# Temporal blocking of the explicit heat step, the star stencils (star7 in
# 3D, star5 in 2D) and Jacobi, 3D and 2D, on the GPU machine: the bit-for-bit
# tests, racecheck over the heat ones, whole runs blocked against one step at
# a time, then bench rows for 1 to 4 steps per pass beside the peers' heat3d
# and jacobi2d (which measure the copy bandwidth in the same call). Run from
# the repo root through .devicepack/run.sh:  bash tests/gpu/perf_time_block.sh OUT
set -uo pipefail
OUT=${1:-/tmp/gf_tb}
mkdir -p "$OUT"
fail=0
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }
T="GPU temporally blocked*"  # heat's test cases, the stars' and Jacobi's, 3D and 2D (a comma would split the test spec)
check gridforge_tests "$T" | tail -3
if [ "${GF_NO_SAN:-0}" != 1 ]; then  # GF_NO_SAN=1: the timings only
# racecheck is slow: over the test sized for it ([tb_small], every pass and
# launch layout on small grids: about a minute); synccheck over the
# small-grid heat test, for the shuffles
check compute-sanitizer --tool racecheck --error-exitcode 9 gridforge_tests "[tb_small]" > "$OUT/racecheck.log" 2>&1
echo "racecheck: $(tail -1 "$OUT/racecheck.log")"
check compute-sanitizer --tool synccheck --error-exitcode 9 gridforge_tests "GPU temporally blocked heat equals*" > "$OUT/synccheck.log" 2>&1
echo "synccheck: $(tail -1 "$OUT/synccheck.log")"
check compute-sanitizer --tool memcheck --error-exitcode 9 gridforge_tests "$T" > "$OUT/memcheck.log" 2>&1
echo "memcheck: $(tail -1 "$OUT/memcheck.log")"
fi
# whole runs over 200 steps or more (so that auto times the depths at
# setup): heat with periodic z and a source field, to t_end (a shortened last
# step); the star7 case: blocked and auto = one step per pass
for tb in 1 4 auto; do
  check gridforge run cases/heat3d_hotspot.yaml --device cuda --quiet --out "$OUT/run_tb$tb" --time-block $tb \
    "grid.dims=[96,80,70]" 'heat={alpha: 1.0e-2, t_end: 0.5, source: "x*y"}' "boundary.z={type: periodic}" output.every=50 "output.formats=[hdf5]"
  check gridforge run cases/stencil3d_star7.yaml --device cuda --quiet --out "$OUT/star7_tb$tb" --time-block $tb \
    "grid.dims=[96,80,70]" "output.formats=[hdf5]"
  gridforge run cases/laplace3d_jacobi.yaml --device cuda --quiet --out "$OUT/jacobi_tb$tb" --time-block $tb \
    "grid.dims=[96,80,70]" laplace.max_iters=602 laplace.check_every=100 "output.formats=[hdf5]"
  [ $? = 1 ] || { echo "FAILED: jacobi tb $tb: not exit 1 (max_iters)"; fail=1; }
  # 2D: heat with a periodic y and a source field to t_end; star5 on walls; Jacobi
  check gridforge run cases/heat2d_plate.yaml --device cuda --quiet --out "$OUT/run2d_tb$tb" --time-block $tb \
    "grid.dims=[700,300]" 'heat={alpha: 1.0e-2, t_end: 0.05, source: "x*y"}' "boundary.y-={type: periodic}" \
    "boundary.y+={type: periodic}" output.every=100 "output.formats=[hdf5]"
  check gridforge run cases/stencil2d_star9.yaml --device cuda --quiet --out "$OUT/star5_tb$tb" --time-block $tb \
    "grid.dims=[700,300]" 'stencil={preset: star5, coeff: 5.0e-7, steps: 240}' \
    "boundary.default={type: neumann, gradient: 0.5}" "output.formats=[hdf5]"
  gridforge run cases/laplace2d_plate.yaml --device cuda --quiet --out "$OUT/jacobi2d_tb$tb" --time-block $tb \
    "grid.dims=[700,300]" laplace.max_iters=602 laplace.check_every=100 "output.formats=[hdf5]"
  [ $? = 1 ] || { echo "FAILED: jacobi 2D tb $tb: not exit 1 (max_iters)"; fail=1; }
done
python3 - "$OUT" <<'PY'
import h5py, numpy as np, sys
import json
ok = True
for run, what in (("run", "heat 96x80x70 to t_end 0.5 (a shortened last step)"), ("star7", "star7 96x80x70, 240 steps"),
                  ("jacobi", "jacobi 96x80x70, 602 sweeps in chunks of 100"),
                  ("run2d", "heat 700x300 periodic y to t_end 0.05"), ("star5", "star5 700x300, 240 steps"),
                  ("jacobi2d", "jacobi 700x300, 602 sweeps in chunks of 100")):
    a = h5py.File(sys.argv[1] + f"/{run}_tb1/fields.h5")
    for tb in ("4", "auto"):
        b = h5py.File(sys.argv[1] + f"/{run}_tb{tb}/fields.h5")
        same = all(np.array_equal(a["steps"][s]["u"][...], b["steps"][s]["u"][...]) for s in a["steps"])
        took = json.load(open(sys.argv[1] + f"/{run}_tb{tb}/timing.json")).get("time_block")
        print(f"{what}, outputs {list(a['steps'])}: time_block {tb} (took {took}) vs 1 bit for bit: {same}")
        ok = ok and same
sys.exit(0 if ok else 1)
PY
[ $? = 0 ] || fail=1
for p in float32 float64; do
  python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem heat3d --size 512 --precision $p --json "$OUT/peers_$p.json" 2>&1 | tail -8
  python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem jacobi2d --size 16384 --precision $p --json "$OUT/peers2d_$p.json" 2>&1 | tail -8
done
check gridforge bench --workload heat,stencil,laplace --dims 3 --sizes ${GF_TB_SIZES:-256,512} --precision float32,float64 --devices cuda \
  --time-block 1,2,3,4 --out "$OUT/bench" 2>&1 | tail -33
check gridforge bench --workload heat,stencil,laplace --dims 2 --sizes ${GF_TB2_SIZES:-4096,16384} --precision float32,float64 --devices cuda \
  --time-block 1,2,3,4 --out "$OUT/bench2d" 2>&1 | tail -33
# what auto takes on a whole 512^3 run
for p in float32 float64; do
  check gridforge run cases/heat3d_hotspot.yaml --device cuda --quiet --out "$OUT/auto512_$p" "grid.dims=[512,512,512]" \
    precision=$p heat.steps=400 output.every=0 "output.formats=[hdf5]"
  python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print('512^3 %s run, time_block auto: took %s, median %.4f ms/step' % (sys.argv[2], t.get('time_block'), t['per_step_ms']['median']))" "$OUT/auto512_$p/timing.json" $p
done
for p in float32 float64; do
  check gridforge run cases/heat2d_plate.yaml --device cuda --quiet --out "$OUT/auto16k_$p" "grid.dims=[16384,16384]" \
    precision=$p 'heat={alpha: 1.0, steps: 400}' output.every=0 "output.formats=[hdf5]"
  python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print('16384^2 %s run, time_block auto: took %s, median %.4f ms/step' % (sys.argv[2], t.get('time_block'), t['per_step_ms']['median']))" "$OUT/auto16k_$p/timing.json" $p
done
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
