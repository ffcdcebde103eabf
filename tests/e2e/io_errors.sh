#!/usr/bin/env bash
# Output folders that cannot be written and disks that fill up: exit 1, a
# one-line message naming the path, and no partial file left behind.
# A full disk without filling one: the temporary name gridforge is about to
# write is made a link to /dev/full, where every write fails with ENOSPC.
# A disk that fills up in the middle of fields.h5: a file size limit (ulimit
# -f, SIGXFSZ ignored) makes the write that crosses it fail as a full disk does.
# Usage: io_errors.sh GRIDFORGE CASE WORK [PYTHON]
set -u
gf=$1 case=$2 work=$3 py=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "io_errors: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
run() {  # run OUT [KEY=VALUE...]: sets rc and err
  local out=$1; shift
  err=$("$gf" run "$case" --device cpu --quiet --out "$out" "$@" 2>&1)
  rc=$?
  echo "exit $rc: $err"
}
expect() {  # expect REGEX
  [ "$rc" = 1 ] || fail "exit $rc, expected 1"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "expected one line of message"
  [[ $err =~ $1 ]] || fail "message does not match '$1'"
}

# 1. A folder that cannot be created (nobody, root included, makes folders in /proc).
run /proc/gridforge-test/out
expect "^error: cannot create output folder '/proc/gridforge-test/out': "

# 2. A file where a folder should be.
touch "$work/a-file"
run "$work/a-file/out"
expect "^error: cannot create output folder '$work/a-file/out': "

# 3. The disk is full before the first file.
mkdir -p "$work/full1"
ln -s /dev/full "$work/full1/.run.json.tmp"
run "$work/full1"
expect "^error: cannot write '$work/full1/run.json': No space left on device$"
[ -z "$(ls -A "$work/full1")" ] || fail "left in full1: $(ls -A "$work/full1")"

# 4. The disk fills up at the third output (.vti of step 20): the run stops,
#    the outputs before it stay whole, run.json says why, no temporary is left.
mkdir -p "$work/full2/vtk"
ln -s /dev/full "$work/full2/vtk/.heat3d-hotspot_000020.vti.tmp"
run "$work/full2" heat.steps=100 output.every=10
expect "^error: cannot write '$work/full2/vtk/heat3d-hotspot_000020.vti': No space left on device$"
[ "$(ls "$work/full2/vtk" | tr '\n' ' ')" = "heat3d-hotspot_000000.vti heat3d-hotspot_000010.vti " ] ||
  fail "vtk/ holds $(ls -A "$work/full2/vtk")"
grep -q '"status": "failed: cannot write' "$work/full2/run.json" || fail "run.json does not say failed"
[ -f "$work/full2/fields.h5" ] || fail "fields.h5 was not kept"
leftovers=$(find "$work/full2" -name '.*')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
# 5. The disk is full when the first checkpoint (step 30) is written: the run
#    stops, what it finished stays, no checkpoint.h5 and no temporary are left.
mkdir -p "$work/full3"
ln -s /dev/full "$work/full3/.checkpoint.h5.tmp"
run "$work/full3" heat.steps=100 output.every=10 output.checkpoint_every=30 "grid.dims=[16,16,16]"
expect "^error: cannot write '$work/full3/checkpoint.h5': .*No space left on device$"
[ ! -e "$work/full3/checkpoint.h5" ] || fail "a checkpoint.h5 was left"
[ "$(ls "$work/full3/vtk" | wc -l)" = 4 ] || fail "vtk/ holds $(ls -A "$work/full3/vtk")"
leftovers=$(find "$work/full3" -name '.*')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
# 6. fields.h5 cannot grow past LIMIT KiB (108 KiB of float64 a step at 24^3; the
#    first outputs fit): the run stops, fields.h5 keeps the steps written
#    before the failed one and fields.xdmf names exactly those. Uncompressed
#    (800 KiB), and compressed (output.hdf5_compression, 300 KiB: each step's
#    reservation is the raw values', so the full disk is found before its
#    chunks are written).
full_h5() {
  local dir=$1 limit=$2 compression=$3
  mkdir -p "$dir"
  err=$( (trap '' XFSZ; ulimit -f "$limit"; exec "$gf" run "$case" --device cpu --quiet --out "$dir" \
    heat.steps=400 output.every=40 output.formats=[hdf5] precision=float64 "grid.dims=[24,24,24]" \
    output.hdf5_compression="$compression") 2>&1)
  rc=$?
  echo "exit $rc: $err"
  expect "^error: cannot write '$dir/fields.h5' at step [0-9]+: .*; fields.h5 keeps the [0-9]+ steps written before it$"
  kept=$(printf '%s' "$err" | sed -E 's/.*keeps the ([0-9]+) steps.*/\1/')
  [ "$kept" -gt 1 ] || fail "kept $kept steps"
  [ -f "$dir/fields.h5" ] || fail "fields.h5 was not kept"
  [ "$(grep -c '<Grid Name="step_' "$dir/fields.xdmf")" = "$kept" ] ||
    fail "fields.xdmf does not list the $kept steps kept"
  leftovers=$(find "$dir" -name '.*')
  [ -z "$leftovers" ] || fail "temporary files left: $leftovers"
  if [ -n "$py" ]; then
    "$py" "$here/check_whole.py" "$dir" || fail "$dir holds a file that is not whole"
    "$py" - "$dir/fields.h5" "$kept" <<'PYEOF' || fail "fields.h5 does not hold the steps kept"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    steps = sorted(f["steps"])
    assert len(steps) == int(sys.argv[2]), steps
    assert steps == [f"{40 * i:06d}" for i in range(len(steps))], steps
    for s in steps:
        f["steps"][s]["u"][...]  # every chunk read back through the filters
PYEOF
  fi
}
full_h5 "$work/full4" 800 none
full_h5 "$work/full5" 300 zlib:1
echo "io_errors: ok"
