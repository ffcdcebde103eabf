#!/usr/bin/python3
"""Plots a field of a gridforge run's fields.h5 with matplotlib: a 1D field as
a line (u against x), a 2D field as an image (with its physical extent and a
colour bar) or a line through it, a 3D field as a slice (an image of one
plane) or a line through it.

Usage: /usr/bin/python3 postprocess/plot.py RUN_DIR|fields.h5 [--step N|last]
           [--field u] [--slice z=0.5 | --line y=0.5[,z=0.5]] [--range LO HI]
           [--cmap viridis] [--out FILE.png]

A coordinate picks the grid point nearest to it (the title says which). The
PNG is written whole or not at all and its path printed; without --out it is
plot_<field>_<step6>[_<where>].png beside fields.h5. Errors print one line
"plot.py: error: ..." and exit 2 (what was asked is not in the file, or the
command line is wrong) or 1 (the file cannot be read). Needs Debian's numpy,
h5py and matplotlib (/usr/bin/python3)."""
import argparse
import os
import sys
import tempfile

import numpy as np

AXES = "xyz"


class Fail(Exception):
    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


def parse_coords(text, what):
    """'y=0.5,z=0.25' -> {1: 0.5, 2: 0.25}."""
    out = {}
    for part in text.split(","):
        key, eq, val = part.partition("=")
        key = key.strip()
        if not eq or key not in AXES:
            raise Fail(f"{what} {text!r}: expected AXIS=VALUE with AXIS x, y or z, e.g. {what} z=0.5")
        try:
            out[AXES.index(key)] = float(val)
        except ValueError:
            raise Fail(f"{what} {text!r}: {val.strip()!r} is not a number")
        if not np.isfinite(out[AXES.index(key)]):
            raise Fail(f"{what} {text!r}: {val.strip()!r} is not a finite number")
    return out


def open_fields(path):
    import h5py
    if not os.path.exists(path):
        raise Fail(f"{path}: no such file or folder", 1)
    if os.path.isdir(path):
        path = os.path.join(path, "fields.h5")
    if not os.path.exists(path):
        raise Fail(f"{path}: no such file (a run writes fields.h5 when output.formats has hdf5)", 1)
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise Fail(f"cannot open {path}: not an HDF5 file or unreadable ({e})", 1)
    if "dims" not in f.attrs or "steps" not in f:
        f.close()
        raise Fail(f"{path}: not a gridforge fields.h5 (no attribute 'dims' or no group /steps)", 1)
    return path, f


def pick_step(f, path, want):
    names = sorted(f["steps"].keys(), key=lambda n: int(n) if n.isdigit() else -1)
    steps = [int(f["steps"][n].attrs.get("step", int(n) if n.isdigit() else -1)) for n in names]
    if not steps:
        raise Fail(f"{path} holds no steps")
    if want == "last":
        i = len(steps) - 1
    else:
        try:
            s = int(want)
        except ValueError:
            raise Fail(f"--step {want!r}: expected a step number or last")
        if s not in steps:
            raise Fail(f"no step {s} in {path}; steps present: {', '.join(map(str, steps))}")
        i = steps.index(s)
    return f["steps"][names[i]], steps[i]


def nearest(axis, value, origin, h, n):
    lo, hi = origin[axis], origin[axis] + (n[axis] - 1) * h[axis]
    if not (lo - 0.5 * h[axis] <= value <= hi + 0.5 * h[axis]):
        raise Fail(f"{AXES[axis]}={value:g} is outside the grid: {AXES[axis]} spans [{lo:g}, {hi:g}]")
    return int(min(n[axis] - 1, max(0, round((value - origin[axis]) / h[axis]))))


