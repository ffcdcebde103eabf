#!/usr/bin/env bash
# Everything that needs the GPU, in one command on the GPU machine (see
# ../shared/GPU.md): run from the repo root through .devicepack/run.sh, e.g.
#   bash .devicepack/run.sh bash tests/gpu/run_on_gpu.sh "$OUT"
# It prints a short summary last; full logs go to OUT.
set -uo pipefail
OUT=${1:-/tmp/gf_gpu}
PART=${2:-all}  # checks | timings | all | mpi (a device call is 10 minutes at most)
# mpi: on a machine with 2 or more GPUs (nvidia-h200-x2 or -x4), the MPI runs
# of issue 8 (see the mpi part below); not part of "all".
mkdir -p "$OUT"
fail=0
step() { echo; echo "=== $*"; }
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }

step info
check gridforge info

if [ "$PART" = checks ] || [ "$PART" = all ]; then

step "[gpu] tests"
check gridforge_tests "[gpu]" --durations yes

step "validate every case, float64 and float32"
for c in cases/*.yaml; do
  for p in float64 float32; do
    check gridforge validate "$c" precision=$p output.dir=$OUT/validate/$(basename "$c" .yaml)_$p
  done
done

step "validate 2D heat on rows of whole 16-byte vectors (the vectorised march)"
for p in float64 float32; do
  check gridforge validate cases/heat2d_plate.yaml precision=$p "grid.dims=[128,96]" output.dir=$OUT/validate/plate128_$p
done

step "validate a slowly converging float32 Jacobi (the runs cross the tolerance sweeps apart)"
check gridforge validate cases/laplace2d_plate.yaml precision=float32 "grid.dims=[132,75]" \
  "boundary.x-={type: neumann, gradient: 0.3}" output.dir=$OUT/validate/plate_slow_float32

step "validate the plate with sor and cg too, float64 and float32"
for m in sor cg; do
  for p in float64 float32; do
    check gridforge validate cases/laplace2d_plate.yaml laplace.method=$m precision=$p output.dir=$OUT/validate/plate_${m}_$p
  done
done

# The [oom] test provokes a failed cudaMalloc on purpose, which memcheck
# reports as an API error; it runs without the sanitizer above.
step "compute-sanitizer memcheck over the [gpu] tests and one validate"
check compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 gridforge_tests "[gpu]~[oom]" > "$OUT/memcheck.log" 2>&1
tail -3 "$OUT/memcheck.log"
check compute-sanitizer --tool memcheck --error-exitcode 9 gridforge validate cases/heat3d_hotspot.yaml --steps 20 output.dir=$OUT/san > "$OUT/memcheck_validate.log" 2>&1
tail -3 "$OUT/memcheck_validate.log"
for c in laplace2d_plate laplace3d_box poisson3d_periodic heat3d_implicit; do
  # whole solves: cut short, an iterative solve compares unconverged iterates
  check compute-sanitizer --tool memcheck --error-exitcode 9 gridforge validate cases/$c.yaml output.dir=$OUT/san_$c > "$OUT/memcheck_validate_$c.log" 2>&1
  echo "memcheck validate $c: $(tail -1 "$OUT/memcheck_validate_$c.log")"
done
check compute-sanitizer --tool memcheck --error-exitcode 9 gridforge validate cases/laplace2d_plate.yaml laplace.method=sor --steps 20 output.dir=$OUT/san_sor > "$OUT/memcheck_validate_sor.log" 2>&1
echo "memcheck validate sor: $(tail -1 "$OUT/memcheck_validate_sor.log")"
# The whole laplace solves run thousands of small kernels: memcheck covers
# them above; the race, init and sync checks take every other [gpu] test.
# racecheck reports shared-memory hazards inside cuSPARSE's own csrmv_v3_kernel
# (library code, seen on CUDA 13.0: 34 errors, 1589 warnings, every test
# passing); it checks every other kernel, ours included.
for tool in racecheck initcheck synccheck; do
  excl=(); [ $tool = racecheck ] && excl=(--kernel-name-exclude kns=csrmv)
  check compute-sanitizer --tool $tool "${excl[@]}" --error-exitcode 9 gridforge_tests "[gpu]~[oom]~GPU laplace solves*" > "$OUT/$tool.log" 2>&1
  echo "$tool: $(tail -1 "$OUT/$tool.log")"
done

step "divergence and memory on the GPU path"
# diverge.yaml doubles the field each step: Inf at step 1024, caught at 1030
gridforge run tests/data/cases/diverge.yaml --device cuda --out "$OUT/diverge" --quiet "grid.dims=[1000]" > "$OUT/diverge.log" 2>&1
rc=$?; echo "diverge on cuda: exit $rc: $(tail -1 "$OUT/diverge.log")"
[ $rc = 1 ] && grep -q "1030" "$OUT/diverge.log" || { echo "FAILED: divergence on cuda"; fail=1; }
gridforge run cases/heat3d_hotspot.yaml --device cuda --dry-run "grid.dims=[6000,6000,6000]" > "$OUT/oom.log" 2>&1
rc=$?; echo "6000^3 dry run on cuda: exit $rc: $(grep -i "needs" "$OUT/oom.log" | head -2 | tr '\n' ' ')"
[ $rc = 3 ] || { echo "FAILED: memory check on cuda"; fail=1; }

step "checkpoint and restart on the GPU"
# GPU N/2 + restart = GPU N bit for bit (every workload), SIGINT on the GPU
# path, and a CPU checkpoint restarted on the GPU (tests/e2e/restart.py).
if python3 -c "import h5py, numpy" 2>/dev/null; then
  for mode in heat_explicit heat_cn stencil laplace_jacobi laplace_cg interrupt; do
    check env GF_RESTART_DEVICE=cuda python3 tests/e2e/restart.py "$(command -v gridforge)" $mode "$OUT/restart/$mode"
  done
  check python3 tests/e2e/restart.py "$(command -v gridforge)" cpu_to_gpu "$OUT/restart/cpu_to_gpu"
else
  echo "FAILED: restart checks need python3 with h5py and numpy"; fail=1
fi

fi
if [ "$PART" = timings ] || [ "$PART" = all ]; then

step "512^3 explicit heat, float32 and float64 (timing.json)"
for p in float32 float64; do
  check gridforge run cases/heat3d_hotspot.yaml --device cuda --out "/tmp/gf_t/heat512_$p" --quiet \
    "grid.dims=[512,512,512]" precision=$p heat.steps=400 output.every=0 "output.formats=[hdf5]"
  python3 -c "import json,sys; t=json.load(open('/tmp/gf_t/heat512_$p/timing.json')); print('gridforge heat3d 512^3 $p: median %.4f ms/step, %.1f GB/s effective, compute %.3f s' % (t['per_step_ms']['median'], t['effective_GBps'], t['phases_s']['compute']))" | tee -a "$OUT/summary.txt"
done

step "512^3 stencils, float32: star7, box27, the radius-3 custom stencil"
for st in star7 box27 custom; do
  if [ $st = custom ]; then c=cases/stencil3d_custom.yaml; extra=(); else c=cases/stencil3d_box27.yaml; extra=(stencil.preset=$st stencil.coeff=1e-7); fi
  check gridforge run $c --device cuda --out "/tmp/gf_t/st512_$st" --quiet "grid.dims=[512,512,512]" precision=float32 \
    stencil.steps=100 output.every=0 "output.formats=[hdf5]" "${extra[@]}"
  python3 -c "import json; t=json.load(open('/tmp/gf_t/st512_$st/timing.json')); print('gridforge stencil $st 512^3 float32: median %.4f ms/step, %.1f GB/s effective' % (t['per_step_ms']['median'], t['effective_GBps']))" | tee -a "$OUT/summary.txt"
done

step "512^3 Poisson by FFT (cuFFT), float32 and float64"
for p in float32 float64; do
  check gridforge run cases/poisson3d_periodic.yaml --device cuda --out "/tmp/gf_t/fft512_$p" --quiet \
    "grid.dims=[512,512,512]" precision=$p output.every=0 "output.formats=[hdf5]"
  python3 -c "import json; t=json.load(open('/tmp/gf_t/fft512_$p/timing.json')); print('gridforge fft poisson 512^3 $p: solve %.2f ms (compute), spectral residual %.2e, setup %.2f s' % (1e3*t['phases_s']['compute'], t['residual'], t['phases_s']['setup']))" | tee -a "$OUT/summary.txt"
done

step "Jacobi 16384^2 float32: peers (copy bandwidth), then gridforge's sweep"
python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem jacobi2d --size 16384 --precision float32 --json "$OUT/peers_jacobi2d.json" 2>&1 | tee -a "$OUT/summary.txt"
# 400 sweeps, a residual every 200 (about 0.5 % more traffic); it stops at
# max_iters on purpose (exit 1), so the exit code is not checked here.
gridforge run cases/laplace2d_plate.yaml --device cuda --out "/tmp/gf_t/jacobi16k" --quiet \
  "grid.dims=[16384,16384]" precision=float32 laplace.max_iters=400 laplace.check_every=200 \
  output.every=0 "output.formats=[hdf5]" || true
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys, os
out = sys.argv[1]
t = json.load(open(os.path.join("/tmp/gf_t", "jacobi16k", "timing.json")))
copy = None
try:
    copy = json.load(open(os.path.join(out, "peers_jacobi2d.json"))).get("copy_GBps")
except Exception:
    pass
ms = t["per_step_ms"]["median"]
gbps = 2 * 16384 * 16384 * 4 / (ms / 1e3) / 1e9  # read u, write v (f = 0 is a constant)
frac = f"{gbps / copy:.2f} of copy bandwidth {copy:.0f} GB/s" if copy else "copy bandwidth unknown"
print(f"gridforge jacobi 16384^2 float32: median {ms:.4f} ms/sweep, {gbps:.1f} GB/s effective, {frac} ({t['iterations']} sweeps, {t['reason']})")
PY

step "peers (same call)"
for p in float32 float64; do
  python3 "$DEVICEPACK_EXTRA/shared/bench/peers.py" --problem heat3d --size 512 --precision $p --json "$OUT/peers_$p.json" 2>&1 | tee -a "$OUT/summary.txt"
done

fi

if [ "$PART" = mpi ]; then
  # shellcheck source=tests/gpu/mpi_part.sh
  source tests/gpu/mpi_part.sh
fi

echo; echo "=== summary"; cat "$OUT/summary.txt" 2>/dev/null
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
