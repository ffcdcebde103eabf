#!/usr/bin/python3
"""Plots a `gridforge bench` run: two PNGs per workload.

bench_<workload>.png: two panels against the grid size (points, log scale): the
fraction of the measured bandwidth each row reaches (GPU rows: of the
device-to-device copy; CPU rows: of the STREAM triad), and the speed-up of each
GPU row over the CPU at the same grid and precision. Small grids sit far below
the bandwidth (launch- and latency-bound); large ones approach it
(bandwidth-bound).

bench_<workload>_sweep.png: the size sweep, one panel per dims, method,
precision and time_block, one line per device: the fraction of bandwidth
against points (or nx, --x nx), each row's marker saying its nx mod 4 (o: 0,
^: 1, s: 2, D: 3), since rows that do not fill whole vectors are the slow ones
(issue 21).

bench_poisson_solve.png (time-to-solution rows, `--workload poisson`): the
time to solution and the iterations against points, a line per method,
device and precision; a hollow marker is a row that did not converge (the
time limit, max_iters, a stall), whose time is the budget it spent.

Rows may be non-cubic (a "shape" [nx, ny(, nz)]; `gridforge bench --sizes
509x263x391`); a bench.json from before shape (and time_block) is read as
cubes of "size" points per axis, one step per pass.

Usage: /usr/bin/python3 postprocess/plot_bench.py out/bench/bench.json [--out DIR] [--x nx]
Writes DIR/bench_<workload>.png and DIR/bench_<workload>_sweep.png (and
DIR/bench_poisson_solve.png for poisson rows; DIR
defaults to the JSON's folder) and prints each path. Needs Debian's numpy and
matplotlib (python3-matplotlib)."""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

ROW_KEYS = ("workload", "method", "dims", "size", "points", "device", "precision",
            "fraction_of_bandwidth", "speedup_vs_cpu")


def load(path):
    try:
        with open(path) as f:
            bench = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_bench: cannot read {path}: {e}")
    rows = bench.get("rows")
    if not isinstance(rows, list) or not rows:
        sys.exit(f"plot_bench: {path} has no rows")
    for i, r in enumerate(rows):
        missing = [k for k in ROW_KEYS if k not in r]
        if missing:
            sys.exit(f"plot_bench: {path}: row {i} lacks {', '.join(missing)}")
        shape = shape_of(r)
        if len(shape) != r["dims"] or shape[0] != r["size"]:
            sys.exit(f"plot_bench: {path}: row {i}: shape {shape} does not fit dims {r['dims']} "
                     f"and size {r['size']}")
    return bench


def shape_of(r):
    """The points per axis: "shape", or a cube of "size" (a bench.json from before shape)."""
    return list(r.get("shape") or [r["size"]] * r["dims"])


def time_block_of(r):
    return r.get("time_block") or 1  # absent before --time-block


def grid_of(r):
    """512^3 for a cube, 509x263x391 otherwise (bench's "grid")."""
    shape = shape_of(r)
    if len(set(shape)) == 1:
        return f"{shape[0]}^{len(shape)}"
    return "x".join(str(n) for n in shape)


def series_of(rows):
    """(device, precision, dims, method, time_block) -> rows sorted by points."""
    s = defaultdict(list)
    for r in rows:
        s[(r["device"], r["precision"], r["dims"], r["method"], time_block_of(r))].append(r)
    for k in s:
        s[k].sort(key=lambda r: (r["points"], shape_of(r)))
    return dict(sorted(s.items()))


def label_of(key):
    device, precision, dims, method, tb = key
    return f"{device} {precision} {dims}D {method}" + (f" tb{tb}" if tb > 1 else "")


def style_of(key):
    device, precision = key[0], key[1]
    return {"marker": "o" if device == "cpu" else "s",
            "linestyle": "-" if precision == "float32" else "--"}


def size_ticks(ax, rows, x="points", most=40, labels=16):
    """A tick at each grid (two grids of the same x share one: "a / b"), when there
    are at most `most` of them (else the axis's own log ticks), labelled where it
    is not too close to the last labelled one (at most about `labels` a panel)."""
    at = defaultdict(set)
    for r in rows:
        at[r["points"] if x == "points" else shape_of(r)[0]].add(grid_of(r))
    if len(at) > most:
        return
    ticks = sorted(at)
    lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])
    gap = max(hi - lo, 0.5) / labels
    text, last = [], None
    for t in ticks:
        if last is None or math.log10(t) - last >= gap:
            text.append(" / ".join(sorted(at[t])))
            last = math.log10(t)
        else:
            text.append("")
    ax.set_xticks(ticks)
    ax.set_xticklabels(text, rotation=45, fontsize=8, ha="right")
    ax.minorticks_off()


