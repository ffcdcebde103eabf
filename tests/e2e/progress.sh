#!/usr/bin/env bash
# The progress line of an iterative solve follows its residual toward the
# tolerance (not the share of max_iters: "0.5% 500/100000" for a solve that
# converges at 11,500), counts iterations, and reaches 100 % at convergence;
# a time-stepping run counts steps out of its total (issue 25, item 13).
# Usage: progress.sh GRIDFORGE SOURCE_DIR OUT
set -u
gf=$1 src=$2 out=$3
fail() { echo "progress: FAIL: $*"; exit 1; }
cd "$src"
rm -rf "$out"
err=$("$gf" run cases/laplace2d_plate.yaml --device cpu --out "$out/lap" 2>&1 >/dev/null) || fail "laplace run failed: $err"
lines=$(grep "^laplace2d-plate " <<<"$err")
grep -q "/100000" <<<"$lines" && fail "the solve's progress counts against max_iters: $lines"
grep -q "iterations/s" <<<"$lines" || fail "no iterations/s: $lines"
grep -qE "100\.0%  11500 iterations" <<<"$lines" || fail "no 100 % at convergence: $lines"
# the percent grows with the residual's fall: past 25 % after the first check
second=$(sed -n 2p <<<"$lines" | awk '{print $2}')
awk -v p="${second%\%}" 'BEGIN{exit !(p > 25)}' || fail "second line at $second: $lines"
err=$("$gf" run cases/heat1d_rod.yaml --device cpu --out "$out/rod" 2>&1 >/dev/null) || fail "heat run failed"
grep -qE "^heat1d-rod 100\.0%  8889/8889 .* steps/s" <<<"$err" || fail "heat progress: $err"
echo "progress: ok"
