#!/usr/bin/env bash
# A run owns its folder; a restart needs only its checkpoint (issue 25, items 2-4).
# Usage: run_folder.sh GRIDFORGE SOURCE_DIR WORK PYTHON MODE
#   overwrite:      a second run into a folder of another run is refused (exit 2,
#                   nothing changed, the message names --overwrite); with
#                   --overwrite the folder holds only the new run's files (no .vti,
#                   .pvd, log row of the first run), also when a format is dropped.
#   setup_failure:  a replacing run refused or failing while it sets up (a case
#                   error found then, a folder in use) leaves the old run whole.
#   make_run:       the Makefile's `run` command, typed twice, works.
#   restart_alone:  Ctrl-C prints the exact resume command (quoted path, --device);
#                   that command alone continues the run bit for bit; overrides
#                   follow the checkpoint; laplace at max_iters says the same.
#   restart_folder: a restart writes the checkpoint's folder when --out is left
#                   out; into a folder of another run (grid, workload, precision)
#                   it is exit 2 at once, nothing changed, no device set up.
set -u
gf=$1 src=$2 work=$3 py=$4 mode=$5
fail() { echo "run_folder $mode: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
state() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum); }
cpu=(--device cpu --quiet)

case $mode in
overwrite)
  d=$work/D
  "$gf" run "$src/cases/stencil3d_custom.yaml" "${cpu[@]}" output.every=10 --out "$d" || fail "first run"
  before=$(state "$d")
  err=$("$gf" run "$src/cases/stencil3d_custom.yaml" "${cpu[@]}" output.every=30 --out "$d" 2>&1); rc=$?
  echo "second run: exit $rc: $err"
  [ $rc = 2 ] || fail "second run: exit $rc, expected 2"
  [[ $err =~ ^"error: output folder '$d' holds the files of another run (run.json, ".*"); add --overwrite to replace them with this run's, or choose another --out"$ ]] ||
    fail "second run: message"
  [ "$(state "$d")" = "$before" ] || fail "a refused run changed the folder"
  "$gf" run "$src/cases/stencil3d_custom.yaml" "${cpu[@]}" output.every=30 --out "$d" --overwrite ||
    fail "--overwrite run"
  vti=$(cd "$d/vtk" && ls | tr '\n' ' ')
  [ "$vti" = "stencil3d-custom_000000.vti stencil3d-custom_000030.vti stencil3d-custom_000060.vti " ] ||
    fail "vtk/ holds $vti"
  "$py" - "$d" <<'EOF' || fail "series"
import sys, os, re, h5py
d = sys.argv[1]
pvd = re.findall(r'file="([^"]+)"', open(os.path.join(d, "stencil3d-custom.pvd")).read())
assert pvd == [f"vtk/stencil3d-custom_{s:06d}.vti" for s in (0, 30, 60)], pvd
with h5py.File(os.path.join(d, "fields.h5")) as f:
    assert sorted(f["steps"]) == ["000000", "000030", "000060"], sorted(f["steps"])
rows = [l.split(",")[0] for l in open(os.path.join(d, "log.csv")).read().split("\n")[1:] if l]
assert rows == sorted(set(rows), key=int), rows  # one run's rows, once each
EOF
  "$gf" run "$src/cases/stencil3d_custom.yaml" "${cpu[@]}" output.every=30 "output.formats=[hdf5]" \
    --out "$d" --overwrite || fail "hdf5-only run"
  left=$(cd "$d" && ls -A | tr '\n' ' ')
  [ "$left" = "fields.h5 fields.xdmf log.csv run.json timing.json " ] || fail "after the hdf5-only run: $left"
  # Files gridforge does not write stay.
  echo note > "$d/notes.txt"
  "$gf" run "$src/cases/stencil3d_custom.yaml" "${cpu[@]}" --out "$d" --overwrite || fail "with notes"
  [ -f "$d/notes.txt" ] || fail "notes.txt was removed"
  # An empty folder, and a folder of other files only, need no flag.
  mkdir "$work/empty" && echo x > "$work/empty/readme"
  "$gf" run "$src/cases/heat1d_rod.yaml" "${cpu[@]}" --out "$work/empty" || fail "empty folder"
  ;;
