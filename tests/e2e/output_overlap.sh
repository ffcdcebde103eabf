#!/usr/bin/env bash
# The background writer (the default) and outputs written in turn by the time
# loop (GRIDFORGE_SYNC_OUTPUT=1) give the same files with the same contents:
# every .vti, the .pvd, fields.xdmf and the frames' PNGs byte for byte,
# fields.h5 and checkpoint.h5 value for value (HDF5 stores creation times);
# timing.json says which way they were written.
# Usage: output_overlap.sh GRIDFORGE WORK PYTHON (run from the repo root)
set -u
gf=$1 work=$2 py=$3
fail() { echo "output_overlap: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
same() {  # NAME CASE [KEY=VALUE ...]
  local name=$1 case=$2; shift 2
  local a=$work/$name.sync b=$work/$name.background
  GRIDFORGE_SYNC_OUTPUT=1 "$gf" run "$case" --device cpu --quiet --out "$a" "$@" ||
    fail "$name: exit $? with GRIDFORGE_SYNC_OUTPUT=1"
  "$gf" run "$case" --device cpu --quiet --out "$b" "$@" || fail "$name: exit $?"
  local la lb
  la=$(cd "$a" && find . -type f | sort) lb=$(cd "$b" && find . -type f | sort)
  [ "$la" = "$lb" ] || fail "$name: different files: $la / $lb"
  for f in $la; do
    case $f in ./run.json|./timing.json|./log.csv|*.h5) continue ;; esac
    cmp -s "$a/$f" "$b/$f" || fail "$name: $f differs"
  done
  "$py" - "$a" "$b" <<'PY' || fail "$name: HDF5 contents or timing.json differ"
import json, os, sys
import h5py, numpy as np
a, b = sys.argv[1], sys.argv[2]
def walk(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[...]
            out[name + "@"] = {k: np.asarray(v).tolist() for k, v in obj.attrs.items()}
        f.visititems(visit)
        out["@"] = {k: np.asarray(v).tolist() for k, v in f.attrs.items()}
    return out
for h5 in ("fields.h5", "checkpoint.h5"):
    pa, pb = os.path.join(a, h5), os.path.join(b, h5)
    if not os.path.exists(pa):
        continue
    wa, wb = walk(pa), walk(pb)
    assert wa.keys() == wb.keys(), (h5, sorted(wa), sorted(wb))
    for k in wa:
        if isinstance(wa[k], np.ndarray):
            assert wa[k].dtype == wb[k].dtype and wa[k].shape == wb[k].shape, (h5, k)
            assert wa[k].tobytes() == wb[k].tobytes(), (h5, k)
        else:
            assert wa[k] == wb[k], (h5, k, wa[k], wb[k])
ta = json.load(open(os.path.join(a, "timing.json")))
tb = json.load(open(os.path.join(b, "timing.json")))
assert ta["output_writer"] == {"background": False, "why": "GRIDFORGE_SYNC_OUTPUT=1"}, ta["output_writer"]
w = tb["output_writer"]
assert w["background"] is True and w["writer_busy_s"] > 0 and w["waited_s"] >= 0, w
for t in (ta, tb):
    assert all(v >= 0 for v in t["phases_s"].values()), t["phases_s"]
PY
  echo "output_overlap: $name: same files"
}
same heat cases/heat3d_hotspot.yaml "grid.dims=[24,20,16]" heat.steps=60 output.every=10 \
  output.checkpoint_every=25
same movie cases/heat3d_movie.yaml "grid.dims=[24,24,24]" heat.steps=50 render.every=10 \
  output.every=20 render.camera.width=96 render.camera.height=64
same laplace cases/laplace2d_plate.yaml laplace.check_every=100 output.every=300 \
  output.checkpoint_every=400
same laplace_frames cases/laplace3d_box.yaml "grid.dims=[20,20,20]" output.every=5 \
  "render={every: 10, camera: {position: [2, -1, 1.5], width: 48, height: 32}}"
same stencil cases/stencil2d_star9.yaml "grid.dims=[64,48]" output.every=25
echo "output_overlap: ok"
