#!/usr/bin/env bash
# postprocess/whole_run.py on the CPU at tiny sizes (odd, 2^k+1) with a peer
# interpreter that cannot import CuPy: a row per size from timing.json, the
# disk measured, the peer skipped with its reason, the runs' folders removed.
# Usage: whole_run.sh GRIDFORGE SOURCE_DIR OUT PYTHON
set -u
gf=$1 src=$2 out=$3 py=$4
fail() { echo "whole_run: FAIL: $*"; exit 1; }
rm -rf "$out"
log=$("$py" "$src/postprocess/whole_run.py" --gridforge "$gf" --device cpu --sizes 17,20,33 \
  --steps 6 --every 3 --disk-mb 8 --out "$out" --json "$out.json" --peer-python /bin/false 2>&1)
rc=$?
echo "$log"
[ $rc = 0 ] || fail "exit $rc"
grep -q "^disk: [0-9]* MB/s" <<<"$log" || fail "no disk bandwidth line"
grep -q "^peer: skipped: /bin/false cannot run CuPy" <<<"$log" || fail "the peer was not skipped with a note"
for n in 17 20 33; do
  grep -qE "^ +$n +[0-9.]+ " <<<"$log" || fail "no row for $n"
done
"$py" - "$out.json" <<'PY' || fail "whole_run.json does not hold what the table says"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["disk_Bps"] > 0 and j["peer_skipped"], j
assert [r["size"] for r in j["rows"]] == [17, 20, 33], j["rows"]
for r in j["rows"]:
    assert r["device"].startswith("cpu"), r
    # 3 outputs of n^3 float32: the .vti compressed, fields.h5 not (the default)
    raw = 3 * r["size"] ** 3 * 4
    assert r["vtk_output"]["bytes_in"] == raw, r
    assert r["hdf5_output"]["compression"] == "none" and r["hdf5_output"]["bytes_in"] == 0, r
    assert r["bytes"] > r["vtk_output"]["bytes_out"] + raw, r
    assert 0 < r["compute_s"] <= r["total_s"] <= r["wall_s"] + 0.02 <= r["wall_sync_s"] + 0.02, r
    assert r["host_peak"] > 0 and r["device_peak"] > 0, r
    assert r["bound_s"] == 1.25 * r["disk_s"] + r["compute_s"] + 0.5, r
    assert r["peer"] == {"skipped": j["peer_skipped"]}, r
PY
[ -z "$(ls -A "$out")" ] || fail "the runs' folders were not removed: $(ls "$out")"
echo "whole_run: ok"
