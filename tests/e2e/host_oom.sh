#!/usr/bin/env bash
# A host allocation that fails after the memory check passed (here: an
# address-space limit the check cannot see) is exit 3 with a message that
# says what was being allocated, how much, and what to do.
# Usage: host_oom.sh GRIDFORGE CASE OUT
set -u
gf=$1 case=$2 out=$3
fail() { echo "host_oom: FAIL: $*"; exit 1; }
rm -rf "$out"
# 2 GB of address space holds the program, not a 700^3 float64 field (2.6 GB).
err=$(ulimit -v 2000000; "$gf" run "$case" --device cpu --quiet --out "$out" \
      grid.dims=[700,700,700] precision=float64 2>&1)
rc=$?
echo "exit $rc: $err"
[ "$rc" = 3 ] || fail "exit $rc, expected 3"
[[ $err =~ ^"error: out of host memory allocating the field u (2.56 GiB) on the host: "[0-9.]+" GiB free; use a smaller grid or float32"$ ]] ||
  fail "unexpected message"
echo "host_oom: ok"
