#!/usr/bin/env python3
"""Time a whole gridforge run end to end beside a CuPy whole-run peer, and the disk.

    /usr/bin/python3 postprocess/whole_run.py --gridforge build/gridforge \\
        --sizes 257,512,513 --steps 400 --every 100 --out /tmp/wr \\
        [--device auto|cpu|cuda] [--case cases/heat3d_hotspot.yaml] [--compression lz4:9] \\
        [--formats vtk,hdf5] [--set KEY=VALUE ...] [--disk-mb 2000] [--no-peer] \\
        [--peer-python python3] [--keep] [--json FILE]

In one call it measures the disk's write bandwidth (--disk-mb MB written from this process
and fsync'ed, in the --out folder), then for each size N runs

    gridforge run CASE --device D grid.dims=[N,N,N] heat.steps=S output.every=E
                  output.checkpoint_every=0 [output.compression=C] [output.formats=[..]]

timing the process from outside (wall) and the `sync` after it (the operating system's
flush of what the run left in the page cache, which timing.json's total cannot hold), reads
timing.json (total: the whole process up to writing timing.json; compute, output, setup,
startup, peak host and device memory), adds up the bytes the run wrote, and then runs the
CuPy peer postprocess/heat_whole_run.py N S E DIR (the same case with h5py outputs; its
total includes its own sync) when CuPy can be imported, or says why not.

The table gives, per size: timing.json's total; wall and wall+sync of the process; compute,
output, setup (+ startup before it), other (the total less every phase: the NaN/Inf checks
and log rows, the final drain of the writer); the bytes written and the seconds the disk needs for
them (bytes / bandwidth); issue 20's bound 1.25 x disk_s + compute + 0.5 s and whether the
total is within it; peak host and device memory; the peer's total and bytes; and the peer's
total over gridforge's wall+sync (above 1: gridforge ahead).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "heat_whole_run.py")
CASE = os.path.join(HERE, os.pardir, "cases", "heat3d_hotspot.yaml")
PEER_LINE = re.compile(r"setup ([\d.]+) s, compute ([\d.]+) s, output ([\d.]+) s, total ([\d.]+) s")


def disk_write_bandwidth(folder, mbytes):
    """Bytes/s of writing `mbytes` MB to a file in `folder` from this process, fsync included."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, ".disk_bandwidth.tmp")
    block = os.urandom(1 << 20) * 16  # 16 MiB that no layer below can compress away
    total = 0
    os.sync()
    t0 = time.perf_counter()
    with open(path, "wb", buffering=0) as f:
        while total < mbytes * 1e6:
            total += f.write(block)
        os.fsync(f.fileno())
    seconds = time.perf_counter() - t0
    os.remove(path)
    return total / seconds


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(folder) for f in files)


def human(b):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if b < 1024 or unit == "TiB":
            return "%.3g %s" % (b, unit)
        b /= 1024.0


def run_gridforge(args, n):
    out = os.path.join(args.out, "gridforge_%d" % n)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [args.gridforge, "run", args.case, "--device", args.device, "--out", out, "--quiet",
           "grid.dims=[%d,%d,%d]" % (n, n, n), "heat.steps=%d" % args.steps,
           "output.every=%d" % args.every, "output.checkpoint_every=0"]
    if args.compression:
        cmd.append("output.compression=%s" % args.compression)
    if args.formats:
        cmd.append("output.formats=[%s]" % args.formats)
    cmd += args.set
    os.sync()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    os.sync()
    synced = time.perf_counter() - t0
    if r.returncode != 0:
        return {"size": n, "error": "gridforge exited %d: %s" % (r.returncode, r.stderr.strip())}
    with open(os.path.join(out, "timing.json")) as f:
        t = json.load(f)
    p = t["phases_s"]
    row = {"size": n, "device": t["device"], "total_s": p["total"], "wall_s": wall,
           "wall_sync_s": synced, "compute_s": p["compute"], "output_s": p["output"],
           "setup_s": p["setup"] + p.get("upload", 0.0), "startup_s": p.get("startup", 0.0),
           "other_s": p["total"] - sum(p.get(k, 0.0) for k in (
               "startup", "setup", "upload", "compute", "download", "output")),
           "bytes": folder_bytes(out), "host_peak": t.get("host_memory_peak_bytes", 0),
           "device_peak": t.get("device_memory_peak_bytes", 0), "command": " ".join(cmd),
           "vtk_output": t.get("vtk_output"), "hdf5_output": t.get("hdf5_output"),
           "output_writer": t.get("output_writer")}
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return row


