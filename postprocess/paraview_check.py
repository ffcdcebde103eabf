"""Check a gridforge run's outputs the way a user sees them: in ParaView.

Run with ParaView's own Python, under a virtual X server:

    xvfb-run -a pvbatch postprocess/paraview_check.py \
        --pvd OUT/<name>.pvd --xdmf OUT/fields.xdmf --array u --steps N \
        [--range MIN MAX] [--screenshot OUT/check.png] [--compression none|lz4|zlib]
        [--hdf5-compression none|zlib]

It opens <name>.pvd with the PVD reader and fields.xdmf with the Xdmf3
reader, and checks that both series have N time steps at the same times,
that the array exists on every point, that both readers put the grid in the
same place, and, at the LAST time step (UpdatePipeline(t)), that the two
readers give the same values (min/max, and every point exactly: the .vti
files and fields.h5 hold the same bits, whatever output.compression was)
and that the range lies within [MIN, MAX] when --range is given. With
--compression, every .vti the series names (each piece of a .pvti) must say
that compressor (none: no compressor), so a check of a variant cannot pass
on files of another. With --hdf5-compression, every dataset fields.xdmf names
must be stored so in fields.h5 (zlib: chunked, HDF5's shuffle + deflate
filters; none: contiguous, no filter), and the Xdmf3 reader's values at the
last time step must equal those h5py reads from the dataset (h5py from the
Python pvbatch runs; the checks are skipped with a note without it). Exits 1 with one line per failed check, 0 after
printing a summary.
"""

import argparse
import math
import os
import re
import sys
import xml.etree.ElementTree as ET

# `make deps` unpacks python3-paraview into .deps/ of the repository (the
# package cannot be installed beside Debian's pvbatch): put it on the path
# when it is there, so that the command above works as written.
_PV_DEPS = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, ".deps", "python3-paraview", "usr",
    "lib", "python3", "dist-packages"))
if os.path.isdir(os.path.join(_PV_DEPS, "paraview")) and _PV_DEPS not in sys.path:
    sys.path.insert(0, _PV_DEPS)

try:
    from paraview import servermanager
    from paraview import simple
except ImportError as e:
    sys.exit("paraview_check: FAIL: ParaView's Python modules are missing (%s): install "
             "python3-paraview, or put an unpacked copy's dist-packages on PYTHONPATH" % e)

REL_TOL = 1e-6

# output.compression's methods and the compressor a .vti names for each.
COMPRESSORS = {"none": None, "lz4": "vtkLZ4DataCompressor", "zlib": "vtkZLibDataCompressor"}


class CheckFailed(Exception):
    pass


def undo_pvbatch_rewrite(argv):
    """pvbatch turns every single-dash word into a double-dash one ("-1" into
    "--1") before the script sees it; a negative number must come back."""
    out = []
    for a in argv:
        try:
            if a.startswith("--"):
                float(a[2:])
                a = a[1:]
        except ValueError:
            pass
        out.append(a)
    return out


