#!/usr/bin/env bash
# Issue 26 (ray marching) on one GPU, in one command, from the repo root:
#   bash tests/gpu/rm_gpu.sh BENCH_DIR [OUT] [PARTS]
# BENCH_DIR: the folder holding raymarch_peer.py (the team's shared/bench, e.g.
# ../shared/bench); OUT: logs and results (default /tmp/rm_gpu); PARTS: a comma
# list of tests, validate, bench, sweep, peer, insitu (default all; about 6-8
# minutes on an H100 in all, split over two calls if need be: e.g.
# tests,validate then bench,sweep,peer,insitu).
# gridforge and gridforge_tests are taken from PATH. The summary is printed last
# and kept in OUT/summary.txt.
set -uo pipefail
BENCH=${1:?usage: bash tests/gpu/rm_gpu.sh BENCH_DIR [OUT] [PARTS]}
OUT=${2:-/tmp/rm_gpu}
PART=${3:-all}
case ",$PART," in *,all,*) PART="tests,validate,bench,sweep,peer,insitu";; esac
want() { case ",$PART," in *",$1,"*) return 0;; *) return 1;; esac; }
mkdir -p "$OUT"
: > "$OUT/summary.txt"
fail=0
step() { echo; echo "=== $*"; }
check() { "$@" || { echo "FAILED: $*" | tee -a "$OUT/summary.txt"; fail=1; }; }
say() { echo "$*" | tee -a "$OUT/summary.txt"; }

step info
gridforge info | head -20
say "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# validate's summary line: pass/fail, the lowest PSNR and the most pixels off
summarize() {  # summarize VALIDATION_JSON LABEL
  python3 tests/gpu/validate_summary.py "$1" "$2" | tee -a "$OUT/summary.txt"
}

if want tests; then
step "[gpu][raymarch_gpu] tests (skipping on/off bit for bit, against the CPU at odd sizes, tiles, the texture sampler's PSNR as warnings)"
gridforge_tests "[gpu][raymarch_gpu]" --durations yes > "$OUT/tests.log" 2>&1 || { echo "FAILED: gridforge_tests [gpu][raymarch_gpu]" | tee -a "$OUT/summary.txt"; fail=1; }
tail -40 "$OUT/tests.log"
grep -h "texture sampler, mode" "$OUT/tests.log" | sed 's/^ *//' | tee -a "$OUT/summary.txt"
say "tests: $(grep -E '^(All tests passed|test cases:)' "$OUT/tests.log" | tail -1)"
fi

if want validate; then
step "validate the raymarch cases at odd sizes, software sampler (default) and texture sampler"
odd=("grid.dims=[97,83,101]" raymarch.camera.width=487 raymarch.camera.height=263)
big=("grid.dims=[255,257,253]" raymarch.camera.width=1283 raymarch.camera.height=721)
for tex in 0 1; do
  for mode in emission-absorption mip isosurface; do
    for p in float32 float64; do
      [ $tex = 1 ] && [ $p = float64 ] && continue  # the texture takes float32 volumes only
      v=$OUT/validate/cloud_odd_${mode}_${p}_tex$tex
      GRIDFORGE_RM_TEXTURE=$tex gridforge validate cases/raymarch_cloud.yaml --quiet precision=$p \
        "${odd[@]}" raymarch.mode=$mode raymarch.isovalue=0.3 output.dir=$v > /dev/null 2>&1
      summarize "$v/validation.json" "cloud 97x83x101 487x263 $mode $p texture=$tex"
    done
    v=$OUT/validate/cloud_big_${mode}_tex$tex
    GRIDFORGE_RM_TEXTURE=$tex gridforge validate cases/raymarch_cloud.yaml --quiet precision=float32 \
      "${big[@]}" raymarch.mode=$mode raymarch.isovalue=0.3 output.dir=$v > /dev/null 2>&1
    summarize "$v/validation.json" "cloud 255x257x253 1283x721 $mode float32 texture=$tex"
  done
  for p in float32 float64; do
    [ $tex = 1 ] && [ $p = float64 ] && continue
    v=$OUT/validate/sdf_odd_${p}_tex$tex
    GRIDFORGE_RM_TEXTURE=$tex gridforge validate cases/raymarch_sdf_scene.yaml --quiet precision=$p \
      "grid.dims=[95,101,87]" raymarch.camera.width=481 raymarch.camera.height=271 output.dir=$v > /dev/null 2>&1
    summarize "$v/validation.json" "sdf_scene 95x101x87 481x271 $p texture=$tex"
    v=$OUT/validate/cloud_iso_low_${p}_tex$tex  # a low isovalue: bricks on both sides of it
    GRIDFORGE_RM_TEXTURE=$tex gridforge validate cases/raymarch_cloud.yaml --quiet precision=$p \
      "${odd[@]}" raymarch.mode=isosurface raymarch.isovalue=0.05 \
      "raymarch.transfer={colormap: coolwarm, range: [0, 0.5]}" output.dir=$v > /dev/null 2>&1
    summarize "$v/validation.json" "cloud 97x83x101 487x263 isosurface 0.05 range [0,0.5] $p texture=$tex"
  done
  v=$OUT/validate/movie_tex$tex
  GRIDFORGE_RM_TEXTURE=$tex gridforge validate cases/heat3d_movie.yaml --quiet precision=float32 \
    "grid.dims=[49,47,51]" render.camera.width=333 render.camera.height=241 output.dir=$v > /dev/null 2>&1
  summarize "$v/validation.json" "heat3d_movie in-situ frames 49x47x51 333x241 float32 texture=$tex"
done
fi

