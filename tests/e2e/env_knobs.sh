#!/usr/bin/env bash
# The GRIDFORGE_* knobs of the executors are read on every path, the CPU's
# too: a bad value is exit 2 with its message, before anything is written;
# good values run. One call checks a knob's bad and good settings in turn:
#   bad NAME=VALUE MESSAGE   `run` exits 2, makes no output folder, and
#                            stderr holds MESSAGE (a fixed string)
#   good "NAME=VALUE ..."    `run` with those settings exits 0
# Usage: env_knobs.sh GRIDFORGE CASE OUT (bad ... | good ...)...
set -u
gf=$1 case=$2 out=$3
shift 3
fail() { echo "env_knobs: FAIL: $*"; exit 1; }
rm -rf "$out"
while [ $# -gt 0 ]; do
  kind=$1
  shift
  case $kind in
    bad)
      setting=$1 msg=$2
      shift 2
      env "$setting" "$gf" run "$case" --device cpu --quiet --out "$out" 2> "$out.err"
      rc=$?
      cat "$out.err"
      [ $rc -eq 2 ] || fail "$setting: exit $rc, not 2"
      [ ! -e "$out" ] || fail "$setting: the output folder was made"
      grep -qF -- "$msg" "$out.err" || fail "$setting: stderr does not say: $msg"
      ;;
    good)
      settings=$1
      shift
      # shellcheck disable=SC2086 # several NAME=VALUE words
      env $settings "$gf" run "$case" --device cpu --quiet --out "$out" --overwrite ||
        fail "$settings: exit $?"
      ;;
    *) fail "usage: bad NAME=VALUE MESSAGE or good 'NAME=VALUE ...', not '$kind'" ;;
  esac
done
echo "env_knobs: ok"
