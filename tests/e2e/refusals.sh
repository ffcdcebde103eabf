#!/usr/bin/env bash
# Runs that are refused change nothing in the output folder (issue 23).
# Usage: refusals.sh GRIDFORGE CASE WORK PYTHON MODE
#   lock:        a second run into the folder of a running one is refused at
#                once (exit 3, naming the folder) and the first one ends well;
#                a lock file left by a killed run does not block.
#   restart:     a --restart whose series cannot be continued (fields.h5 cut
#                short) is exit 2 and leaves every file as it was.
#   case_error:  a case error found while setting up (an expression that is not
#                finite on the grid, float32 overflow, log(0) in a source) is
#                exit 2: no folder is left, and a folder of a completed run
#                keeps every file as it was (run.json included).
#   messages:    a dangling symlink as --out, a folder as --restart, --json
#                onto a full stdout.
set -u
gf=$1 case=$2 work=$3 py=$4 mode=$5
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "refusals $mode: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
small=(--device cpu --quiet "grid.dims=[16,16,16]")
# A listing of every file with its checksum: what "nothing changed" compares.
state() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum); }

case $mode in
lock)
  out=$work/o
  # The first run lasts until the check is done, then is stopped by SIGINT (a
  # run of a few thousand steps can end before the second one starts).
  "$gf" run "$case" "${small[@]}" --out "$out" heat.steps=100000000 output.every=100000 & pid=$!
  # Up to 30 s: on a loaded machine the first run may take long to set up.
  for _ in $(seq 600); do [ -f "$out/log.csv" ] && break; sleep 0.05; done
  [ -f "$out/log.csv" ] || fail "the first run did not start"
  err=$("$gf" run "$case" "${small[@]}" --out "$out" heat.steps=10 2>&1); rc=$?
  echo "second run: exit $rc: $err"
  kill -INT $pid; wait $pid; first=$?
  [ $rc = 3 ] || fail "second run: exit $rc, expected 3"
  [[ $err =~ ^"error: output folder '$out' is in use by another gridforge run (pid $pid)" ]] ||
    fail "second run: message"
  [ $first = 130 ] || fail "first run: exit $first, expected 130 (stopped by SIGINT)"
  grep -q '"status": "interrupted' "$out/run.json" || fail "first run's run.json"
  "$py" "$here/check_whole.py" "$out" || fail "not whole"
  [ -z "$(find "$out" -name '.*')" ] || fail "left: $(find "$out" -name '.*')"
  # A killed run's lock file is stale: the next run goes ahead.
  "$gf" run "$case" "${small[@]}" --out "$out" --overwrite heat.steps=100000 & pid=$!
  for _ in $(seq 100); do [ -f "$out/.gridforge.lock" ] && break; sleep 0.05; done
  kill -KILL $pid; wait $pid 2>/dev/null
  [ -f "$out/.gridforge.lock" ] || fail "no lock file while running"
  "$gf" run "$case" "${small[@]}" --out "$out" --overwrite heat.steps=10 || fail "a stale lock blocked the run"
  ;;
restart)
  out=$work/o
  "$gf" run "$case" "${small[@]}" --out "$out" heat.steps=100 output.every=100 output.checkpoint_every=100 ||
    fail "first run"
  cp "$out/checkpoint.h5" "$work/ck100.h5"
  "$gf" run "$case" "${small[@]}" --out "$out" --overwrite heat.steps=200 output.every=100 || fail "second run"
  truncate -s 2000 "$out/fields.h5"
  before=$(state "$out")
  err=$("$gf" run "$case" "${small[@]}" --out "$out" heat.steps=200 output.every=100 \
    --restart "$work/ck100.h5" 2>&1); rc=$?
  echo "restart: exit $rc: $err"
  [ $rc = 2 ] || fail "exit $rc, expected 2"
  [[ $err =~ ^"error: --restart: cannot continue '$out/fields.h5': " ]] || fail "message"
  [ "$(state "$out")" = "$before" ] || fail "the folder changed: $(diff <(echo "$before") <(state "$out"))"
  [ -z "$(find "$out" -name '.*')" ] || fail "left: $(find "$out" -name '.*')"
  # A .pvd that is not a series gridforge wrote: the same.
  "$gf" run "$case" "${small[@]}" --out "$out" --overwrite heat.steps=200 output.every=100 || fail "third run"
  echo "<VTKFile>" > "$out/heat3d-hotspot.pvd"
  before=$(state "$out")
  "$gf" run "$case" "${small[@]}" --out "$out" heat.steps=200 output.every=100 \
    --restart "$work/ck100.h5" 2>/dev/null; rc=$?
  [ $rc = 2 ] || fail "bad .pvd: exit $rc, expected 2"
  [ "$(state "$out")" = "$before" ] || fail "bad .pvd: the folder changed"
  ;;
case_error)
  out=$work/o
  "$gf" run "$case" "${small[@]}" --out "$out" heat.steps=20 output.every=10 || fail "first run"
  before=$(state "$out")
  for bad in "initial.expr=1/(x-x)" "initial.expr=sqrt(-1-x)" "precision=float32|initial.expr=1e30*1e30" \
             "heat.source=log(0*x)"; do
    IFS='|' read -ra ov <<< "$bad"
    for dest in "$work/new/deeper" "$out"; do
      # --overwrite: into the completed run's folder the run replaces it, until it fails.
      err=$("$gf" run "$case" "${small[@]}" --out "$dest" --overwrite "${ov[@]}" 2>&1); rc=$?
      echo "$bad into $dest: exit $rc: $err"
      [ $rc = 2 ] || fail "$bad: exit $rc, expected 2"
      [[ $err =~ ^"command line: " ]] || fail "$bad: message"
    done
    [ ! -e "$work/new" ] || fail "$bad: left $(find "$work/new")"
    [ "$(state "$out")" = "$before" ] || fail "$bad: the folder changed: $(diff <(echo "$before") <(state "$out"))"
    [ -z "$(find "$out" -name '.*')" ] || fail "left: $(find "$out" -name '.*')"
  done
  ;;
messages)
  ln -s "$work/nowhere" "$work/dangling"
  err=$("$gf" run "$case" "${small[@]}" --out "$work/dangling" 2>&1); rc=$?
  echo "exit $rc: $err"
  [ $rc = 1 ] && [[ $err = "error: cannot create output folder '$work/dangling': it is a symbolic link to '$work/nowhere', which does not exist" ]] ||
    fail "dangling symlink"
  err=$("$gf" run "$case" "${small[@]}" --out "$work/o" --restart "$work" 2>&1); rc=$?
  echo "exit $rc: $err"
  [ $rc = 2 ] && [[ $err = "error: --restart: '$work' is a folder, not a checkpoint; give the file in it: --restart $work/checkpoint.h5" ]] ||
    fail "--restart FOLDER"
  [ ! -e "$work/o" ] || fail "--restart FOLDER left $work/o"
  err=$("$gf" run "$case" "${small[@]}" --out "$work/j" heat.steps=2 --json 2>&1 >/dev/full); rc=$?
  echo "exit $rc: $err"
  [ $rc = 1 ] && [[ $err = "error: cannot write the --json summary to standard output: No space left on device" ]] ||
    fail "--json > /dev/full"
  ;;
*) fail "unknown mode" ;;
esac
echo "refusals $mode: ok"
