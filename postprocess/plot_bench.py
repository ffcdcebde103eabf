#!/usr/bin/python3
"""Plots a `gridforge bench` run: one PNG per workload, two panels against the
grid size (points, log scale): the fraction of the measured bandwidth each row
reaches (GPU rows: of the device-to-device copy; CPU rows: of the STREAM
triad), and the speed-up of each GPU row over the CPU at the same size and
precision. Small grids sit far below the bandwidth (launch- and latency-bound);
large ones approach it (bandwidth-bound).

Usage: /usr/bin/python3 postprocess/plot_bench.py out/bench/bench.json [--out DIR]
Writes DIR/bench_<workload>.png (DIR defaults to the JSON's folder) and prints
each path. Needs Debian's numpy and matplotlib (python3-matplotlib)."""
import argparse
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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
    return bench


def series_of(rows):
    """(device, precision, dims, method) -> rows sorted by points."""
    s = defaultdict(list)
    for r in rows:
        s[(r["device"], r["precision"], r["dims"], r["method"])].append(r)
    for k in s:
        s[k].sort(key=lambda r: r["points"])
    return dict(sorted(s.items()))


def label_of(key):
    device, precision, dims, method = key
    return f"{device} {precision} {dims}D {method}"


def style_of(key):
    device, precision, _, _ = key
    return {"marker": "o" if device == "cpu" else "s",
            "linestyle": "-" if precision == "float32" else "--"}


def size_ticks(ax, rows):
    pts = sorted({(r["points"], f"{r['size']}^{r['dims']}") for r in rows})
    ax.set_xticks([p for p, _ in pts])
    ax.set_xticklabels([s for _, s in pts], rotation=45, fontsize=8)
    ax.minorticks_off()


def plot_workload(workload, rows, bench, out_dir):
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

    devices = "; ".join(f"{d.get('name', d.get('device'))}: {d.get('bandwidth_kind')} "
                        f"{d.get('bandwidth_GBps', 0):.4g} GB/s" for d in bench.get("devices", []))
    fig.suptitle(f"gridforge bench, {workload} ({bench.get('date', '')})\n{devices}", fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, f"bench_{workload}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench_json")
    ap.add_argument("--out", help="folder for the PNGs (default: the JSON's folder)")
    o = ap.parse_args()
    bench = load(o.bench_json)
    out_dir = o.out or os.path.dirname(os.path.abspath(o.bench_json))
    os.makedirs(out_dir, exist_ok=True)
    by_workload = defaultdict(list)
    for r in bench["rows"]:
        by_workload[r["workload"]].append(r)
    for w, rows in by_workload.items():
        print(plot_workload(w, rows, bench, out_dir))


if __name__ == "__main__":
    main()
