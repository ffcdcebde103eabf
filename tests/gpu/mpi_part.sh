# Part "mpi" of tests/gpu/run_on_gpu.sh (issue 8), sourced by it (step,
# check, fail and OUT come from there). On a machine with 2 or more GPUs
# (nvidia-h200-x2 or -x4), about 7 minutes:
#   bash .devicepack/run.sh bash tests/gpu/run_on_gpu.sh "$OUT" mpi
# 1. the machine's MPI: mpirun --version, CUDA support, which libmpi the
#    bundled gridforge loads; the bundled libmpi (Debian's Open MPI) is tried
#    first under the machine's mpirun, the machine's own libmpi second;
# 2. N ranks on N GPUs against one GPU, with tests/e2e/mpi.py on --device
#    cuda: bit for bit where the CPU is (any field that is not is reported
#    with its difference, and passes within 1e-6 relative); mode overlap
#    (the halo exchange overlapped with the interior update, the default, and
#    GRIDFORGE_HALO_OVERLAP=0) with the default halos, with
#    GRIDFORGE_HALO=mpi, and with 2 ranks on ONE GPU (CUDA_VISIBLE_DEVICES=0:
#    the ranks share it, so the halos go through MPI); the split steps and
#    the halo stream themselves ([gpu][step_parts] tests);
# 3. strong and weak scaling at 1024^3 float32 of explicit heat (7 points,
#    z periodic) and Jacobi (3D, 200 sweeps): T1, TN per step, T1/(N·TN)
#    (weak: T1/TN with N times the points on N GPUs), into summary.txt, with
#    the default halos (NCCL when libnccl.so.2 loads: it is looked for first
#    and put on LD_LIBRARY_PATH) and, for comparison, with GRIDFORGE_HALO=mpi;
#    the strong runs again with GRIDFORGE_HALO_OVERLAP=0 (both transports), so
#    that summary.txt sets the overlapped exchange against the one after
#    each step.

ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
GF_BIN=$(command -v gridforge)
# NCCL, where the machine has it (the Python packages bring one): on the
# library path, so that the default halos (GRIDFORGE_HALO=auto) can take it
nccl_lib=$( (ls /usr/local/cuda*/lib*/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2 2>/dev/null
  python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null) | head -1)
if [ -n "$nccl_lib" ] && [ -f "$nccl_lib" ]; then
  echo "libnccl: $nccl_lib"
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$(dirname "$nccl_lib")"
else
  echo "no libnccl.so.2 on this machine: the halos go through MPI" | tee -a "$OUT/summary.txt"
fi

# The overlapped halo exchange is the default on both paths (set here all
# the same; the "noov" runs and mpi.py's GRIDFORGE_HALO_OVERLAP=0 layouts set
# 0 themselves).
export GRIDFORGE_HALO_OVERLAP=${GRIDFORGE_HALO_OVERLAP:-1}

step "MPI: the machine's MPI, $ngpu GPUs"
command -v mpirun || { echo "FAILED: no mpirun on this machine"; fail=1; }
mpirun --version 2>&1 | head -2
ompi_info 2>/dev/null | grep -i cuda | head -5 || true
ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" || true
echo "gridforge's MPI and HDF5 libraries:"
ldd "$GF_BIN" | grep -Ei "libmpi|hdf5|pmix|open-pal|open-rte|hwloc|ucx|ucp" || true

MPIRUN=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
mpi_smoke() {
  timeout 120 "${MPIRUN[@]}" -np 2 "$GF_BIN" run cases/heat2d_plate.yaml --device cuda --quiet \
    --out "$OUT/mpi_smoke" "grid.dims=[33,29]" heat.t_end=0.001 > "$OUT/mpi_smoke.log" 2>&1
}
if mpi_smoke; then
  echo "mpi: 2 ranks start with the bundled libmpi under this mpirun"