def plot(args):
    path, f = open_fields(args.input)
    with f:
        dims = [int(d) for d in f.attrs["dims"]]
        h = [float(x) for x in f.attrs["spacing"]]
        origin = [float(x) for x in f.attrs["origin"]]
        nd = len(dims)
        group, step = pick_step(f, path, args.step)
        if args.field not in group:
            raise Fail(f"no field {args.field!r} at step {step} in {path}; fields present: "
                       f"{', '.join(sorted(group.keys()))}")
        ds = group[args.field]
        time = float(ds.attrs.get("time", group.attrs.get("time", float("nan"))))
        u = np.asarray(ds[...], dtype=np.float64)
    if u.shape != tuple(reversed(dims)):
        raise Fail(f"{path}: {args.field} at step {step} has shape {list(u.shape)}; the grid's "
                   f"dims {dims} say {list(reversed(dims))}", 1)
    u = u.transpose()  # index [i][j][k], x first
    coords = [origin[a] + h[a] * np.arange(dims[a]) for a in range(nd)]

    fixed = {}
    if args.slice is not None:
        fixed = parse_coords(args.slice, "--slice")
        if nd != 3:
            raise Fail(f"--slice is for 3D fields; this one is {nd}D"
                       + (" (--line x=V or y=V plots a line of it)" if nd == 2 else ""))
        if len(fixed) != 1:
            raise Fail(f"--slice {args.slice!r}: give one axis, e.g. --slice z=0.5")
    elif args.line is not None:
        fixed = parse_coords(args.line, "--line")
        if nd == 1:
            raise Fail("a 1D field is plotted whole: --line is for 2D and 3D fields")
        if len(fixed) != nd - 1:
            raise Fail(f"--line {args.line!r}: a line through a {nd}D field fixes {nd - 1} "
                       f"ax{'is' if nd == 2 else 'es'}, e.g. --line "
                       + ("y=0.5" if nd == 2 else "y=0.5,z=0.5"))
    elif nd == 3:  # the middle z plane
        fixed = {2: coords[2][dims[2] // 2]}
    for a in fixed:
        if a >= nd:
            raise Fail(f"the grid has no {AXES[a]} axis (it is {nd}D)")

    index = [slice(None)] * nd
    where = []
    for a, v in sorted(fixed.items()):
        i = nearest(a, v, origin, h, dims)
        index[a] = i
        where.append((AXES[a], coords[a][i], i))
    data = u[tuple(index)]
    free = [a for a in range(nd) if a not in fixed]

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name = os.path.splitext(os.path.basename(path))[0]
    run = os.path.basename(os.path.dirname(os.path.abspath(path))) or name
    at = ", ".join(f"{ax} = {c:.6g} (point {i} of {dims[AXES.index(ax)]})" for ax, c, i in where)
    title = f"{run}: {args.field} at step {step}, t = {time:.6g}" + (f"\n{at}" if at else "")
    fig, axes = plt.subplots(figsize=(7.5, 5.2) if len(free) == 2 else (7.5, 4.5))
    if len(free) == 1:
        a = free[0]
        axes.plot(coords[a], data, "-", marker="." if dims[a] <= 64 else None, color="C0")
        axes.set_xlabel(AXES[a])
        axes.set_ylabel(args.field)
        if args.range:
            axes.set_ylim(*args.range)
        axes.grid(True, alpha=0.3)
    else:
        a, b = free
        ext = [coords[a][0] - h[a] / 2, coords[a][-1] + h[a] / 2,
               coords[b][0] - h[b] / 2, coords[b][-1] + h[b] / 2]
        lo, hi = (args.range if args.range else (None, None))
        im = axes.imshow(data.transpose(), origin="lower", extent=ext, cmap=args.cmap,
                         vmin=lo, vmax=hi, interpolation="nearest", aspect="equal")
        axes.set_xlabel(AXES[a])
        axes.set_ylabel(AXES[b])
        fig.colorbar(im, ax=axes, label=args.field)
    axes.set_title(title, fontsize=10)
    fig.tight_layout()

    out = args.out
    if not out:
        tag = "".join(f"_{ax}{c:.6g}" for ax, c, _ in where)
        out = os.path.join(os.path.dirname(os.path.abspath(path)),
                           f"plot_{args.field}_{step:06d}{tag}.png")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise Fail(f"--out {out}: no folder {folder}", 1)
    # Written under a temporary name in the same folder, then renamed: whole or not at all.
    fd, tmp = tempfile.mkstemp(prefix=".plot-", suffix=".png", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=100)
        os.replace(tmp, out)
    except OSError as e:
        os.unlink(tmp) if os.path.exists(tmp) else None
        raise Fail(f"cannot write {out}: {e.strerror or e}", 1)
    finally:
        plt.close(fig)
    print(out)


def main():
    p = argparse.ArgumentParser(
        prog="plot.py",
        description="Plot a field of a gridforge run's fields.h5: a 1D line, a 2D image, "
                    "a slice or a line of a 3D field.",
        epilog="examples: plot.py out/heat2d-plate; plot.py out/x/fields.h5 --step 200 "
               "--line y=0.5; plot.py out/heat3d_movie --slice z=0.5 --out z.png")
    p.add_argument("input", help="a run's folder or its fields.h5")
    p.add_argument("--step", default="last", help="the step to plot (default: last)")
    p.add_argument("--field", default="u", help="the field (default: u)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--slice", help="3D: the plane AXIS=VALUE (default: the middle z plane)")
    g.add_argument("--line", help="2D: AXIS=VALUE, 3D: two of them, AXIS=V,AXIS=V: the line "
                                  "along the remaining axis")
    p.add_argument("--range", nargs=2, type=float, metavar=("LO", "HI"),
                   help="colour (image) or y (line) limits; default: the data's")
    p.add_argument("--cmap", default="viridis", help="a matplotlib colormap (default: viridis)")
    p.add_argument("--out", help="the PNG (default: plot_<field>_<step6>[_<where>].png beside fields.h5)")
    args = p.parse_args()
    if args.range and not args.range[0] < args.range[1]:
        p.error(f"--range {args.range[0]:g} {args.range[1]:g}: expected LO < HI")
    try:
        import matplotlib.cm as cm
        if args.cmap not in matplotlib_cmaps(cm):
            raise Fail(f"--cmap {args.cmap!r}: not a matplotlib colormap (viridis, inferno, "
                       f"coolwarm, gray, ...)")
        plot(args)
    except Fail as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        sys.exit(e.code)


def matplotlib_cmaps(cm):
    try:
        import matplotlib
        return list(matplotlib.colormaps)
    except AttributeError:
        return cm.cmap_d.keys()


if __name__ == "__main__":
    main()
