#!/usr/bin/env python3
"""Time gridforge's .vti writer for each output.compression, on heat3d_hotspot's data.

    /usr/bin/python3 postprocess/output_speed.py --gridforge build/gridforge \\
        [--sizes 64,256,512] [--variants none,lz4:1,lz4:9,zlib:1,zlib:5] [--steps 400] \\
        [--repeat 3] [--threads N] [--out /tmp/gf_output_speed]

For each size N it first runs cases/heat3d_hotspot.yaml at N^3 for --steps steps with
fields.h5 only (the data: the case's field after those steps, float32), then, for each
variant, runs one more step from that field (initial.file) writing the final state as a
.vti only, and reads the time the output writer took (timing.json
output_writer.writer_busy_s: the .vti written and renamed, into the page cache, no fsync),
the compression's own wall and CPU time (vtk_output.compress_s, compress_cpu_s: MB per
core-second is what the threads of another machine can be expected to reach) and the
file's size. The best of
--repeat runs is kept. It also measures the disk's write bandwidth in the same call
(--disk-mb MB written and fsync'ed), so each row can say how long the disk itself would
take for the bytes written. Prints a table; --json FILE keeps the rows.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = os.path.join(HERE, os.pardir, "cases", "heat3d_hotspot.yaml")


def disk_write_bandwidth(folder, mbytes):
    """Bytes/s of writing `mbytes` MB to a file in `folder` and fsync'ing it."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, ".disk_bandwidth.tmp")
    block = os.urandom(1 << 20) * 16  # 16 MiB that no layer below can compress away
    total = 0
    t0 = time.perf_counter()
    with open(path, "wb", buffering=0) as f:
        while total < mbytes * 1e6:
            total += f.write(block)
        os.fsync(f.fileno())
    seconds = time.perf_counter() - t0
    os.remove(path)
    return total / seconds


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("output_speed: FAIL: %s exited %d:\n%s" % (" ".join(cmd), r.returncode, r.stderr))
    return r


def make_data(args, n, env):
    out = os.path.join(args.out, "data_%d" % n)
    shutil.rmtree(out, ignore_errors=True)
    run([args.gridforge, "run", CASE, "--device", "cpu", "--out", out, "--quiet",
         "grid.dims=[%d,%d,%d]" % (n, n, n), "heat.steps=%d" % args.steps, "output.every=0",
         "output.formats=[hdf5]", "output.checkpoint_every=0"], env)
    return os.path.join(out, "fields.h5"), "/steps/%06d/u" % args.steps


def write_once(args, n, variant, data, env):
    out = os.path.join(args.out, "w_%d_%s" % (n, variant.replace(":", "_")))
    shutil.rmtree(out, ignore_errors=True)
    path, dataset = data
    run([args.gridforge, "run", CASE, "--device", "cpu", "--out", out, "--quiet",
         "grid.dims=[%d,%d,%d]" % (n, n, n),
         "initial.file={path: %s, dataset: %s}" % (path, dataset),
         "heat.steps=1", "output.every=0", "output.formats=[vtk]", "output.checkpoint_every=0",
         "output.compression=%s" % variant], env)
    with open(os.path.join(out, "timing.json")) as f:
        t = json.load(f)
    vti = [os.path.join(out, "vtk", v) for v in os.listdir(os.path.join(out, "vtk"))]
    size = sum(os.path.getsize(v) for v in vti)
    shutil.rmtree(out, ignore_errors=True)
    return {"size": n, "variant": variant, "write_s": t["output_writer"]["writer_busy_s"],
            "compress_s": t["vtk_output"]["compress_s"],
            "compress_cpu_s": t["vtk_output"]["compress_cpu_s"],
            "threads": t["vtk_output"]["threads"],
            "bytes_in": n ** 3 * 4, "file_bytes": size}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gridforge", required=True)
    p.add_argument("--sizes", default="64,256,512")
    p.add_argument("--variants", default="none,lz4:1,lz4:9,zlib:1,zlib:5")
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, help="OMP_NUM_THREADS for the runs (default: all)")
    p.add_argument("--disk-mb", type=int, default=2000)
    p.add_argument("--out", default="/tmp/gf_output_speed")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    env = dict(os.environ)
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    os.makedirs(args.out, exist_ok=True)
    disk = disk_write_bandwidth(args.out, args.disk_mb)
    print("disk write bandwidth (%d MB, fsync) in %s: %.0f MB/s"
          % (args.disk_mb, args.out, disk / 1e6))
    print("load average before: %.1f (CPU times say more than wall times on a busy machine)"
          % os.getloadavg()[0])
    print("%6s  %-7s  %7s  %8s  %10s  %8s  %12s  %8s  %6s  %7s" % (
        "size", "variant", "threads", "write_s", "MB/s (raw)", "comp_s", "MB/core-s", "file MB",
        "ratio", "disk_s"))
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        data = make_data(args, n, env)
        for v in args.variants.split(","):
            best = min((write_once(args, n, v, data, env) for _ in range(args.repeat)),
                       key=lambda r: r["write_s"])
            best["disk_s"] = best["file_bytes"] / disk
            rows.append(best)
            per_core = (best["bytes_in"] / best["compress_cpu_s"] / 1e6
                        if best["compress_cpu_s"] > 0 else float("nan"))
            print("%4d^3  %-7s  %7d  %8.3f  %10.0f  %8.3f  %12.0f  %8.2f  %6.2f  %7.3f" % (
                n, v, best["threads"], best["write_s"], best["bytes_in"] / best["write_s"] / 1e6,
                best["compress_s"], per_core, best["file_bytes"] / 1e6,
                best["bytes_in"] / best["file_bytes"], best["disk_s"]))
            sys.stdout.flush()
        shutil.rmtree(os.path.join(args.out, "data_%d" % n), ignore_errors=True)
    print("load average after: %.1f" % os.getloadavg()[0])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"disk_Bps": disk, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
