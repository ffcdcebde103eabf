#!/usr/bin/env bash
# SIGKILL in the middle of outputs leaves only whole files (SPEC §4). A run
# writing often (every 2 steps, VTK and HDF5, 64^3, a checkpoint every 3) is killed at several
# moments; after each kill every file in the folder must be whole
# (check_whole.py: every index names only files and datasets that are there)
# and any temporary must be hidden and named as one. Even rounds run into the
# folder of an earlier, completed run of another grid (16^3, outputs every 3
# steps): its fields.h5 and fields.xdmf must stay a pair until the new ones
# replace both.
# Usage: sigkill.sh GRIDFORGE CASE OUT PYTHON [ROUNDS]
set -u
gf=$1 case=$2 out=$3 py=$4 rounds=${5:-6}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "sigkill: FAIL: $*"; exit 1; }
temps=0
for round in $(seq "$rounds"); do
  rm -rf "$out"
  if [ $((round % 2)) = 0 ]; then
    "$gf" run "$case" --device cpu --out "$out" --quiet heat.steps=9 output.every=3 \
      grid.dims=[16,16,16] output.formats=[vtk,hdf5] || fail "the earlier run failed"
    rm "$out/log.csv"
  fi
  "$gf" run "$case" --device cpu --out "$out" --quiet heat.steps=100000 output.every=2 \
    output.formats=[vtk,hdf5] output.checkpoint_every=3 --overwrite &
  pid=$!
  for _ in $(seq 300); do [ -f "$out/log.csv" ] && break; sleep 0.1; done
  # A different moment each round: 0 to 0.6 s into the outputs.
  sleep "0.$((RANDOM % 7))$((RANDOM % 10))"
  kill -KILL $pid
  wait $pid 2>/dev/null
  n=$(find "$out" -name '*.vti' ! -name '.*' | wc -l)
  left=$(find "$out" -name '.*' -printf '%f ')
  echo "round $round: killed after $n outputs; temporaries left: ${left:-none}"
  [ -n "$left" ] && temps=$((temps + 1))
  "$py" "$here/check_whole.py" "$out" || fail "round $round left a file that is not whole"
done
echo "sigkill: ok: $rounds kills, only whole files ($temps left hidden temporaries)"