def parse_args(argv):
    argv = undo_pvbatch_rewrite(argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pvd", required=True, help="<name>.pvd written by gridforge")
    p.add_argument("--xdmf", required=True, help="fields.xdmf written by gridforge")
    p.add_argument("--array", required=True, help="point array to check, e.g. u")
    p.add_argument("--steps", required=True, type=int, help="expected number of time steps")
    p.add_argument("--range", nargs=2, type=float, metavar=("MIN", "MAX"),
                   help="bounds the array must stay within at the last time step")
    p.add_argument("--screenshot", help="PNG of the last time step, coloured by the array")
    p.add_argument("--compression", choices=sorted(COMPRESSORS),
                   help="the output.compression method every .vti must have been written with")
    p.add_argument("--hdf5-compression", choices=["none", "zlib"],
                   help="the output.hdf5_compression method fields.h5 must have been written with")
    # argparse takes "-1e-3" for an option (its negative-number pattern has no
    # exponent); widen the pattern so that --range -1e-3 1e-3 works.
    p._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
    return p.parse_args(argv)


def close(a, b, rel=REL_TOL, scale=None):
    scale = max(abs(a), abs(b)) if scale is None else scale
    return abs(a - b) <= rel * scale or a == b


def timesteps(reader):
    # A one-step series gives a bare float; a series without time, nothing.
    t = reader.TimestepValues
    if t is None:
        return []
    return [float(v) for v in t] if hasattr(t, "__len__") else [float(t)]


def open_readers(args):
    for path in (args.pvd, args.xdmf):
        if not os.path.isfile(path):
            raise CheckFailed("no such file: %s" % path)
    pvd = simple.PVDReader(FileName=args.pvd)
    xdmf = simple.Xdmf3ReaderS(FileName=[args.xdmf])
    return {"pvd": pvd, "xdmf": xdmf}


def check_times(readers, steps):
    times = {name: timesteps(r) for name, r in readers.items()}
    for name, t in times.items():
        if len(t) != steps:
            raise CheckFailed("%s has %d time steps, expected %d: %s" % (name, len(t), steps, t))
    for a, b in zip(times["pvd"], times["xdmf"]):
        if not close(a, b, 1e-12, max(abs(a), abs(b), 1e-300)):
            raise CheckFailed("time steps differ: pvd %r, xdmf %r" % (times["pvd"], times["xdmf"]))
    return times["pvd"]


def array_info(reader, name, array, t):
    """Range, point count and bounds of `array` at time t."""
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    if array not in reader.PointData.keys():
        raise CheckFailed("%s: no point array '%s' at t=%r (arrays: %s)"
                          % (name, array, t, list(reader.PointData.keys())))
    a = reader.PointData[array]
    if a.GetNumberOfComponents() != 1:
        raise CheckFailed("%s: '%s' has %d components, expected 1"
                          % (name, array, a.GetNumberOfComponents()))
    n_points = info.GetNumberOfPoints()
    n_tuples = a.GetNumberOfTuples()
    if n_points == 0 or n_tuples != n_points:
        raise CheckFailed("%s: '%s' has %d values for %d points" % (name, array, n_tuples, n_points))
    return {"range": a.GetRange(), "points": n_points, "bounds": info.GetBounds()}


def compare_infos(infos):
    p, x = infos["pvd"], infos["xdmf"]
    if p["points"] != x["points"]:
        raise CheckFailed("point counts differ: pvd %d, xdmf %d" % (p["points"], x["points"]))
    for i, which in enumerate(("min", "max")):
        if not close(p["range"][i], x["range"][i]):
            raise CheckFailed("%s differs: pvd %r, xdmf %r" % (which, p["range"][i], x["range"][i]))
    size = max(abs(b) for b in p["bounds"]) or 1.0
    for bp, bx in zip(p["bounds"], x["bounds"]):
        if not close(bp, bx, 1e-9, size):
            raise CheckFailed("grids differ in place or orientation: pvd bounds %r, xdmf bounds %r"
                              % (p["bounds"], x["bounds"]))


def values_at(reader, array, t):
    """The array's values at time t, as numpy, fetched to this process."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    forced = simple.ForceTime(Input=reader, ForcedTime=t, IgnorePipelineTime=1)
    data = servermanager.Fetch(forced)
    simple.Delete(forced)
    return vtk_to_numpy(data.GetPointData().GetArray(array)).astype("float64")


def compare_points(readers, array, t):
    try:
        import numpy  # noqa: F401  (ParaView's Python may lack it)
    except ImportError:
        print("paraview_check: note: numpy missing, point-by-point comparison skipped")
        return
    p = values_at(readers["pvd"], array, t)
    x = values_at(readers["xdmf"], array, t)
    if p.shape != x.shape:
        raise CheckFailed("array shapes differ: pvd %s, xdmf %s" % (p.shape, x.shape))
    if not (p == x).all():
        worst = float(abs(p - x).max())
        raise CheckFailed("pvd and xdmf values differ at %d of %d points, by up to %g"
                          % (int((p != x).sum()), p.size, worst))


def vti_files(pvd):
    """Every .vti the .pvd names, through the pieces of each .pvti."""
    out = []
    folder = os.path.dirname(pvd)
    for ds in ET.parse(pvd).getroot().iter("DataSet"):
        path = os.path.join(folder, ds.get("file"))
        if path.endswith(".pvti"):
            out += [os.path.join(os.path.dirname(path), piece.get("Source"))
                    for piece in ET.parse(path).getroot().iter("Piece")]
        else:
            out.append(path)
    return out


def check_compression(pvd, method):
    want = COMPRESSORS[method]
    files = vti_files(pvd)
    if not files:
        raise CheckFailed("%s names no .vti files" % pvd)
    for path in files:
        with open(path, "rb") as f:
            head = f.read(4096).split(b"<AppendedData")[0].decode("utf-8", "replace")
        found = re.search(r'compressor="([^"]*)"', head)
        found = found.group(1) if found else None
        if found != want:
            raise CheckFailed("%s: compressor %s, expected %s (output.compression: %s)"
                              % (path, found, want, method))
    return len(files)


def xdmf_datasets(xdmf):
    """(time, array name, h5 file, dataset path) of every attribute fields.xdmf names."""
    out = []
    folder = os.path.dirname(xdmf)
    for grid in ET.parse(xdmf).getroot().iter("Grid"):
        if grid.get("GridType") != "Uniform":
            continue
        t = float(grid.find("Time").get("Value"))
        for attr in grid.iter("Attribute"):
            ref = attr.find("DataItem").text.strip()
            h5, path = ref.split(":", 1)
            out.append((t, attr.get("Name"), os.path.join(folder, h5), path))
    return out


def check_hdf5_storage(readers, xdmf, array, method, t_last):
    """Each dataset stored as output.hdf5_compression says; the Xdmf3 reader's
    values at the last time equal h5py's (through HDF5's own filters)."""
    try:
        import h5py
        import numpy
    except ImportError as e:
        print("paraview_check: note: %s: fields.h5 storage check skipped" % e)
        return 0
    sets = xdmf_datasets(xdmf)
    if not sets:
        raise CheckFailed("%s names no datasets" % xdmf)
    last = None
    for t, name, h5, path in sets:
        with h5py.File(h5, "r") as f:
            d = f[path]
            if method == "zlib":
                ok = d.chunks is not None and d.compression == "gzip" and d.shuffle
            else:
                ok = d.chunks is None and d.compression is None and not d.shuffle
            if not ok:
                raise CheckFailed("%s:%s: chunks %s, compression %s, shuffle %s; expected "
                                  "output.hdf5_compression %s" % (h5, path, d.chunks,
                                                                  d.compression, d.shuffle, method))
            if t == t_last and name == array:
                last = d[...].astype("float64").ravel()
    if last is None:
        raise CheckFailed("%s names no '%s' at t=%r" % (xdmf, array, t_last))
    x = values_at(readers["xdmf"], array, t_last)
    if x.shape != last.shape or not (x == last).all():
        raise CheckFailed("the Xdmf3 reader's '%s' at t=%r differs from h5py's" % (array, t_last))
    return len(sets)


def check_range(infos, lo, hi):
    for name, info in infos.items():
        amin, amax = info["range"]
        if not (lo <= amin and amax <= hi) or math.isnan(amin) or math.isnan(amax):
            raise CheckFailed("%s: range [%r, %r] at the last time step is outside [%r, %r]"
                              % (name, amin, amax, lo, hi))


def screenshot(reader, array, t, path):
    view = simple.GetActiveViewOrCreate("RenderView")
    view.ViewTime = t
    view.ViewSize = [800, 600]
    display = simple.Show(reader, view)
    # ParaView's defaults (Outline for 3D images, Slice for 2D) show nothing
    # of a 3D field and fail on a 1D one; Surface works for all three.
    display.SetRepresentationType("Surface")
    display.LineWidth = 3.0
    simple.ColorBy(display, ("POINTS", array))
    display.RescaleTransferFunctionToDataRange(False, True)
    display.SetScalarBarVisibility(view, True)
    bounds = reader.GetDataInformation().GetBounds()
    if bounds[5] > bounds[4]:  # 3D: looking down z would show one face only
        view.ApplyIsometricView()
    view.ResetCamera()
    simple.Render(view)
    simple.SaveScreenshot(path, view, ImageResolution=[800, 600])
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        raise CheckFailed("no screenshot written to %s" % path)


def run(args):
    if args.compression:
        n = check_compression(args.pvd, args.compression)
        print("paraview_check: %d .vti files written with compression %s"
              % (n, args.compression))
    readers = open_readers(args)
    times = check_times(readers, args.steps)
    t = times[-1]
    infos = {name: array_info(r, name, args.array, t) for name, r in readers.items()}
    compare_infos(infos)
    compare_points(readers, args.array, t)
    if args.hdf5_compression:
        n = check_hdf5_storage(readers, args.xdmf, args.array, args.hdf5_compression, t)
        if n:
            print("paraview_check: %d fields.h5 datasets stored with hdf5 compression %s, "
                  "read by Xdmf3 as by h5py" % (n, args.hdf5_compression))
    if args.range:
        check_range(infos, *args.range)
    if args.screenshot:
        screenshot(readers["pvd"], args.array, t, args.screenshot)
    p = infos["pvd"]
    print("paraview_check: OK: %d time steps %r..%r; '%s' on %d points, range [%r, %r] at t=%r "
          "(pvd and xdmf agree)" % (len(times), times[0], t, args.array, p["points"],
                                    p["range"][0], p["range"][1], t))


def main(argv):
    args = parse_args(argv)
    try:
        run(args)
    except CheckFailed as e:
        print("paraview_check: FAIL: %s" % e, file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        # Not sys.exit: after a render, pvbatch's teardown from inside
        # sys.exit dies with an X error (GLXBadContext) under Xvfb.
        os._exit(1)


# Success ends the script normally (exit status 0), for the same reason.
if __name__ == "__main__":
    main(sys.argv[1:])
