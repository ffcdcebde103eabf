#!/usr/bin/python3
"""Checks the files a `gridforge run` wrote (SPEC §4) against each other:
run.json, timing.json, log.csv, <name>.pvd + vtk/*.vti, fields.h5 + fields.xdmf;
for raymarch <name>.png and image.h5; with render: the frames/ PNGs.
Usage: check_run.py OUT_DIR CASE.yaml"""
import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np


def fail(msg):
    print("check_run: FAIL: " + msg)
    sys.exit(1)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        fail(f"{path} is not a PNG file")
    return struct.unpack(">II", head[16:24])


def png_pixels(path):
    try:
        import matplotlib.image as mpimg
    except ImportError:
        return None
    return mpimg.imread(path)


def check_raymarch(out, t):
    """<name>.png of the image's size, image.h5 the same image in float RGBA."""
    name = t["case"]
    for k in ("image", "ms_per_frame", "rays_per_s", "mode"):
        if k not in t:
            fail(f"timing.json lacks {k}")
    w, h = t["image"]
    png = os.path.join(out, name + ".png")
    if png_size(png) != (w, h):
        fail(f"{png} is {png_size(png)}, expected {(w, h)}")
    if not t["rays_per_s"] > 0:
        fail("timing.json rays_per_s is not positive")
    h5 = os.path.join(out, "image.h5")
    if os.path.exists(h5):
        with h5py.File(h5, "r") as f:
            img = f["image"][...]
        if img.shape != (h, w, 4) or img.dtype != np.float32:
            fail(f"image.h5 /image is {img.shape} {img.dtype}, expected ({h}, {w}, 4) float32")
        if not np.isfinite(img).all() or img.min() < 0 or img[..., 3].max() > 1:
            fail("image.h5 holds values outside [0, 1] or non-finite ones")
        px = png_pixels(png)
        if px is not None:
            # As the writer rounds: float32 c·255, halves away from zero.
            want = np.floor(np.clip(img[..., :3], 0, 1) * np.float32(255) + 0.5)
            if np.abs(px[..., :3] * 255 - want).max() > 0.5:
                fail("the PNG is not image.h5's RGB rounded to 8 bits (row 0 the top)")
    print(f"check_run: ok: {name}: {w}x{h} {t['mode']}, {t['ms_per_frame']:.3g} ms per frame")


def check_frames(out, t, steps):
    """frames/<name>_<step6>.png at every multiple of render.every."""
    r = t["render"]
    want = [s for s in range(0, steps + 1, r["every"])]
    names = sorted(os.listdir(os.path.join(out, "frames")))
    expect = [f"{t['case']}_{s:06d}.png" for s in want]
    if names != expect:
        fail(f"frames/ holds {names}, expected {expect}")
    if r["frames"] != len(want):
        fail(f"timing.json render.frames is {r['frames']}, expected {len(want)}")
    for n in names:
        if png_size(os.path.join(out, "frames", n)) != tuple(r["image"]):
            fail(f"frames/{n} is not {r['image']}")
        if r["mode"] in ("image", "line plot"):  # 2D and 1D frames, drawn from the field
            px = png_pixels(os.path.join(out, "frames", n))
            if px is None:
                continue
            colours = len(np.unique(px[..., :3].reshape(-1, 3), axis=0))
            if colours < 3:
                fail(f"frames/{n} ({r['mode']}) has {colours} colours: blank")
            if r["mode"] == "line plot" and not (np.abs(px[..., :3] - [0.122, 0.467, 0.706]).max(axis=-1) < 0.01).any():
                fail(f"frames/{n}: no line in the line plot")


def check_hdf5_storage(f, t, keys):
    """Every field dataset stored as timing.json's hdf5_output says
    (output.hdf5_compression): zlib: chunked, shuffle + deflate at its level,
    the chunks' bytes counted; none: contiguous. h5dump, where installed,
    names the same filters."""
    rec = t.get("hdf5_output")
    if rec is None:
        fail("timing.json lacks hdf5_output")
    method = rec["compression"]
    for k in keys:
        for name, d in f["steps"][k].items():
            if method == "none":
                ok = d.chunks is None and d.compression is None
            else:
                ok = (d.chunks is not None and d.compression == "gzip" and d.shuffle and
                      d.compression_opts == int(method.split(":")[1]))
            if not ok:
                fail(f"fields.h5 /steps/{k}/{name}: chunks {d.chunks}, compression "
                     f"{d.compression} {d.compression_opts}, shuffle {d.shuffle}; timing.json "
                     f"says {method}")
    if method != "none" and not 0 < rec["bytes_out"] <= rec["bytes_in"] + 64 * rec["chunks"]:
        fail(f"timing.json hdf5_output counts {rec}")
    h5dump = shutil.which("h5dump")
    if h5dump and method != "none":
        d = f"/steps/{keys[-1]}/u"
        text = subprocess.run([h5dump, "-p", "-H", "-d", d, f.filename], capture_output=True,
                              text=True).stdout
        if "SHUFFLE" not in text or "DEFLATE" not in text:
            fail(f"h5dump -p -H -d {d} names no SHUFFLE and DEFLATE filters:\n{text}")


