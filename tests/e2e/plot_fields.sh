#!/usr/bin/env bash
# postprocess/plot.py on small runs' fields.h5: a 1D line, a 2D image and a
# line through it, a 3D slice (the default middle z plane and a named one) and
# a line; each PNG exists, is whole, has the size asked and is not blank.
# Then its errors: a missing file (exit 1), a missing step (exit 2, the steps
# present listed), a --slice of a 2D field, a point outside the grid.
# Usage: plot_fields.sh GRIDFORGE SOURCE_DIR OUT PYTHON
set -u
gf=$1 src=$2 out=$3 py=$4
plot="$src/postprocess/plot.py"
fail() { echo "plot_fields: FAIL: $*"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
run() {  # run NAME CASE OVERRIDES...
  local name=$1 case=$2
  shift 2
  "$gf" run "$src/cases/$case.yaml" --device cpu --out "$out/$name" --quiet "$@" 'render=null' \
    'output.formats=[hdf5]' || fail "gridforge run $case exited $?"
}
run 1d heat1d_rod heat.t_end=null heat.steps=200 output.every=100
run 2d heat2d_plate heat.t_end=null heat.steps=60 output.every=30 'grid.dims=[33,17]' 'grid.extent=[2,1]'
run 3d heat3d_hotspot heat.steps=20 output.every=10 'grid.dims=[16,12,10]'

# check PNG KIND [WIDTH HEIGHT]: a whole PNG with a curve (KIND line: C0 blue
# pixels) or an image (KIND image: a colormapped fifth of the picture at least)
check() {
  "$py" - "$@" <<'PY' || fail "$1 is not a good plot"
import sys
import numpy as np
import matplotlib.image as mpimg
path = sys.argv[1]
with open(path, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", "not a PNG"
img = mpimg.imread(path)
kind = sys.argv[2]
h, w = img.shape[:2]
if len(sys.argv) > 3:
    assert (w, h) == (int(sys.argv[3]), int(sys.argv[4])), f"{w}x{h}"
rgb = img[..., :3]
# axes, ticks and text are grey; the data is coloured
coloured = int(((rgb.max(axis=-1) - rgb.min(axis=-1)) > 0.15).sum())
if kind == "line":
    c0 = (np.abs(rgb - np.array([0x1f, 0x77, 0xb4]) / 255).max(axis=-1) < 0.1).sum()
    assert c0 > 300, f"only {c0} pixels of the curve's colour"
else:
    assert coloured > 0.2 * w * h, f"only {coloured} coloured pixels of {w * h}"
print(f"plot_fields: ok: {path} {w}x{h} {kind}, {coloured} coloured pixels")
PY
}
expect() {  # expect RC PATTERN ARGS...: plot.py ARGS exits RC and says PATTERN
  local rc=$1 pattern=$2
  shift 2
  local err
  err=$("$py" "$plot" "$@" 2>&1 >/dev/null)
  local got=$?
  echo "plot.py $*: exit $got: $err"
  [ "$got" = "$rc" ] || fail "plot.py $*: exit $got, expected $rc"
  [[ "$err" =~ $pattern ]] || fail "plot.py $*: expected a message matching: $pattern"
}

p=$("$py" "$plot" "$out/1d") || fail "plot.py 1d exited $?"
[ "$p" = "$out/1d/plot_u_000200.png" ] || fail "1d: printed '$p'"
check "$p" line 750 450
p=$("$py" "$plot" "$out/2d/fields.h5" --step 30) || fail "plot.py 2d exited $?"
[ "$p" = "$out/2d/plot_u_000030.png" ] || fail "2d: printed '$p'"
check "$p" image 750 520
"$py" "$plot" "$out/2d" --line y=0.25 --out "$out/2d_line.png" >/dev/null || fail "2d --line"
check "$out/2d_line.png" line 750 450
p=$("$py" "$plot" "$out/3d" --step last --range 0 50) || fail "plot.py 3d exited $?"
case "$p" in "$out/3d/plot_u_000020_z"*.png) ;; *) fail "3d: printed '$p'" ;; esac
check "$p" image
"$py" "$plot" "$out/3d" --slice x=0.5 --step 10 --out "$out/3d_x.png" >/dev/null || fail "3d --slice"
check "$out/3d_x.png" image
"$py" "$plot" "$out/3d" --line y=0.5,z=0.5 --out "$out/3d_line.png" >/dev/null || fail "3d --line"
check "$out/3d_line.png" line

expect 1 "^plot.py: error: $out/none: no such file or folder$" "$out/none"
mkdir -p "$out/none"
expect 1 "^plot.py: error: $out/none/fields.h5: no such file" "$out/none"
expect 2 "^plot.py: error: no step 5 in .*fields.h5; steps present: 0, 30, 60$" "$out/2d" --step 5
expect 2 "^plot.py: error: no field 'v' at step 60 in .*; fields present: u$" "$out/2d" --field v
expect 2 "^plot.py: error: --slice is for 3D fields; this one is 2D" "$out/2d" --slice z=0.5
expect 2 "^plot.py: error: z=3 is outside the grid: z spans \[0, [0-9.]+\]$" "$out/3d" --slice z=3
expect 2 "^plot.py: error: --line 'y=0.5': a line through a 3D field fixes 2 axes" "$out/3d" --line y=0.5
expect 1 "^plot.py: error: cannot open .*run.json: not an HDF5 file" "$out/3d/run.json"
leftovers=$(find "$out" -name '.plot-*')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
echo "plot_fields: ok"
