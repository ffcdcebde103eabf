#!/usr/bin/env bash
# Output overlap and CUDA graphs on the GPU machine (issue 5, item 5): the
# [gpu][overlap] tests, compute-sanitizer over them, 512^3 heat runs with and
# without outputs, written in turn (GRIDFORGE_SYNC_OUTPUT=1) and by the
# background writer, and bench rows of small grids with and without CUDA
# graphs (GRIDFORGE_CUDA_GRAPHS=0). About 6 minutes on an H100. Run from the
# repo root through .devicepack/run.sh:  bash tests/gpu/perf_overlap.sh OUT
set -uo pipefail
OUT=${1:-/tmp/gf_overlap}
RUNS=${RUNS:-/tmp/gf_overlap_runs}  # 512^3 outputs: a local disk, not $OUT
mkdir -p "$OUT" "$RUNS"
fail=0
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

check gridforge_tests "[gpu][overlap]" --durations yes | tail -12
# SAN_TOOLS: the compute-sanitizer tools to run (racecheck over every test
# takes more than 5 minutes on an H100); each is cut at SAN_TIMEOUT seconds
for tool in ${SAN_TOOLS:-racecheck memcheck synccheck}; do
  check timeout "${SAN_TIMEOUT:-600}" compute-sanitizer --tool $tool --error-exitcode 9 gridforge_tests "[gpu][overlap]" \
    > "$OUT/overlap_$tool.log" 2>&1
  say "$tool [gpu][overlap]: $(tail -1 "$OUT/overlap_$tool.log")"
done

# 512^3 float32 heat: none / every 100 steps, in turn / background.
row() {  # NAME FORMATS STEPS EVERY SYNC
  local name=$1 fmt=$2 steps=$3 every=$4 sync=$5 dir=$RUNS/$1
  rm -rf "$dir"
  if [ "$sync" = 1 ]; then export GRIDFORGE_SYNC_OUTPUT=1; else unset GRIDFORGE_SYNC_OUTPUT; fi
  check gridforge run cases/heat3d_hotspot.yaml --device cuda --quiet --out "$dir" \
    "grid.dims=[512,512,512]" precision=float32 heat.steps=$steps output.every=$every \
    output.checkpoint_every=0 "output.formats=$fmt"
  unset GRIDFORGE_SYNC_OUTPUT
  python3 - "$dir/timing.json" "$name" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
t = json.load(open(sys.argv[1])); p = t["phases_s"]; w = t.get("output_writer", {})
print(f"{sys.argv[2]:28s} total {p['total']:7.2f} s  compute {p['compute']:6.3f}  download "
      f"{p['download']:6.3f}  output {p['output']:7.2f}  writer busy {w.get('writer_busy_s', 0):7.2f}"
      f"  waited {w.get('waited_s', 0):7.2f}  background {w.get('background')}")
PY
  rm -rf "$dir"
}
say "512^3 float32 heat3d_hotspot, 1000 steps, [hdf5]"
row none_hdf5 "[hdf5]" 1000 0 0
row every100_hdf5_in_turn "[hdf5]" 1000 100 1
row every100_hdf5_background "[hdf5]" 1000 100 0
row every1000_hdf5_background "[hdf5]" 1000 1000 0
if [ "${SKIP_VTK:-0}" != 1 ]; then  # SKIP_VTK=1: the VTK rows left out
say "512^3 float32 heat3d_hotspot, 300 steps, [vtk,hdf5] (the default output.compression)"
row none_vtk "[vtk,hdf5]" 300 0 0
row every100_vtk_in_turn "[vtk,hdf5]" 300 100 1
row every100_vtk_background "[vtk,hdf5]" 300 100 0
fi

# CUDA graphs: ms/step on small grids, graphs on and off.
for g in 1 0; do
  for dims in 3 2; do
    sizes=32,48,64,96,128,192; [ $dims = 2 ] && sizes=128,256,512,1024,2048
    GRIDFORGE_CUDA_GRAPHS=$g check gridforge bench --workload heat,stencil,laplace --dims $dims \
      --sizes $sizes --precision float32 --devices cuda --out "$OUT/bench_graphs${g}_${dims}d" \
      > "$OUT/bench_graphs${g}_${dims}d.txt" 2>&1
  done
done
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
def rows(g, d):
    j = json.load(open(os.path.join(out, f"bench_graphs{g}_{d}d", "bench.json")))
    r = j["rows"] if isinstance(j, dict) and "rows" in j else j
    return {(x["workload"], x["size"]): x["ms_per_step"] for x in r if x.get("device") != "cpu"}
for d in (3, 2):
    try:
        on, off = rows(1, d), rows(0, d)
    except Exception as e:
        print(f"bench {d}D: {e}"); continue
    for k in sorted(on):
        if k in off:
            print(f"graphs {d}D {k[0]:8s} {str(k[1]):>6s}: {off[k]:.4f} ms/step plain, {on[k]:.4f} with graphs ({off[k] / on[k]:.2f}x)")
PY
echo "overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
