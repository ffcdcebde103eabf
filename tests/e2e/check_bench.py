#!/usr/bin/python3
"""Checks what `gridforge bench` wrote (SPEC §2): bench.json has every field
SPEC names, bench.csv holds the same rows, the table printed (table.txt) has
one line a row, and the numbers agree with each other (T_eff counting).
Usage: check_bench.py OUT_DIR --rows N --steps S --repetitions R"""
import argparse
import csv
import json
import math
import os
import sys

TOP = ("version", "git_commit", "build", "command_line", "date", "host", "devices",
       "copy_GBps", "triad_GBps", "settings", "bytes_counted", "rows")
DEVICE = ("device", "name", "bandwidth_kind", "bandwidth_GBps", "bandwidth_array_bytes",
          "bandwidth_repetitions")
# SPEC's columns (workload dims size device prec ms/step Gpts/s GB/s eff of-BW vs-cpu)
# and what stands behind them.
ROW = ("workload", "method", "dims", "size", "grid", "points", "device", "device_name",
       "precision", "steps", "repetitions", "ms_per_step", "ms_per_step_min", "ms_per_step_max",
       "Gpts_per_s", "points_per_s", "bytes_per_step", "effective_GBps", "bandwidth_kind",
       "bandwidth_GBps", "fraction_of_bandwidth", "speedup_vs_cpu", "time_block", "threads",
       "image", "rays_per_s", "samples_per_s", "shape")


def fail(msg):
    print("check_bench: FAIL: " + msg)
    sys.exit(1)


def close(a, b, rtol=1e-6):
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-300)


