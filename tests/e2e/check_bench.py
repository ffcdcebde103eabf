#!/usr/bin/python3
"""Checks what `gridforge bench` wrote (SPEC §2): bench.json has every field
SPEC names, bench.csv holds the same rows, the table printed (table.txt) has
one line a row, and the numbers agree with each other (T_eff counting).
Time-to-solution rows (--workload poisson, issue 22) are checked as solves:
their steps are their iterations, whatever --steps says.
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
       "image", "rays_per_s", "samples_per_s", "shape") + (
    # poisson rows (issue 22); null on the others
    "problem", "preconditioner", "cycle", "laplace_precision", "tolerance", "iterations",
    "setup_s", "time_to_solution_s", "residual", "converged", "reason", "max_error",
    "convergence_factor")
SOLVE = ROW[ROW.index("problem"):]
REASONS = ("converged", "direct", "time_limit", "max_iters", "stalled", "failed")


def fail(msg):
    print("check_bench: FAIL: " + msg)
    sys.exit(1)


def close(a, b, rtol=1e-6):
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-300)


def check_solve_row(where, r, poisson):
    """A poisson row: a solve, its steps its iterations, its keys consistent."""
    m = r["method"]
    if m not in poisson["methods"]:
        fail(f"{where}: method {m} not among settings.poisson.methods {poisson['methods']}")
    if r["steps"] != r["iterations"] or r["repetitions"] != 1 or r["iterations"] < 1:
        fail(f"{where}: steps {r['steps']} x {r['repetitions']} for {r['iterations']} iterations")
    if not close(r["ms_per_step"], r["time_to_solution_s"] * 1e3 / r["iterations"]):
        fail(f"{where}: ms_per_step {r['ms_per_step']} is not the time to solution an iteration")
    if r["problem"] != ("periodic" if m == "fft" else "dirichlet"):
        fail(f"{where}: problem {r['problem']}")
    if (r["preconditioner"] is not None) != m.startswith("cg") or \
            (m.startswith("cg") and r["preconditioner"] != (m[3:] or "none")):
        fail(f"{where}: preconditioner {r['preconditioner']!r}")
    mg = m.startswith("multigrid")
    if (r["cycle"] is not None) != mg or (mg and r["cycle"] != ("f" if m == "multigrid-f" else "v")):
        fail(f"{where}: cycle {r['cycle']!r}")
    if (r["laplace_precision"] is not None) != mg or \
            (mg and r["laplace_precision"] != ("mixed" if m == "multigrid-mixed" else "uniform")):
        fail(f"{where}: laplace_precision {r['laplace_precision']!r}")
    if m == "multigrid-mixed" and r["precision"] != "float64":
        fail(f"{where}: a mixed row in {r['precision']}")
    tol = max(poisson["tolerance"], 1e-5) if r["precision"] == "float32" else poisson["tolerance"]
    if not close(r["tolerance"], tol):
        fail(f"{where}: tolerance {r['tolerance']}, asked {poisson['tolerance']}")
    if r["reason"] not in REASONS or r["converged"] != (r["reason"] in ("converged", "direct")):
        fail(f"{where}: reason {r['reason']!r}, converged {r['converged']!r}")
    if r["reason"] == "converged" and not r["residual"] <= r["tolerance"]:
        fail(f"{where}: converged at residual {r['residual']} > {r['tolerance']}")
    if r["reason"] == "time_limit" and not r["time_to_solution_s"] >= poisson["max_seconds"]:
        fail(f"{where}: stopped by the time limit after {r['time_to_solution_s']} s")
    if not (r["setup_s"] > 0 and r["time_to_solution_s"] > 0):
        fail(f"{where}: setup {r['setup_s']} s, solve {r['time_to_solution_s']} s")
    if not (math.isfinite(r["max_error"]) and r["max_error"] >= 0):
        fail(f"{where}: max_error {r['max_error']}")
    if m == "fft":
        if r["convergence_factor"] is not None or r["iterations"] != 1:
            fail(f"{where}: fft with factor {r['convergence_factor']} in {r['iterations']}")
    elif not 0 < r["convergence_factor"] < 1:
        fail(f"{where}: convergence_factor {r['convergence_factor']}")


def check_row(i, r, o, bw, poisson=None):
    for k in ROW:
        if k not in r:
            fail(f"row {i} lacks {k}")
    if set(r) - set(ROW):
        fail(f"row {i} has unexpected keys {sorted(set(r) - set(ROW))}")
    where = f"row {i} ({r['workload']} {r['grid']} {r['precision']} {r['device']})"
    if r["workload"] == "poisson":
        check_solve_row(where, r, poisson)
    elif any(r[k] is not None for k in SOLVE):
        fail(f"{where}: a poisson key set on a row that is no poisson row")
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
    if r["workload"] != "poisson" and (r["steps"] != o.steps or r["repetitions"] != o.repetitions):
        fail(f"{where}: steps {r['steps']} x {r['repetitions']}, asked {o.steps} x {o.repetitions}")
    if not 0 < r["ms_per_step_min"] <= r["ms_per_step"] <= r["ms_per_step_max"]:
        fail(f"{where}: ms/step min {r['ms_per_step_min']} median {r['ms_per_step']} "
             f"max {r['ms_per_step_max']}")
    value = 4 if r["precision"] == "float32" else 8
    fields = 3 if r["workload"] == "wave" else 2  # the leapfrog reads u and the level before
    if r["workload"] == "poisson":  # an iteration's bytes: the method's own count
        fields = r["bytes_per_step"] / (r["points"] * value)
    elif r["workload"] == "raymarch":  # a step is a frame: no T_eff; rays and samples a second
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
        check_row(i, r, o, bw, b["settings"].get("poisson"))

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
            elif isinstance(v, bool):
                ok = text == ("true" if v else "false")
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
    if all(r["workload"] == "poisson" for r in rows):  # their own table (issue 22)
        head = table[0].split()
        for col in ("workload", "dims", "size", "device", "prec", "iters", "setup", "solve",
                    "ms/iter", "residual", "converged", "max", "error", "factor", "vs", "cpu"):
            if col not in head:
                fail(f"poisson table header lacks '{col}': {table[0]}")
        if len(table) != len(rows) + 1:
            fail(f"the table has {len(table) - 1} rows, bench.json {len(rows)}")
        for line, r in zip(table[1:], rows):
            f = line.split()
            want = [f"poisson/{r['method']}", str(r["dims"]), r["grid"], r["device"],
                    r["precision"], str(r["iterations"])]
            if f[:6] != want:
                fail(f"table row '{line}' is not {' '.join(want)}")
            said = "yes" if r["converged"] else "no"
            if f[10] != said or (not r["converged"] and f[11] != f"({r['reason']})"):
                fail(f"table row '{line}': converged is not {said} ({r['reason']})")
        print(f"check_bench: OK: {len(rows)} poisson rows in bench.json, bench.csv and the table")
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