def plot_workload(workload, rows, bench, out_dir):
    """bench_<workload>.png: fraction of bandwidth and speed-up over the CPU."""
    fig, (bw, sp) = plt.subplots(1, 2, figsize=(11, 4.5))
    series = series_of(rows)
    for key, rs in series.items():
        x = [r["points"] for r in rs]
        bw.plot(x, [r["fraction_of_bandwidth"] for r in rs], label=label_of(key), **style_of(key))
    bw.axhline(1.0, color="grey", lw=0.8)
    bw.set_xscale("log")
    bw.set_ylim(bottom=0)
    bw.set_xlabel("grid (points, log scale)")
    bw.set_ylabel("effective GB/s ÷ measured bandwidth")
    bw.set_title("fraction of bandwidth (GPU: copy, CPU: triad)")
    size_ticks(bw, rows)
    bw.legend(fontsize=8)
    bw.grid(alpha=0.3)

    gpu = {k: [r for r in rs if r["speedup_vs_cpu"] is not None]
           for k, rs in series.items() if k[0] != "cpu"}
    gpu = {k: rs for k, rs in gpu.items() if rs}
    if gpu:
        for key, rs in gpu.items():
            sp.plot([r["points"] for r in rs], [r["speedup_vs_cpu"] for r in rs],
                    label=label_of(key), **style_of(key))
        sp.set_xscale("log")
        sp.set_yscale("log")
        sp.axhline(1.0, color="grey", lw=0.8)
        sp.legend(fontsize=8)
        size_ticks(sp, [r for rs in gpu.values() for r in rs])
    else:
        sp.text(0.5, 0.5, "no GPU rows in this run", ha="center", va="center",
                transform=sp.transAxes, color="grey")
        sp.set_xticks([])
        sp.set_yticks([])
    sp.set_xlabel("grid (points, log scale)")
    sp.set_ylabel("CPU ms/step ÷ GPU ms/step")
    sp.set_title("speed-up over the CPU")
    sp.grid(alpha=0.3)

    fig.suptitle(f"gridforge bench, {workload} ({bench.get('date', '')})\n{devices_line(bench)}",
                 fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, f"bench_{workload}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def devices_line(bench):
    return "; ".join(f"{d.get('name', d.get('device'))}: {d.get('bandwidth_kind')} "
                     f"{d.get('bandwidth_GBps', 0):.4g} GB/s" for d in bench.get("devices", []))


MOD4_MARKERS = {0: "o", 1: "^", 2: "s", 3: "D"}


def plot_sweep(workload, rows, bench, out_dir, x="points"):
    """bench_<workload>_sweep.png: a panel per dims, method, precision and time_block,
    a line per device, the fraction of bandwidth against x (points or nx), each
    row's marker its nx mod 4."""
    panels = defaultdict(list)
    for r in rows:
        panels[(r["dims"], r["method"], time_block_of(r), r["precision"])].append(r)
    precisions = sorted({k[3] for k in panels})
    kinds = sorted({k[:3] for k in panels})  # a row of panels each, a column per precision
    devices = sorted({r["device"] for r in rows}, key=lambda d: (d != "cpu", d))
    colour = {d: f"C{i}" for i, d in enumerate(devices)}
    fig, axes = plt.subplots(len(kinds), len(precisions), squeeze=False, sharey=True,
                             figsize=(max(5.5 * len(precisions), 9.5), 3.6 * len(kinds) + 0.9))
    top = max(1.05, max(r["fraction_of_bandwidth"] for r in rows) * 1.08)

    def xof(r):
        return r["points"] if x == "points" else shape_of(r)[0]

    for i, (dims, method, tb) in enumerate(kinds):
        for j, precision in enumerate(precisions):
            ax = axes[i][j]
            rs = panels.get((dims, method, tb, precision), [])
            title = f"{dims}D {method or workload} {precision}" + (f" tb{tb}" if tb > 1 else "")
            ax.set_title(title, fontsize=9)
            if not rs:
                ax.set_axis_off()
                continue
            for d in devices:
                line = sorted((r for r in rs if r["device"] == d),
                              key=lambda r: (xof(r), shape_of(r)))
                if not line:
                    continue
                ax.plot([xof(r) for r in line], [r["fraction_of_bandwidth"] for r in line],
                        color=colour[d], lw=1.2)
                for m, marker in MOD4_MARKERS.items():
                    pts = [r for r in line if shape_of(r)[0] % 4 == m]
                    if pts:
                        ax.scatter([xof(r) for r in pts],
                                   [r["fraction_of_bandwidth"] for r in pts],
                                   marker=marker, color=colour[d], s=28, zorder=3)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xscale("log")
            ax.set_ylim(0, top)
            size_ticks(ax, rs, x)
            ax.set_xlabel("grid (points, log scale)" if x == "points"
                          else "nx (points along x, log scale)")
            if j == 0:
                ax.set_ylabel("effective GB/s ÷ bandwidth")
            ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colour[d], lw=1.2, label=d) for d in devices]
    handles += [Line2D([], [], color="grey", lw=0, marker=marker, label=f"nx ≡ {m} (mod 4)")
                for m, marker in MOD4_MARKERS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(f"gridforge bench, {workload}: fraction of bandwidth (GPU: copy, CPU: triad) "
                 f"over the sizes ({bench.get('date', '')})\n{devices_line(bench)}", fontsize=9)
    fig.tight_layout(rect=(0, 0.5 / (3.6 * len(kinds) + 0.9), 1, 1))
    path = os.path.join(out_dir, f"bench_{workload}_sweep.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_solve(rows, bench, out_dir):
    """bench_poisson_solve.png: time to solution and iterations against points."""
    fig, (tts, its) = plt.subplots(1, 2, figsize=(11, 4.5))
    lines = defaultdict(list)
    for r in rows:
        lines[(r["method"], r["device"], r["precision"], r["dims"])].append(r)
    methods = sorted({r["method"] for r in rows})  # a colour a method, a marker a device
    for key, rs in sorted(lines.items()):
        rs.sort(key=lambda r: r["points"])
        method, device, precision, dims = key
        colour = f"C{methods.index(method) % 10}"
        style = "-" if precision == "float64" else "--"
        label = f"{method} {device} {precision} {dims}D"
        for ax, k in ((tts, "time_to_solution_s"), (its, "iterations")):
            ax.plot([r["points"] for r in rs], [r[k] for r in rs], style, color=colour,
                    label=label if ax is tts else None)
            for done in (True, False):
                pts = [r for r in rs if bool(r["converged"]) == done]
                if pts:
                    ax.scatter([r["points"] for r in pts], [r[k] for r in pts], color=colour,
                               marker="o" if device == "cpu" else "s", zorder=3,
                               facecolors=colour if done else "none")
    for ax, what in ((tts, "time to solution, s (setup apart)"), (its, "iterations (sweeps, CG iterations, cycles)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("grid (points, log scale)")
        ax.set_ylabel(what)
        ax.grid(alpha=0.3)
        size_ticks(ax, rows)
    tol = sorted({r["tolerance"] for r in rows})
    tts.set_title(f"to a relative residual of {', '.join(f'{t:g}' for t in tol)} "
                  "(hollow: not converged)", fontsize=9)
    its.set_title("iterations", fontsize=9)
    tts.legend(fontsize=7)
    fig.suptitle(f"gridforge bench, poisson: time to solution ({bench.get('date', '')})\n"
                 f"{devices_line(bench)}", fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, "bench_poisson_solve.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench_json")
    ap.add_argument("--out", help="folder for the PNGs (default: the JSON's folder)")
    ap.add_argument("--x", choices=("points", "nx"), default="points",
                    help="the sweep's x axis: a row's points, or its points along x (nx)")
    o = ap.parse_args()
    bench = load(o.bench_json)
    out_dir = o.out or os.path.dirname(os.path.abspath(o.bench_json))
    os.makedirs(out_dir, exist_ok=True)
    by_workload = defaultdict(list)
    for r in bench["rows"]:
        by_workload[r["workload"]].append(r)
    for w, rows in by_workload.items():
        print(plot_workload(w, rows, bench, out_dir))
        print(plot_sweep(w, rows, bench, out_dir, o.x))
        if w == "poisson":
            print(plot_solve(rows, bench, out_dir))


if __name__ == "__main__":
    main()