# bench rows: a table each; the raymarch table is the last lines of stdout
bench_rows() {  # bench_rows LABEL DIR ENV... -- ARGS...
  local label=$1 dir=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  check env "${envs[@]}" gridforge bench --workload raymarch --dims 3 --device cuda --out "$dir" "$@" \
    > "$dir.table" 2> "$dir.log"
  say "--- $label"
  sed -n '/ms\/frame/,$p' "$dir.table" | tee -a "$OUT/summary.txt"
}

if want bench; then
step "bench: 512^3 and 1024^3 at 1920x1080, every mode: skipping (default), the texture sampler, no skipping; brick and tile variants at 512^3"
mkdir -p "$OUT/bench"
common=(--sizes 512,1024 --images 1920x1080 --repeat 5)
bench_rows "the defaults (bricks and sampler by the volume)" "$OUT/bench/default" GF_NONE=1 -- "${common[@]}"
bench_rows "software trilinear, skipping" "$OUT/bench/sw" GRIDFORGE_RM_SKIP=1 GRIDFORGE_RM_TEXTURE=0 -- "${common[@]}"
bench_rows "texture sampler, skipping" "$OUT/bench/tex" GRIDFORGE_RM_SKIP=1 GRIDFORGE_RM_TEXTURE=1 -- "${common[@]}"
bench_rows "software trilinear, no skipping (the plain march)" "$OUT/bench/noskip" GRIDFORGE_RM_SKIP=0 -- "${common[@]}"
bench_rows "texture sampler, no skipping" "$OUT/bench/tex_noskip" GRIDFORGE_RM_SKIP=0 GRIDFORGE_RM_TEXTURE=1 -- "${common[@]}"
for b in 4 16 32; do
  bench_rows "software, bricks of ${b}^3 cells, 512^3" "$OUT/bench/brick$b" GRIDFORGE_RM_BRICK=$b -- \
    --sizes 512 --images 1920x1080 --repeat 5
done
for t in 16x8 32x4 16x16; do
  bench_rows "software, tiles of $t pixels, 512^3" "$OUT/bench/tile$t" GRIDFORGE_RM_TILE=$t -- \
    --sizes 512 --images 1920x1080 --repeat 5
done
fi

if want sweep; then
step "bench sweep (issue 26 item 4): 128^3..1024^3 x 1280x720, 1920x1080, 3840x2160 x every mode (the defaults)"
mkdir -p "$OUT/bench"
bench_rows "sweep, the defaults" "$OUT/bench/sweep" GF_NONE=1 -- \
  --sizes 128,256,512,1024 --images 1280x720,1920x1080,3840x2160 --repeat 5
fi

if want peer; then
step "the CuPy peer ($BENCH/raymarch_peer.py): 512^3 and 1024^3, 1920x1080, step 0.5, EA and MIP"
for n in 512 1024; do
  for m in ea mip; do
    r=$(python3 "$BENCH/raymarch_peer.py" --size $n --width 1920 --height 1080 --step 0.5 --mode $m 2>&1 | tail -1)
    say "peer: $r"
  done
done
fi

if want insitu; then
step "in-situ frames: heat 256^3 float32, 400 steps, a 1280x720 frame every 50, against the same run without frames"
mkdir -p "$OUT/insitu"
sed '/^render:/,/^$/d' cases/heat3d_movie.yaml > "$OUT/insitu/heat3d_norender.yaml"
heat=("grid.dims=[256,256,256]" heat.steps=400 output.every=0 "output.formats=[hdf5]")
for r in 1 2; do  # twice each, alternating: the second pair is the one to quote
  check gridforge run "$OUT/insitu/heat3d_norender.yaml" --device cuda --out "$OUT/insitu/off$r" --quiet "${heat[@]}"
  check gridforge run cases/heat3d_movie.yaml --device cuda --out "$OUT/insitu/on$r" --quiet "${heat[@]}" \
    render.every=50 render.camera.width=1280 render.camera.height=720
done
python3 - "$OUT/insitu" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
d = sys.argv[1]
for r in (1, 2):
    off = json.load(open(f"{d}/off{r}/timing.json")); on = json.load(open(f"{d}/on{r}/timing.json"))
    f = on["render"]
    print(f"in-situ run {r}: heat 256^3 400 steps: without frames compute {off['phases_s']['compute']:.3f} s, "
          f"total {off['phases_s']['total']:.3f} s; with {f['frames']} frames 1280x720: {f['ms_per_frame']:.2f} ms render "
          f"a frame, {f['total_s']:.3f} s for the frames, compute {on['phases_s']['compute']:.3f} s, total "
          f"{on['phases_s']['total']:.3f} s: {on['phases_s']['total']/off['phases_s']['total']:.3f}x the run without frames")
    if "per_frame_ms" in f:  # a frame's cost split (ms a frame), the first frame alone, the frames' thread
        split = ", ".join(f"{k} {v:.2f}" for k, v in sorted(f["per_frame_ms"].items()))
        first = f.get("first_frame_ms", {})
        print(f"  per frame (ms): {split}; first frame render {first.get('render', 0):.2f} ms, download "
              f"{first.get('download', 0):.2f} ms; {f.get('encode_threads')} encoding threads; frames' thread "
              f"busy {on['output_writer'].get('frames_busy_s', 0):.3f} s, loop waited "
              f"{on['output_writer'].get('waited_s', 0):.3f} s for the writers")
PY
fi

echo
echo "=== summary ($OUT/summary.txt)"
cat "$OUT/summary.txt"
[ $fail = 0 ] && echo "rm_gpu.sh: all steps ran" || echo "rm_gpu.sh: some steps FAILED (above)"
exit $fail