def main():
    out, case = sys.argv[1], sys.argv[2]
    run = json.load(open(os.path.join(out, "run.json")))
    for k in ("version", "git_commit", "build", "command_line", "device", "case",
              "start_time", "end_time"):
        if k not in run:
            fail(f"run.json lacks {k}")
    if run["status"] != "completed":
        fail("run.json status " + run["status"])

    t = json.load(open(os.path.join(out, "timing.json")))
    for k in ("case", "workload", "device", "precision", "grid", "steps", "phases_s",
              "per_step_ms", "points_per_s", "effective_GBps", "device_memory_peak_bytes",
              "host_memory_peak_bytes"):
        if k not in t:
            fail(f"timing.json lacks {k}")
    phases = ("startup", "setup", "upload", "compute", "download", "output")
    for k in phases + ("total",):
        if t["phases_s"].get(k, -1) < 0:
            fail(f"timing.json phases_s.{k} missing or negative")
    # total is the whole process: every phase lies within it (1 ms for rounding).
    if sum(t["phases_s"][k] for k in phases) > t["phases_s"]["total"] + 1e-3:
        fail(f"timing.json phases add up to more than total: {t['phases_s']}")
    # The process holds at least its fields (the CPU's allocator counts host memory).
    if not t["host_memory_peak_bytes"] >= t["device_memory_peak_bytes"] > 0:
        fail("timing.json host_memory_peak_bytes %r is below the fields' %r"
             % (t["host_memory_peak_bytes"], t["device_memory_peak_bytes"]))
    if "vtk_output" in t and t["vtk_output"]["blocks_inline"] != 0:
        fail(f"VTK compressed blocks itself, one thread: {t['vtk_output']}")
    name, steps = t["case"], t["steps"]
    if t["workload"] == "raymarch":
        check_raymarch(out, t)
        return
    if "render" in t:
        check_frames(out, t, t.get("iterations", steps))

    laplace = t["workload"] == "laplace"
    rows = list(csv.DictReader(open(os.path.join(out, "log.csv"))))
    first = "iteration" if laplace else "step"
    # One field (u): min, max, mean; several (pde): <name>_min, ... for each.
    fields = t.get("fields", ["u"])
    stats = ["min", "max", "mean"]
    header = ["iteration", "residual"] if laplace else ["step", "time", "wall_s"] + (
        stats if len(fields) == 1 else [f"{n}_{s}" for n in fields for s in stats])
    if list(rows[0].keys()) != header:
        fail(f"log.csv header {list(rows[0].keys())}")
    if int(float(rows[-1][first])) != steps or int(float(rows[0][first])) != 0:
        fail(f"log.csv does not run from {first} 0 to the last one")
    if laplace:
        for k in ("method", "iterations", "residual", "tolerance", "reason"):
            if k not in t:
                fail(f"timing.json lacks {k}")
        if t["iterations"] != steps:
            fail("timing.json iterations differ from steps")
        if t["reason"] not in ("converged", "direct") or not t["residual"] <= t["tolerance"]:
            fail(f"laplace run ended {t['reason']} with residual {t['residual']}")

    pvd = ET.parse(os.path.join(out, name + ".pvd")).getroot()
    sets = pvd.findall("./Collection/DataSet")
    times = [float(d.get("timestep")) for d in sets]
    for d in sets:
        if not os.path.isfile(os.path.join(out, d.get("file"))):
            fail("missing " + d.get("file"))
    if times != sorted(times) or len(times) < 1:
        fail(f"pvd times not increasing: {times}")

    with h5py.File(os.path.join(out, "fields.h5"), "r") as f:
        keys = sorted(f["steps"].keys())
        if len(keys) != len(sets):
            fail(f"fields.h5 has {len(keys)} steps, the pvd {len(sets)}")
        if int(keys[-1]) != steps:
            fail(f"last step in fields.h5 is {keys[-1]}, expected {steps}")
        h5times = [float(f["steps"][k].attrs["time"]) for k in keys]
        if not np.allclose(h5times, times, rtol=1e-12, atol=0):
            fail(f"fields.h5 times {h5times} differ from the pvd {times}")
        dims = list(f.attrs["dims"])
        last = rows[-1]
        for name_f in fields:
            u = f["steps"][keys[-1]][name_f][...]
            if list(u.shape) != dims[::-1]:
                fail(f"dataset shape {u.shape} is not dims reversed {dims}")
            if not np.isfinite(u).all():
                fail(f"non-finite values in the last step of {name_f}")
            col = "" if len(fields) == 1 else name_f + "_"
            if not laplace and (
                    not np.isclose(u.min(), float(last[col + "min"]), rtol=1e-6, atol=1e-12) or
                    not np.isclose(u.max(), float(last[col + "max"]), rtol=1e-6, atol=1e-12)):
                fail(f"log.csv min/max of {name_f} at the last step differ from fields.h5")
        check_hdf5_storage(f, t, keys)

    xdmf = ET.parse(os.path.join(out, "fields.xdmf")).getroot()
    grids = xdmf.findall(".//Grid[@GridType='Uniform']")
    if len(grids) != len(sets):
        fail(f"fields.xdmf has {len(grids)} grids, expected {len(sets)}")

    leftovers = [n for n in os.listdir(out) if n.startswith(".") or n.endswith(".tmp")]
    if leftovers:
        fail(f"temporary files left behind: {leftovers}")
    print(f"check_run: ok: {name}: {len(sets)} outputs, {steps} steps, last t = {times[-1]:.6g}")


if __name__ == "__main__":
    main()