def peer_missing(args):
    """Why the peer cannot run here, or None."""
    if args.no_peer:
        return "--no-peer"
    probe = "import cupy, h5py; cupy.cuda.runtime.getDeviceCount()"
    r = subprocess.run([args.peer_python, "-c", probe],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return "%s cannot run CuPy (%s)" % (args.peer_python, last)
    return None


def run_peer(args, n):
    out = os.path.join(args.out, "peer_%d" % n)
    shutil.rmtree(out, ignore_errors=True)
    os.sync()
    t0 = time.perf_counter()
    r = subprocess.run([args.peer_python, PEER, str(n), str(args.steps), str(args.every), out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    m = PEER_LINE.search(r.stdout)
    if r.returncode != 0 or not m:
        said = (r.stderr or r.stdout).strip()[-300:]
        return {"error": "peer exited %d: %s" % (r.returncode, said)}
    row = {"setup_s": float(m.group(1)), "compute_s": float(m.group(2)),
           "output_s": float(m.group(3)), "total_s": float(m.group(4)), "wall_s": wall,
           "bytes": folder_bytes(out)}
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return row


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gridforge", required=True, help="the gridforge executable")
    p.add_argument("--sizes", default="257,511,512,513",
                   help="N of the N^3 grids, e.g. 257,512,513")
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--every", type=int, default=100, help="steps between outputs")
    p.add_argument("--out", default="/tmp/gf_whole_run", help="folder for the runs (emptied)")
    p.add_argument("--device", default="auto")
    p.add_argument("--case", default=CASE)
    p.add_argument("--compression", help="output.compression (default: the case's)")
    p.add_argument("--formats", help="output.formats, e.g. vtk,hdf5 (default: the case's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="another override for gridforge (repeatable)")
    p.add_argument("--disk-mb", type=int, default=2000, help="MB written to measure the disk")
    p.add_argument("--no-peer", action="store_true", help="do not run the CuPy peer")
    p.add_argument("--peer-python", default=sys.executable, help="Python with CuPy for the peer")
    p.add_argument("--keep", action="store_true", help="keep the runs' files")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(args.out, exist_ok=True)

    disk = disk_write_bandwidth(args.out, args.disk_mb)
    print("disk: %.0f MB/s writing %d MB with fsync in %s" % (disk / 1e6, args.disk_mb, args.out))
    why_no_peer = peer_missing(args)
    if why_no_peer:
        print("peer: skipped: %s" % why_no_peer)
    head = ("%6s %8s %8s %8s %8s %8s %8s %8s %7s %9s %7s %7s %3s %9s %9s %8s %9s %6s" % (
        "N", "total", "wall", "+sync", "compute", "output", "setup", "startup", "other",
        "written", "disk_s", "bound", "ok", "host_pk", "dev_pk", "peer", "peer_wr", "peer/"))
    print(head)
    rows, failed = [], False
    for n in sizes:
        g = run_gridforge(args, n)
        if "error" in g:
            failed = True
            print("%6d %s" % (n, g["error"]))
            rows.append(g)
            continue
        g["disk_s"] = g["bytes"] / disk
        g["bound_s"] = 1.25 * g["disk_s"] + g["compute_s"] + 0.5
        peer = run_peer(args, n) if not why_no_peer else {"skipped": why_no_peer}
        g["peer"] = peer
        ok = "yes" if g["total_s"] <= g["bound_s"] else "no"
        if "total_s" in peer:
            ptxt = "%8.2f %9s %6.2f" % (peer["total_s"], human(peer["bytes"]),
                                        peer["total_s"] / g["wall_sync_s"])
        else:
            ptxt = "%8s %9s %6s" % ("-", "-", "-")
        print(("%6d %8.2f %8.2f %8.2f %8.3f %8.2f %8.2f %8.2f %7.2f %9s %7.2f %7.2f %3s %9s %9s"
               " %s") % (
            n, g["total_s"], g["wall_s"], g["wall_sync_s"], g["compute_s"], g["output_s"],
            g["setup_s"], g["startup_s"], g["other_s"], human(g["bytes"]), g["disk_s"],
            g["bound_s"], ok,
            human(g["host_peak"]), human(g["device_peak"]), ptxt))
        if "error" in peer:
            print("       peer: %s" % peer["error"])
        sys.stdout.flush()
        rows.append(g)
    print("device: %s; total = timing.json's (process start to timing.json); wall = the process; "
          "+sync = wall and the sync after it; setup includes upload; other = total less the "
          "phases (NaN/Inf checks, log rows); bound = 1.25*disk_s + "
          "compute + 0.5 s; peer/ = the peer's total over gridforge's wall+sync" % (
              next((r["device"] for r in rows if "device" in r), "?")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"disk_Bps": disk, "steps": args.steps, "every": args.every,
                       "peer_skipped": why_no_peer, "rows": rows}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