setup_failure)
  case=$src/cases/heat3d_hotspot.yaml small=("${cpu[@]}" "grid.dims=[16,16,16]")
  out=$work/o
  "$gf" run "$case" "${small[@]}" --out "$out" heat.steps=20 output.every=10 output.checkpoint_every=10 ||
    fail "first run"
  before=$(state "$out")
  for bad in "initial.expr=1/(x-x)" "heat.source=log(0*x)"; do
    err=$("$gf" run "$case" "${small[@]}" --out "$out" --overwrite "$bad" 2>&1); rc=$?
    echo "$bad --overwrite: exit $rc: $err"
    [ $rc = 2 ] || fail "$bad: exit $rc, expected 2"
    [[ $err =~ ^"command line: " ]] || fail "$bad: message"
    [ "$(state "$out")" = "$before" ] || fail "$bad: the folder changed: $(diff <(echo "$before") <(state "$out"))"
    [ -z "$(find "$out" -name '.*')" ] || fail "left: $(find "$out" -name '.*')"
  done
  # A failure while setting up that is no case error (a host allocation the
  # memory check could not foresee, exit 3): the old run comes back as well.
  # (Not under AddressSanitizer, whose shadow memory ulimit -v refuses.)
  if [ -z "${GF_SANITIZE:-}" ]; then
    err=$(ulimit -v 2000000; "$gf" run "$case" "${cpu[@]}" --out "$out" --overwrite \
          "grid.dims=[700,700,700]" precision=float64 2>&1); rc=$?
    echo "out of memory while replacing: exit $rc: $err"
    [ $rc = 3 ] || fail "out of memory: exit $rc, expected 3"
    [ "$(state "$out")" = "$before" ] || fail "out of memory: the folder changed: $(diff <(echo "$before") <(state "$out"))"
    [ -z "$(find "$out" -name '.*')" ] || fail "left: $(find "$out" -name '.*')"
  fi
  # A folder in use is exit 3 (not "another run's files"), and changes nothing.
  # (a run far longer than the check, stopped by SIGINT after it: 3000 steps of 16³
  # on one thread ended before the second run started)
  "$gf" run "$case" "${small[@]}" --out "$work/busy" heat.steps=100000000 output.every=0 & pid=$!
  for _ in $(seq 200); do [ -f "$work/busy/log.csv" ] && break; sleep 0.05; done
  err=$("$gf" run "$case" "${small[@]}" --out "$work/busy" --overwrite heat.steps=10 2>&1); rc=$?
  echo "into a folder in use: exit $rc: $err"
  kill -INT $pid; wait $pid; first=$?
  [ $rc = 3 ] || fail "folder in use: exit $rc, expected 3"
  [ $first = 130 ] || fail "the first run: exit $first, expected 130 (stopped by SIGINT)"
  grep -q '"status": "interrupted' "$work/busy/run.json" || fail "the first run's run.json: $(cat "$work/busy/run.json")"
  ;;