def check_row(i, r, o, bw):
    for k in ROW:
        if k not in r:
            fail(f"row {i} lacks {k}")
    if set(r) - set(ROW):
        fail(f"row {i} has unexpected keys {sorted(set(r) - set(ROW))}")
    where = f"row {i} ({r['workload']} {r['grid']} {r['precision']} {r['device']})"
    # shape: the points per axis; size: along x (a cube's points per axis, as before shape)
    shape = r["shape"]
    if not (isinstance(shape, list) and len(shape) == r["dims"] and
            all(isinstance(n, int) and n >= 5 for n in shape)):
        fail(f"{where}: shape {shape!r} for {r['dims']} dims")
    if r["size"] != shape[0]:
        fail(f"{where}: size {r['size']} is not nx of shape {shape}")
    if r["points"] != math.prod(shape):
        fail(f"{where}: points {r['points']} != the product of shape {shape}")
    cubic = len(set(shape)) == 1
    if r["grid"] != (f"{r['size']}^{r['dims']}" if cubic else "x".join(map(str, shape))):
        fail(f"{where}: grid {r['grid']} for shape {shape}")
    if r["steps"] != o.steps or r["repetitions"] != o.repetitions:
        fail(f"{where}: steps {r['steps']} x {r['repetitions']}, asked {o.steps} x {o.repetitions}")
    if not 0 < r["ms_per_step_min"] <= r["ms_per_step"] <= r["ms_per_step_max"]:
        fail(f"{where}: ms/step min {r['ms_per_step_min']} median {r['ms_per_step']} "
             f"max {r['ms_per_step_max']}")
    value = 4 if r["precision"] == "float32" else 8
    fields = 3 if r["workload"] == "wave" else 2  # the leapfrog reads u and the level before
    if r["workload"] == "raymarch":  # a step is a frame: no T_eff; rays and samples a second
        fields = 0
        if not (isinstance(r["image"], list) and len(r["image"]) == 2 and min(r["image"]) >= 1):
            fail(f"{where}: image {r['image']!r}")
        rays = r["image"][0] * r["image"][1]
        if not close(r["rays_per_s"], rays / (r["ms_per_step"] / 1e3)):
            fail(f"{where}: rays_per_s {r['rays_per_s']} for {rays} rays")
        if not r["samples_per_s"] > r["rays_per_s"]:
            fail(f"{where}: samples_per_s {r['samples_per_s']} below rays_per_s")
    elif r["image"] is not None or r["rays_per_s"] is not None or r["samples_per_s"] is not None:
        fail(f"{where}: image, rays_per_s or samples_per_s on a row that is no raymarch")
    if r["bytes_per_step"] != fields * r["points"] * value:
        fail(f"{where}: bytes_per_step {r['bytes_per_step']}, T_eff counts {fields} fields")
    s = r["ms_per_step"] / 1e3
    if not close(r["points_per_s"], r["points"] / s) or not close(r["Gpts_per_s"], r["points_per_s"] / 1e9):
        fail(f"{where}: points/s {r['points_per_s']}")
    if not close(r["effective_GBps"], r["bytes_per_step"] / s / 1e9):
        fail(f"{where}: effective_GBps {r['effective_GBps']}")
    if r["bandwidth_kind"] != bw[r["device"]]["bandwidth_kind"] or \
            r["bandwidth_GBps"] != bw[r["device"]]["bandwidth_GBps"]:
        fail(f"{where}: bandwidth differs from the device's")
    if not close(r["fraction_of_bandwidth"], r["effective_GBps"] / r["bandwidth_GBps"]):
        fail(f"{where}: fraction_of_bandwidth {r['fraction_of_bandwidth']}")
    if r["device"] == "cpu" and r["speedup_vs_cpu"] != 1:
        fail(f"{where}: a CPU row's speed-up is {r['speedup_vs_cpu']}")
    # a CPU row's loops take the threads its grid feeds (core/threads.hpp); a GPU row none
    if r["device"] == "cpu" and not (isinstance(r["threads"], int) and r["threads"] >= 1):
        fail(f"{where}: threads {r['threads']!r}")
    if r["device"] != "cpu" and r["threads"] is not None:
        fail(f"{where}: a GPU row with threads {r['threads']!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--repetitions", type=int, required=True)
    o = ap.parse_args()
    b = json.load(open(os.path.join(o.out, "bench.json")))
    for k in TOP:
        if k not in b:
            fail(f"bench.json lacks {k}")
    bw = {}
    for d in b["devices"]:
        for k in DEVICE:
            if k not in d:
                fail(f"bench.json device lacks {k}: {d}")
        if not d["bandwidth_GBps"] > 0:
            fail(f"device {d['device']}: bandwidth {d['bandwidth_GBps']}")
        bw[d["device"]] = d
    if "cpu" in bw and (bw["cpu"]["bandwidth_kind"] != "triad" or b["triad_GBps"] != bw["cpu"]["bandwidth_GBps"]):
        fail("the CPU's bandwidth is not its triad's")
    rows = b["rows"]
    if len(rows) != o.rows:
        fail(f"bench.json has {len(rows)} rows, expected {o.rows}")
    for i, r in enumerate(rows):
        check_row(i, r, o, bw)

    with open(os.path.join(o.out, "bench.csv"), newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        lines = list(reader)
    if header != list(ROW):
        fail(f"bench.csv header {header}")
    if len(lines) != len(rows):
        fail(f"bench.csv has {len(lines)} rows, bench.json {len(rows)}")
    for i, (line, r) in enumerate(zip(lines, rows)):
        for k, text in zip(header, line):
            v = r[k]
            if v is None:
                ok = text == ""
            elif k in ("shape", "image"):  # 509x263x391, 1920x1080 in the CSV
                ok = text == "x".join(map(str, v))
            elif isinstance(v, str):
                ok = text == v
            else:
                ok = close(float(text), float(v), 1e-8)
            if not ok:
                fail(f"bench.csv row {i} {k}: '{text}' vs bench.json {v!r}")

    table = open(os.path.join(o.out, "table.txt")).read().splitlines()
    if all(r["workload"] == "raymarch" for r in rows):  # their own table (issue 26)
        head = table[0].split()
        for col in ("workload", "size", "device", "prec", "ms/frame", "Grays/s", "Gsamples/s", "vs", "cpu"):
            if col not in head:
                fail(f"raymarch table header lacks '{col}': {table[0]}")
        if len(table) != len(rows) + 1:
            fail(f"the table has {len(table) - 1} rows, bench.json {len(rows)}")
        for line, r in zip(table[1:], rows):
            f = line.split()
            label = f"raymarch/{r['method']}@{r['image'][0]}x{r['image'][1]}"
            if f[0] != label or f[1] != r["grid"] or f[2] != r["device"] or f[3] != r["precision"]:
                fail(f"table row '{line}' is not {label} {r['grid']} {r['device']} {r['precision']}")
            if not close(float(f[4]), r["ms_per_step"], 1e-3):
                fail(f"table row '{line}': ms/frame is not {r['ms_per_step']}")
        print(f"check_bench: OK: {len(rows)} raymarch rows in bench.json, bench.csv and the table")
        return
    head = table[0].split()
    for col in ("workload", "dims", "size", "device", "prec", "ms/step", "Gpts/s", "GB/s", "eff",
                "of", "BW", "vs", "cpu"):
        if col not in head:
            fail(f"table header lacks '{col}': {table[0]}")
    # of what the fraction is: the triad for CPU rows, the copy for GPU rows (SPEC)
    kinds = {r["device"] == "cpu" for r in rows}
    if len(kinds) == 1 and ("triad" if True in kinds else "copy") not in head:
        fail(f"the table's fraction column does not say of what: {table[0]}")
    if len(table) != len(rows) + 1:
        fail(f"the table has {len(table) - 1} rows, bench.json {len(rows)}")
    for line, r in zip(table[1:], rows):
        f = line.split()
        if f[1] != str(r["dims"]) or f[2] != r["grid"] or f[3] != r["device"] or f[4] != r["precision"]:
            fail(f"table row '{line}' is not {r['grid']} {r['device']} {r['precision']}")
    print(f"check_bench: OK: {len(rows)} rows in bench.json, bench.csv and the table")


if __name__ == "__main__":
    main()
