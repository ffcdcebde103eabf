#!/usr/bin/env bash
# Everything that needs the GPU, in one command on the GPU machine (see
# ../shared/GPU.md): run from the repo root through .devicepack/run.sh, e.g.
#   bash .devicepack/run.sh bash tests/gpu/run_on_gpu.sh "$OUT"
# It prints a short summary last; full logs go to OUT.
set -uo pipefail
OUT=${1:-/tmp/gf_gpu}
# Parts, comma-separated (a device call is 10 minutes at most; on an H100 the
# checks take about that long, so split them over two calls there):
#   tests validate memcheck sanitize failures restart timings ray mpi
#   mpi: on a machine of 2 or more GPUs (nvidia-h200-x2 or -x4), the MPI runs
#   of issue 8 (tests/gpu/mpi_part.sh); not part of "all"
#   checks = every part but timings; all = every part
PART=${2:-all}
case ",$PART," in *,all,*) PART="$PART,checks,timings";; esac
case ",$PART," in *,checks,*) PART="$PART,tests,validate,memcheck,sanitize,failures,restart";; esac
want() { case ",$PART," in *",$1,"*) return 0;; *) return 1;; esac; }
mkdir -p "$OUT"
fail=0
step() { echo; echo "=== $*"; }
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }

step info
check gridforge info

if want ray; then
# The raymarch workload and in-situ frames (issue 7), on their own: about 3
# minutes on an H100/H200. Its summary lines go to $OUT/summary.txt as well.
: > "$OUT/summary.txt"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }

step "[gpu][raymarch_gpu] tests"
check gridforge_tests "[gpu][raymarch_gpu]" --durations yes

step "validate the raymarch cases and the in-situ frames, float64 and float32"
for c in raymarch_sdf_scene raymarch_cloud heat3d_movie; do
  for p in float64 float32; do
    v=$OUT/validate_ray/${c}_$p
    check gridforge validate cases/$c.yaml precision=$p output.dir=$v
    python3 tests/gpu/validate_summary.py "$v/validation.json" "$c $p" | tee -a "$OUT/summary.txt"
  done
done

step "compute-sanitizer over the raymarch tests and the in-situ path"
for tool in memcheck racecheck initcheck synccheck; do
  extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
  check compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 gridforge_tests "[gpu][raymarch_gpu]" > "$OUT/ray_$tool.log" 2>&1
  say "$tool [gpu][raymarch_gpu]: $(tail -1 "$OUT/ray_$tool.log")"
done
check compute-sanitizer --tool memcheck --error-exitcode 9 gridforge run cases/heat3d_movie.yaml --device cuda --out "$OUT/san_movie" --quiet > "$OUT/ray_memcheck_movie.log" 2>&1
say "memcheck run heat3d_movie (in-situ frames): $(tail -1 "$OUT/ray_memcheck_movie.log")"
check compute-sanitizer --tool initcheck --error-exitcode 9 gridforge run cases/raymarch_sdf_scene.yaml --device cuda --out "$OUT/san_sdf" --quiet > "$OUT/ray_initcheck_sdf.log" 2>&1
say "initcheck run raymarch_sdf_scene: $(tail -1 "$OUT/ray_initcheck_sdf.log")"

step "timings: 1920x1080 frames of a 512^3 expression volume (the cloud), float32"
big=("grid.dims=[512,512,512]" raymarch.camera.width=1920 raymarch.camera.height=1080 "output.formats=[hdf5]")
for mode in emission-absorption isosurface; do
  check gridforge run cases/raymarch_cloud.yaml --device cuda --out "/tmp/gf_t/ray512_$mode" --quiet \
    "${big[@]}" raymarch.mode=$mode raymarch.isovalue=0.3
  python3 -c "import json; t=json.load(open('/tmp/gf_t/ray512_$mode/timing.json')); print('gridforge raymarch 512^3 float32 1920x1080 $mode: %.2f ms per frame, %.3g rays/s (step 0.5 cell; volume upload %.3f s, setup %.2f s)' % (t['ms_per_frame'], t['rays_per_s'], t['phases_s']['upload'], t['phases_s']['setup']))" | tee -a "$OUT/summary.txt"
done
cp /tmp/gf_t/ray512_emission-absorption/raymarch_cloud.png "$OUT/cloud512_ea.png" 2>/dev/null
cp /tmp/gf_t/ray512_isosurface/raymarch_cloud.png "$OUT/cloud512_iso.png" 2>/dev/null

step "timings: what an in-situ frame adds to a heat run (256^3 float32, 400 steps, a 1280x720 frame every 50)"
sed '/^render:/,/^$/d' cases/heat3d_movie.yaml > "$OUT/heat3d_norender.yaml"
heat=("grid.dims=[256,256,256]" heat.steps=400 output.every=0 "output.formats=[hdf5]")
check gridforge run "$OUT/heat3d_norender.yaml" --device cuda --out /tmp/gf_t/movie_off --quiet "${heat[@]}"
check gridforge run cases/heat3d_movie.yaml --device cuda --out /tmp/gf_t/movie_on --quiet "${heat[@]}" \
  render.every=50 render.camera.width=1280 render.camera.height=720
python3 - <<'PY' | tee -a "$OUT/summary.txt"
import json
off = json.load(open("/tmp/gf_t/movie_off/timing.json"))
on = json.load(open("/tmp/gf_t/movie_on/timing.json"))
r = on["render"]
print(f"gridforge heat 256^3 float32 400 steps: compute {off['phases_s']['compute']:.3f} s, total {off['phases_s']['total']:.3f} s without frames; "
      f"with {r['frames']} in-situ 1280x720 frames: {r['ms_per_frame']:.2f} ms render per frame, {r['total_s']:.3f} s for the frames "
      f"(render + PNG), total {on['phases_s']['total']:.3f} s (+{100*(on['phases_s']['total']/off['phases_s']['total']-1):.0f} %)")
PY
cp /tmp/gf_t/movie_on/frames/heat3d_movie_000200.png "$OUT/movie256_step200.png" 2>/dev/null

fi

if want tests; then
step "[gpu] tests"
check gridforge_tests "[gpu]" --durations yes
fi

if want validate; then
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

fi

if want memcheck; then
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
fi

if want sanitize; then
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

fi

if want failures; then
step "divergence and memory on the GPU path"
# diverge.yaml doubles the field each step: Inf at step 1024, caught at 1030
gridforge run tests/data/cases/diverge.yaml --device cuda --out "$OUT/diverge" --quiet "grid.dims=[1000]" > "$OUT/diverge.log" 2>&1
rc=$?; echo "diverge on cuda: exit $rc: $(tail -1 "$OUT/diverge.log")"
[ $rc = 1 ] && grep -q "1030" "$OUT/diverge.log" || { echo "FAILED: divergence on cuda"; fail=1; }
gridforge run cases/heat3d_hotspot.yaml --device cuda --dry-run "grid.dims=[6000,6000,6000]" > "$OUT/oom.log" 2>&1
rc=$?; echo "6000^3 dry run on cuda: exit $rc: $(grep -i "needs" "$OUT/oom.log" | head -2 | tr '\n' ' ')"
[ $rc = 3 ] || { echo "FAILED: memory check on cuda"; fail=1; }

fi

if want restart; then
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

if want timings; then

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

if want mpi; then
  # shellcheck source=tests/gpu/mpi_part.sh
  source tests/gpu/mpi_part.sh
fi

echo; echo "=== summary"; cat "$OUT/summary.txt" 2>/dev/null
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