make_run)
  # The command `make run` runs, as the Makefile spells it, typed twice.
  cmd=$(make -s -n -C "$src" run BUILD=BUILDDIR CASE=CASEFILE | grep 'BUILDDIR/gridforge run CASEFILE')
  [ -n "$cmd" ] || fail "make -n run shows no gridforge run"
  echo "make run runs: $cmd"
  cmd=${cmd//BUILDDIR\/gridforge/$gf}
  cmd=${cmd//CASEFILE/$src/cases/heat1d_rod.yaml}
  for i in 1 2; do
    (cd "$work" && eval "$cmd --device cpu --quiet heat.steps=20") || fail "make run, time $i"
  done
  [ -f "$work/out/heat1d-rod/run.json" ] || fail "no run.json"
  ;;
restart_alone)
  case=$src/cases/heat3d_hotspot.yaml
  # long enough (0.5-1 s on one thread) to be stopped after its first checkpoint
  args=("grid.dims=[12,12,12]" heat.steps=100000 output.every=20000 output.checkpoint_every=100)
  d="$work/a b"
  "$gf" run "$case" --device cpu --quiet "${args[@]}" --out "$work/whole" || fail "uninterrupted run"
  "$gf" run "$case" --device cpu "${args[@]}" --out "$d" 2>"$work/err" & pid=$!
  for _ in $(seq 400); do [ -f "$d/checkpoint.h5" ] && break; sleep 0.02; done
  kill -INT $pid; wait $pid; rc=$?
  msg=$(tail -1 "$work/err")
  echo "interrupted: exit $rc: $msg"
  [ $rc = 130 ] || fail "exit $rc, expected 130"
  # the program as it was typed ($gf, a full path here), so the command runs as printed
  [[ $msg =~ "; continue with: $gf run --restart '$d/checkpoint.h5' --device cpu"$ ]] ||
    fail "the message does not end with the resume command"
  resume=${msg##*continue with: }
  (cd "$work" && eval "$resume --quiet") || fail "the resume command failed"
  "$py" - "$d" "$work/whole" <<'EOF' || fail "the resumed run differs from the uninterrupted one"
import sys, os, h5py, numpy as np
a, b = (h5py.File(os.path.join(p, "fields.h5")) for p in sys.argv[1:])
assert sorted(a["steps"]) == sorted(b["steps"]), (sorted(a["steps"]), sorted(b["steps"]))
for k in b["steps"]:
    assert np.array_equal(a["steps"][k]["u"][...], b["steps"][k]["u"][...]), k
EOF
  # Overrides after the checkpoint alone (the first one is not a case file).
  "$gf" run --restart "$d/checkpoint.h5" heat.steps=100200 --device cpu --quiet || fail "heat.steps=100200"
  [ "$(tail -1 "$d/log.csv" | cut -d, -f1)" = 100200 ] || fail "did not run to 100200"
  err=$("$gf" run --restart "$d/checkpoint.h5" heat.alpha=0.001 heat.steps=100300 --device cpu 2>&1); rc=$?
  echo "alpha changed: exit $rc: $err"
  [ $rc = 2 ] || fail "a key a restart may not change: exit $rc"
  # laplace at max_iters says how to go on.
  l=$work/L
  err=$("$gf" run "$src/cases/laplace2d_plate.yaml" --device cpu --quiet laplace.max_iters=100 \
    output.checkpoint_every=50 --out "$l" 2>&1); rc=$?
  echo "laplace: exit $rc: $err"
  [ $rc = 1 ] || fail "laplace: exit $rc"
  [[ $err =~ "; continue with: $gf run --restart $l/checkpoint.h5 --device cpu laplace.max_iters=200"$ ]] ||
    fail "laplace: no resume command"
  "$gf" run --restart "$l/checkpoint.h5" --device cpu --quiet laplace.max_iters=100000 || fail "laplace resumed"
  # Without a case file and without --restart: still the usage error.
  err=$("$gf" run 2>&1); [ $? = 2 ] || fail "run alone"
  ;;
restart_folder)
  case=$src/cases/heat3d_hotspot.yaml
  cd "$work" || fail "cd"
  "$gf" run "$case" "${cpu[@]}" "grid.dims=[16,16,16]" heat.steps=20 output.checkpoint_every=10 --out RS ||
    fail "first run"
  "$gf" run "$case" "${cpu[@]}" "grid.dims=[12,12,12]" heat.steps=20 || fail "the other run"
  before=$(state out/heat3d-hotspot) rs=$(state RS)
  # --out left out: the checkpoint's folder.
  "$gf" run "$case" "${cpu[@]}" "grid.dims=[16,16,16]" heat.steps=40 --restart RS/checkpoint.h5 ||
    fail "restart into the checkpoint's folder"
  [ "$(tail -1 RS/log.csv | cut -d, -f1)" = 40 ] || fail "RS was not continued"
  [ "$(state out/heat3d-hotspot)" = "$before" ] || fail "the other run's folder changed"
  # Into the folder of another run: exit 2, one line, nothing changed.
  rs=$(state RS)
  err=$("$gf" run "$case" --device cpu "grid.dims=[16,16,16]" heat.steps=60 --restart RS/checkpoint.h5 \
    --out out/heat3d-hotspot 2>&1); rc=$?
  echo "into another run's folder: exit $rc: $err"
  [ $rc = 2 ] || fail "exit $rc, expected 2"
  [[ $err =~ ^"error: --restart: output folder 'out/heat3d-hotspot' holds the files of another run (run.json, ".*"; grid.dims [16, 16, 16] in the checkpoint, [12, 12, 12] in its run.json); continue in the checkpoint's own folder (leave out --out), choose another --out, or add --overwrite to replace them"$ ]] ||
    fail "message"
  [ "$(state out/heat3d-hotspot)" = "$before" ] || fail "the other run's folder changed"
  [ "$(state RS)" = "$rs" ] || fail "RS changed"
  # Another workload and another precision on the same grid: the same.
  "$gf" run "$src/cases/stencil3d_star7.yaml" "${cpu[@]}" "grid.dims=[16,16,16]" stencil.steps=5 --out S ||
    fail "stencil run"
  "$gf" run "$case" "${cpu[@]}" "grid.dims=[16,16,16]" heat.steps=5 precision=float64 --out P ||
    fail "float64 run"
  for o in S P; do
    b=$(state $o)
    err=$("$gf" run --restart RS/checkpoint.h5 heat.steps=60 --device cpu --out $o 2>&1); rc=$?
    echo "into $o: exit $rc: $err"
    [ $rc = 2 ] || fail "into $o: exit $rc, expected 2"
    [[ $err =~ (workload heat in the checkpoint, stencil in its run.json|precision float32 in the checkpoint, float64 in its run.json) ]] ||
      fail "into $o: message"
    [ "$(state $o)" = "$b" ] || fail "$o changed"
  done
  # With --overwrite: that run's files go, new series start at the checkpoint's step.
  "$gf" run --restart RS/checkpoint.h5 heat.steps=60 "${cpu[@]}" --out S --overwrite || fail "--overwrite"
  [ ! -e S/stencil3d-star7.pvd ] || fail "the stencil run's .pvd is left"
  [ "$(sed -n 2p S/log.csv | cut -d, -f1)" = 40 ] || fail "S's log does not start at the checkpoint"
  ;;
*) fail "unknown mode" ;;
esac
echo "run_folder $mode: ok"