else
  echo "mpi: the bundled libmpi failed under this mpirun: $(tail -5 "$OUT/mpi_smoke.log" | tr '\n' ' ')"
  echo "mpi: trying the machine's libmpi (the bundle's MPI libraries left out)"
  shadow=/tmp/gf_mpilib; rm -rf "$shadow"; mkdir -p "$shadow"
  for f in /tmp/devicepack/lib/*; do
    case $(basename "$f") in
      libmpi*|libopen-rte*|libopen-pal*|libpmix*|libhwloc*|libevent*|libfabric*|libucp*|libucs*|libuct*|libucm*) ;;
      *) ln -sf "$f" "$shadow/" ;;
    esac
  done
  export LD_LIBRARY_PATH="$shadow:/usr/lib/x86_64-linux-gnu/openmpi/lib:${LD_LIBRARY_PATH#/tmp/devicepack/lib:}"
  ldd "$GF_BIN" | grep -Ei "libmpi|hdf5" || true
  if mpi_smoke; then echo "mpi: 2 ranks start with the machine's libmpi"
  else echo "FAILED: mpirun -np 2 gridforge: $(tail -5 "$OUT/mpi_smoke.log" | tr '\n' ' ')"; fail=1; fi
fi
grep -h "^mpi:" "$OUT/mpi_smoke.log" 2>/dev/null | head -1
# what the run says about the exchange (NCCL, CUDA-aware or staged)
timeout 120 "${MPIRUN[@]}" -np 2 "$GF_BIN" run cases/heat2d_plate.yaml --device cuda \
  --out "$OUT/mpi_smoke2" "grid.dims=[33,29]" heat.t_end=0.001 2>&1 | grep -E "^mpi:|device" | head -3 | tee -a "$OUT/summary.txt"

step "the GPU's split steps and halo stream ([gpu][step_parts])"
check gridforge_tests "[gpu][step_parts]" > "$OUT/step_parts.log" 2>&1
tail -2 "$OUT/step_parts.log"
echo "[gpu][step_parts] tests: $(tail -1 "$OUT/step_parts.log")" >> "$OUT/summary.txt"

step "MPI on the GPU: N ranks against one GPU (tests/e2e/mpi.py, --device cuda), default halos, then GRIDFORGE_HALO=mpi, then 2 ranks on one GPU"
# (layouts with more ranks than GPUs share GPUs, and so take MPI halos;
# gpu1: every rank on GPU 0, layouts of 2 ranks only; mpi:overlap, 2 ranks
# only too: the layouts of more ranks took MPI in the first overlap run)
for mode in heat2d heat3d_periodic stencil_box27 stencil_radius2 jacobi sor cg heat_implicit multigrid pde restart overlap mpi:heat3d_periodic mpi:jacobi mpi:overlap gpu1:overlap gpu1:multigrid; do
  halo=auto; gpus=; maxnp=
  case $mode in mpi:*) halo=mpi; mode=${mode#mpi:};; gpu1:*) gpus=0; maxnp=2; mode=${mode#gpu1:};; esac
  [ "$mode:$halo" = overlap:mpi ] && maxnp=2
  tag=${halo}${gpus:+_gpu1}
  env GRIDFORGE_HALO=$halo ${gpus:+CUDA_VISIBLE_DEVICES=$gpus} ${maxnp:+GF_MPI_MAXNP=$maxnp} GF_MPI_DEVICE=cuda GF_MPI_RTOL=1e-6 \
    "GF_MPIRUN=mpirun -x LD_LIBRARY_PATH -x PATH -x GRIDFORGE_HALO -x GRIDFORGE_HALO_OVERLAP" \
    python3 tests/e2e/mpi.py "$GF_BIN" $mode "$OUT/mpi_$tag/$mode" > "$OUT/mpi_${tag}_$mode.log" 2>&1
  rc=$?
  tail -4 "$OUT/mpi_${tag}_$mode.log"
  [ $rc = 0 ] || { echo "FAILED: mpi.py $mode on the GPU, GRIDFORGE_HALO=$halo${gpus:+, one GPU}"; fail=1; }
  echo "mpi.py $mode on the GPU, GRIDFORGE_HALO=$halo${gpus:+, 2 ranks on one GPU}: $([ $rc = 0 ] && echo pass || echo FAIL)$(grep -c "NOT bit for bit" "$OUT/mpi_${tag}_$mode.log" | sed 's/^0$//; s/.\+/, & fields not bit for bit/')" >> "$OUT/summary.txt"
done
# how many of the overlap mode's layouts rank 0's log said overlapped
for tag in auto mpi auto_gpu1; do
  echo "mpi.py overlap ($tag): $(grep -c "(overlap the halo exchange)" "$OUT/mpi_${tag}_overlap.log") layouts overlapped, $(grep -c "GRIDFORGE_HALO_OVERLAP=0)" "$OUT/mpi_${tag}_overlap.log") after each step, bit for bit against one GPU" | tee -a "$OUT/summary.txt"
done

step "MPI scaling at 1024^3 float32 (heat3d explicit, Jacobi): 1 to N GPUs"
mkdir -p /tmp/gf_mpi
ns=(1 2); [ "$ngpu" -ge 4 ] && ns=(1 2 4)
# ms per step: the slowest rank's compute time (timing.json) over the steps.
per_step() {
  python3 -c "import json,sys; t=json.load(open(sys.argv[1]+'/timing.json')); print('%.4f' % (1e3*t['phases_s']['compute']/max(t['steps'],1)))" "$1" 2>/dev/null
}
scale_run() {  # workload np nz out [extra env...]
  local w=$1 np=$2 nz=$3 out=$4; shift 4
  local launch=(); [ "$np" -gt 1 ] && launch=("${MPIRUN[@]}" -x GRIDFORGE_HALO -x GRIDFORGE_CUDA_AWARE -x GRIDFORGE_HALO_OVERLAP -np "$np")
  rm -rf "$out"
  if [ "$w" = heat ]; then
    env "$@" "${launch[@]}" "$GF_BIN" run cases/heat3d_hotspot.yaml --device cuda --out "$out" \
      "grid.dims=[1024,1024,$nz]" precision=float32 "initial={value: 1}" heat.steps=200 \
      output.every=0 output.check_every=100 output.checkpoint_every=0 "output.formats=[hdf5]" \
      > "$out.log" 2>&1
  else
    env "$@" "${launch[@]}" "$GF_BIN" run cases/laplace3d_box.yaml --device cuda --out "$out" \
      "grid.dims=[1024,1024,$nz]" precision=float32 laplace.method=jacobi laplace.max_iters=200 \
      laplace.check_every=100 laplace.tolerance=1e-30 output.every=0 "output.formats=[hdf5]" \
      > "$out.log" 2>&1
  fi
  [ -f "$out/timing.json" ] || { echo "FAILED: $w on $np GPUs: $(tail -3 "$out.log" | tr '\n' ' ')"; fail=1; }
  rm -f "$out/fields.h5"  # GiBs; the timing is what is kept
}
for w in heat jacobi; do
  scale_run $w 1 1024 /tmp/gf_mpi/${w}_1
  t1=$(per_step /tmp/gf_mpi/${w}_1)
  for n in "${ns[@]}"; do
    [ "$n" = 1 ] && continue
    scale_run $w "$n" 1024 /tmp/gf_mpi/${w}_strong_$n
    scale_run $w "$n" $((1024 * n)) /tmp/gf_mpi/${w}_weak_$n
    ts=$(per_step /tmp/gf_mpi/${w}_strong_$n); tw=$(per_step /tmp/gf_mpi/${w}_weak_$n)
    python3 - "$w" "$n" "$t1" "$ts" "$tw" <<'PY' | tee -a "$OUT/summary.txt"
import sys
w, n, t1, ts, tw = sys.argv[1], int(sys.argv[2]), *(float(x) if x else float("nan") for x in sys.argv[3:])
print(f"mpi {w} 1024^3 float32: T1 {t1:.4f} ms/step; strong {n} GPUs: TN {ts:.4f} ms/step, "
      f"efficiency T1/(N*TN) = {t1 / (n * ts):.3f}; weak 1024^2x{1024 * n} on {n} GPUs: "
      f"TN {tw:.4f} ms/step, efficiency T1/TN = {t1 / tw:.3f}")
PY
  done
done
# The strong runs with MPI halos (staged through the host unless the MPI is
# CUDA-aware), and both transports with the exchange after each whole step
# (GRIDFORGE_HALO_OVERLAP=0) against the overlapped default, for comparison.
strong_row() {  # workload n label out
  local t1 ts
  t1=$(per_step /tmp/gf_mpi/$1_1); ts=$(per_step "$4")
  python3 -c "import sys; t1, ts, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]); print(f'mpi {sys.argv[4]} 1024^3 float32 strong {n} GPUs, {sys.argv[5]}: TN {ts:.4f} ms/step, efficiency T1/(N*TN) = {t1 / (n * ts):.3f}')" "$t1" "${ts:-nan}" "$2" "$1" "$3" | tee -a "$OUT/summary.txt"
}
for w in heat jacobi; do
  for n in "${ns[@]}"; do
    [ "$n" = 1 ] && continue
    scale_run $w "$n" 1024 /tmp/gf_mpi/${w}_strong_${n}_noov GRIDFORGE_HALO_OVERLAP=0
    strong_row $w "$n" "default halos, GRIDFORGE_HALO_OVERLAP=0 (exchange after each step)" /tmp/gf_mpi/${w}_strong_${n}_noov
    scale_run $w "$n" 1024 /tmp/gf_mpi/${w}_strong_${n}_mpi GRIDFORGE_HALO=mpi
    strong_row $w "$n" "GRIDFORGE_HALO=mpi (overlapped)" /tmp/gf_mpi/${w}_strong_${n}_mpi
    scale_run $w "$n" 1024 /tmp/gf_mpi/${w}_strong_${n}_mpi_noov GRIDFORGE_HALO=mpi GRIDFORGE_HALO_OVERLAP=0
    strong_row $w "$n" "GRIDFORGE_HALO=mpi, GRIDFORGE_HALO_OVERLAP=0" /tmp/gf_mpi/${w}_strong_${n}_mpi_noov
  done
done
for r in heat_strong_2 heat_strong_2_noov heat_strong_2_mpi heat_strong_2_mpi_noov jacobi_strong_2; do
  grep -h "^mpi:" /tmp/gf_mpi/$r.log | sed "s/^/$r: /" | tee -a "$OUT/summary.txt"
done
