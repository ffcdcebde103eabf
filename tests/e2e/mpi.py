#!/usr/bin/python3
"""Runs over MPI ranks against the one-rank run, end to end on the CPU (issue 8).

Usage: mpi.py GRIDFORGE MODE OUT_BASE   (run from the source tree)
GF_MPI_DEVICE=cuda runs on the GPU instead (tests/gpu/run_on_gpu.sh, part mpi).

Every mode runs a small case without mpirun (one process, MPI never
initialised) and with `mpirun -np N` for the rank layouts listed, and
compares every field of every output step of fields.h5. Modes:
  heat2d, heat3d_periodic, stencil_box27, stencil_radius2, jacobi, sor:
      bit for bit (numpy.array_equal), including periodic axes split over
      ranks (two ranks on a periodic axis: the same neighbour on both sides),
      uneven splits and 2×2 splits (edges and corners of box stencils).
  multigrid: laplace.method multigrid (the fine level split over the ranks,
      the coarse levels on rank 0) bit for bit and at the same iterations
      in log.csv: 3D 65×47×33 (Neumann, Dirichlet and an odd periodic y:
      3 colours) V and F cycles on 2 to 4 ranks split along every axis, 2D
      65² with walls and 33×29 with an odd periodic x, float32; cg with the
      multigrid and the Jacobi preconditioners and implicit heat with the
      multigrid one, within the solver's tolerance (as cg below).
  cg, heat_implicit: within the solver's tolerance (CG's dot products are
      sums over ranks, whose order depends on the rank count).
  files: the one-rank folder's files and the N-rank folder's agree: log.csv
      (same steps, min and max equal, mean within rounding), timing.json
      (ranks, rank_dims, the global grid), the .pvd listing one .pvti per
      step whose pieces tile the whole extent, fields.xdmf as on one rank.
  overlap: the halo exchange overlapped with the interior update
      (GRIDFORGE_HALO_OVERLAP=1, the default on the CPU; tests/gpu/mpi_part.sh
      sets it on the GPU): explicit heat (3D, periodic axes
      split over 2 and 3 ranks, uneven splits, 2×2) and Jacobi (2D, uneven,
      periodic), bit for bit (on the GPU too, GF_MPI_RTOL notwithstanding),
      rank 0's log saying the steps overlapped (on the GPU only where the
      marches run: no x split); then once with GRIDFORGE_HALO_OVERLAP=0, bit
      for bit too and saying so.
  time_block: temporal blocking over ranks (halos time_block stencil radii
      deep, exchanged after each pass): explicit heat (3D, periodic and
      walled axes split, uneven, float32 and float64, a source field) with
      heat.time_block 2 and 3, the star7 stencil with 2 to 4, Jacobi (3D)
      with 2 to 4, and auto; in 2D heat (a periodic x), star5 and Jacobi
      with 2 to 4
      (as deep as the thinnest block allows), each against one rank taking
      one step a pass, bit for bit; timing.json and rank 0's log say the
      depth taken.
  render: in-situ frames (the heat movie; the 2D image and 1D line plot of
      heat2d_frames and heat1d_frames) and a raymarch render over ranks,
      drawn by rank 0 from the gathered field: every frame's PNG and the
      render's image.h5 byte for byte one rank's, the fields bit for bit,
      timing.json saying the ranks; no frames folder written by other ranks.
  pde: the pde workload (two fields, each its own boundary) bit for bit:
      2D (periodic x split over 2 ranks, a Dirichlet face whose value reads
      t, a coefficient under div(k*grad u), ssprk3; float64 and float32),
      3D (rk4, periodic z split, 2×2), 1D (cases/pde_moving_boundary.yaml);
      log.csv's <f>_min/_max/_mean and the .pvti of both fields as one
      rank's.
  restart: a checkpoint written on 2 ranks (one global file, as one rank
      writes it) restarted on 3 ranks, on 2 and on one: N/2 + restart = N bit
      for bit against one rank's uninterrupted run, fields.h5 (every field)
      and the .pvd continued (explicit heat, pde with two fields, jacobi,
      multigrid stopped after 3 of its cycles).
  errors: grid.ranks that does not multiply to the ranks, more ranks than
      points on an axis, blocks narrower than the halo, fft and
      laplace.precision mixed over several ranks, another subcommand under mpirun: exit 2, one message, no output
      folder.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

GF, MODE, BASE = sys.argv[1], sys.argv[2], sys.argv[3]
MPIRUN = os.environ.get("GF_MPIRUN", "mpirun").split()  # may carry options (-x VAR)
DEVICE = os.environ.get("GF_MPI_DEVICE", "cpu")
# GF_MPI_RTOL (the GPU part of tests/gpu/run_on_gpu.sh): a field that is not
# bit for bit is reported and passes within this relative L2 difference.
GPU_RTOL = float(os.environ.get("GF_MPI_RTOL", "0")) or None
# GF_MPI_MAXNP: layouts with more ranks are skipped (NCCL needs a GPU per rank).
MAXNP = int(os.environ.get("GF_MPI_MAXNP", "0")) or None
# One thread a rank: ranks share the machine's cores (CI has 2).
ENV = dict(os.environ, OMP_NUM_THREADS="1")
# The ASan build (make test-asan): Open MPI keeps allocations to its exit.
if "ASAN_OPTIONS" in ENV:
    ENV["ASAN_OPTIONS"] += ":detect_leaks=0"



def fail(msg):
    print(f"mpi {MODE}: FAIL: {msg}")
    sys.exit(1)


def mpirun(np_):
    return MPIRUN + ["--allow-run-as-root", "--oversubscribe", "-np", str(np_)]


def run(case, out, *args, np_=1, rc=0, env=None, quiet=True):
    cmd = ([] if np_ == 1 else mpirun(np_)) + [GF, "run", case, "--device", DEVICE,
                                                 *(["--quiet"] if quiet else []), "--out", out, *args]
    p = subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=300)
    if p.returncode != rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {rc}\n{p.stdout}{p.stderr}")
    return p


def steps_of(out):
    """{step: {field: array}}, every field of every output step of fields.h5."""
    with h5py.File(os.path.join(out, "fields.h5"), "r") as f:
        return {s: {n: f["steps"][s][n][...] for n in f["steps"][s]} for s in f["steps"]}


def compare(ref, got, label, rtol=None, strict=False):
    a, b = steps_of(ref), steps_of(got)
    if sorted(a) != sorted(b):
        fail(f"{label}: output steps {sorted(b)}, one rank wrote {sorted(a)}")
    for s in a:
        if sorted(a[s]) != sorted(b[s]):
            fail(f"{label}: step {s} holds fields {sorted(b[s])}, one rank's {sorted(a[s])}")
        for name in a[s]:
            compare_field(a[s][name], b[s][name], f"{label}: step {s} {name}", rtol, strict)
    n = len(next(iter(a.values()), {}))
    print(f"mpi {MODE}: {label}: {len(a)} steps of {n} field{'s' * (n != 1)} "
          f"{'bit for bit' if rtol is None else 'within ' + str(rtol)}")


def compare_field(x, y, label, rtol, strict):
    if x.shape != y.shape:
        fail(f"{label}: shape {y.shape}, one rank {x.shape}")
    if rtol is None and GPU_RTOL and not strict and not np.array_equal(x, y):
        # The GPU's kernels take other paths on other block shapes (tiles,
        # vector rows): reported, and held to a tolerance instead.
        err = np.linalg.norm((x - y).ravel().astype(float)) / max(
            np.linalg.norm(x.ravel().astype(float)), 1e-300)
        print(f"mpi {MODE}: {label}: NOT bit for bit on {DEVICE}: relative L2 {err:.3g}")
        if not err <= GPU_RTOL:
            fail(f"{label}: relative L2 difference {err:.3g} > {GPU_RTOL:.3g}")
        return
    if rtol is None:
        if not np.array_equal(x, y):
            d = np.abs(x.astype(float) - y.astype(float))
            i = np.unravel_index(np.argmax(d), d.shape)
            fail(f"{label} differs from one rank: max |diff| {d.max():.3g} at {i}")
    else:
        err = np.linalg.norm((x - y).ravel()) / max(np.linalg.norm(x.ravel()), 1e-300)
        if not err <= rtol:
            fail(f"{label}: relative L2 difference {err:.3g} > {rtol:.3g}")


def log_rows(out):
    with open(os.path.join(out, "log.csv")) as f:
        return list(csv.DictReader(f))


def write_case(name, text):
    os.makedirs(BASE, exist_ok=True)
    path = os.path.join(BASE, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def against_one_rank(case, layouts, *args, rtol=None, rc=0):
    """layouts: (np, grid.ranks or None); the one-rank run first."""
    ref = os.path.join(BASE, "np1")
    shutil.rmtree(ref, ignore_errors=True)
    run(case, ref, *args, rc=rc)
    for np_, ranks in layouts:
        if MAXNP and np_ > MAXNP:
            print(f"mpi {MODE}: {np_} ranks skipped (GF_MPI_MAXNP={MAXNP})")
            continue
        tag = f"np{np_}" + ("" if ranks is None else "_" + "x".join(map(str, ranks)))
        out = os.path.join(BASE, tag)
        shutil.rmtree(out, ignore_errors=True)
        extra = [] if ranks is None else [f"grid.ranks=[{','.join(map(str, ranks))}]"]
        run(case, out, *args, *extra, np_=np_, rc=rc)
        compare(ref, out, tag, rtol)
    return ref


HEAT3D = """
name: heat3d-periodic
workload: heat
precision: {prec}
grid: {{dims: [12, 10, 9], extent: [1.0, 0.8, 0.9]}}
initial: {{expr: "sin(2*pi*x) + cos(2*pi*z)*y + 0.1*x*y*z"}}
boundary:
  default: {{type: dirichlet, value: "x + 2*z"}}
  x: {{type: periodic}}
  z: {{type: periodic}}
  y+: {{type: neumann, gradient: 0.5}}
heat: {{alpha: 0.01, steps: 40, source: "x*y"}}
output: {{every: 20, formats: [hdf5]}}
"""

BOX27 = """
name: box27
workload: stencil
grid: {dims: [14, 13, 11], spacing: [0.1, 0.1, 0.1]}
initial: {expr: "exp(-((x-0.6)^2+(y-0.5)^2+(z-0.4)^2)/0.1) + 0.3*x*y"}
boundary:
  default: {type: neumann, gradient: 0.2}
  x: {type: dirichlet, value: "y*z"}
  z: {type: periodic}
stencil: {preset: box27, form: update, coeff: 1.0e-4, steps: 24}
output: {every: 8, formats: [hdf5]}
"""

# Radius 2 with diagonal taps: what crosses the edges and corners of a 2×2 split.
RADIUS2 = """
name: radius2
workload: stencil
grid: {dims: [13, 12, 11]}
initial: {expr: "sin(3*x)*cos(2*y) + z*z"}
boundary:
  default: {type: dirichlet, value: "x - y"}
  y: {type: periodic}
  z-: {type: neumann, gradient: 1.0}
stencil:
  points: [[0, 0, 0, -1.0], [2, 1, 0, 0.3], [-1, -2, 0, 0.2], [1, -1, 2, 0.25], [-2, 2, -1, 0.15],
           [2, 2, 2, 0.05], [-2, -2, -2, 0.05]]
  form: update
  coeff: 0.1
  steps: 16
output: {every: 8, formats: [hdf5]}
"""


def mode_heat2d():
    against_one_rank("cases/heat2d_plate.yaml", [(2, None), (3, None), (3, [3, 1]), (2, [2, 1])],
                     "grid.dims=[33,29]", "heat.t_end=0.01", "output.every=150",
                     "output.formats=[hdf5]")


def mode_wave():
    # the leapfrog's two levels over ranks: the earlier level needs no halo
    against_one_rank("cases/wave2d_membrane.yaml", [(2, None), (3, [1, 3]), (4, [2, 2])],
                     "grid.dims=[33,29]", "wave.t_end=0.3", "output.every=20",
                     "output.formats=[hdf5]")


def mode_heat3d_periodic():
    for prec in ("float64", "float32"):
        case = write_case("heat3d_" + prec, HEAT3D.format(prec=prec))
        against_one_rank(case, [(2, None), (2, [2, 1, 1]), (3, [1, 1, 3]), (3, [3, 1, 1]),
                                (4, [2, 1, 2])])


def mode_stencil_box27():
    case = write_case("box27", BOX27)
    against_one_rank(case, [(2, None), (3, [1, 3, 1]), (2, [1, 1, 2]), (4, [1, 2, 2]),
                            (4, [2, 2, 1])])


def mode_stencil_radius2():
    case = write_case("radius2", RADIUS2)
    against_one_rank(case, [(2, None), (3, [1, 3, 1]), (4, [1, 2, 2]), (4, [2, 2, 1])])
    # a 2D radius-2 preset on a grid periodic on both axes
    against_one_rank("cases/stencil2d_star9.yaml", [(3, None), (4, [2, 2])],
                     "grid.dims=[30,26]", "stencil.steps=20", "output.every=10",
                     "output.formats=[hdf5]")


def laplace_args(method):
    # A fixed number of sweeps (max_iters, a tolerance it cannot reach: exit 1,
    # the last iterate written) so that no residual decides when to stop.
    return [f"laplace.method={method}", "grid.dims=[30,26]", "laplace.max_iters=300",
            "laplace.check_every=100", "laplace.tolerance=1e-30", "output.formats=[hdf5]"]


def mode_jacobi():
    against_one_rank("cases/laplace2d_plate.yaml", [(2, None), (3, None), (3, [3, 1])],
                     *laplace_args("jacobi"), rc=1)
    against_one_rank("cases/laplace2d_plate.yaml", [(2, [2, 1]), (3, [1, 3])],
                     *laplace_args("jacobi"), "boundary.x={type: periodic}", rc=1)


def mode_sor():
    against_one_rank("cases/laplace2d_plate.yaml", [(2, None), (3, None), (3, [3, 1])],
                     *laplace_args("sor"), rc=1)
    against_one_rank("cases/laplace2d_plate.yaml", [(2, [2, 1]), (4, [2, 2])],
                     *laplace_args("sor"), "boundary.x={type: periodic}", rc=1)


def mode_cg():
    against_one_rank("cases/laplace3d_box.yaml", [(2, None), (3, None), (4, [1, 2, 2])],
                     "grid.dims=[17,15,13]", "output.formats=[hdf5]", rtol=1e-6)


def mode_heat_implicit():
    against_one_rank("cases/heat3d_implicit.yaml", [(2, None), (3, [3, 1, 1])],
                     "grid.dims=[15,13,11]", "heat.steps=6", "output.every=3",
                     "output.formats=[hdf5]", rtol=1e-8)


# Multigrid over ranks: 65×47×33 (47 → 24 → 13: not nested; semi-coarsened)
# with a Neumann face, a Dirichlet face and a periodic y of odd length (3
# colours), and 2D on 2^k + 1 points and on a periodic x of odd length.
MG3D = """
name: mg3d
workload: laplace
precision: float64
grid: {dims: [65, 47, 33], extent: [1.0, 0.72, 0.5]}
boundary:
  default: {type: dirichlet, value: "x*y + z"}
  x-: {type: neumann, gradient: 0.5}
  y: {type: periodic}
  z+: {type: neumann, gradient: -1.0}
laplace: {method: multigrid, cycle: {cycle}, rhs: "sin(3*x)*cos(2*y) - z", tolerance: 1.0e-9,
          max_iters: 40, check_every: 1}
output: {every: 0, formats: [hdf5]}
"""

MG2D = """
name: mg2d
workload: laplace
precision: float64
grid: {{dims: {dims}, extent: [1.0, 1.0]}}
boundary:
  default: {{type: dirichlet, value: "x - 2*y"}}
  x: {{type: {x}}}
  y+: {{type: neumann, gradient: 1.0}}
laplace: {{method: multigrid, rhs: "exp(x)*sin(5*y)", tolerance: 1.0e-10, max_iters: 40,
          check_every: 1}}
output: {{every: 0, formats: [hdf5]}}
"""


def mode_multigrid():
    """The fine level split over ranks, the coarse levels on rank 0: the same
    arithmetic as one rank, so bit for bit and the same number of cycles."""
    def cycles(out):  # the iterations of log.csv's rows: one a cycle (check_every 1)
        return [r["iteration"] for r in log_rows(out)]

    def against(case, layouts, *args, rtol=None):
        ref = against_one_rank(case, layouts, *args, rtol=rtol)
        for np_, ranks in layouts:
            if MAXNP and np_ > MAXNP:
                continue
            tag = f"np{np_}" + ("" if ranks is None else "_" + "x".join(map(str, ranks)))
            got = os.path.join(BASE, tag)
            if cycles(got) != cycles(ref):
                fail(f"{case} {tag}: log.csv at iterations {cycles(got)}, one rank's at "
                     f"{cycles(ref)}")
        print(f"mpi {MODE}: {os.path.basename(case)}: {cycles(ref)[-1]} iterations on every "
              "layout, as one rank")

    for cycle in ("v", "f"):
        case = write_case("mg3d_" + cycle, MG3D.replace("{cycle}", cycle))
        layouts = [(2, None), (3, [1, 3, 1]), (4, [2, 1, 2])]
        if cycle == "v":
            layouts += [(3, [3, 1, 1]), (2, [1, 1, 2]), (4, [1, 2, 2])]
        against(case, layouts)
    against(write_case("mg2d_walls", MG2D.format(dims="[65, 65]", x="neumann")),
            [(2, None), (3, None), (4, [2, 2])])
    against(write_case("mg2d_periodic", MG2D.format(dims="[33, 29]", x="periodic")),
            [(2, [2, 1]), (3, [3, 1]), (4, [2, 2])])
    # float32 too: the same arithmetic
    against(write_case("mg2d_f32", MG2D.format(dims="[33, 29]", x="periodic")
                       .replace("float64", "float32").replace("1.0e-10", "1.0e-3")),
            [(3, [3, 1])])
    # CG preconditioned by a multigrid V-cycle (and by Jacobi, which runs on
    # the multigrid executor): CG's dot products are sums over ranks
    for pre in ("multigrid", "jacobi"):
        against("cases/laplace3d_box.yaml", [(2, None), (3, [1, 3, 1])], "grid.dims=[17,15,13]",
                "output.formats=[hdf5]", f"laplace.preconditioner={pre}", rtol=1e-6)
    against_one_rank("cases/heat3d_implicit.yaml", [(3, [3, 1, 1])], "grid.dims=[15,13,11]",
                     "heat.steps=6", "output.every=3", "output.formats=[hdf5]",
                     "heat.solver.preconditioner=multigrid", rtol=1e-8)


# Rows of whole 16-byte vectors in x (16 points), so that on the GPU the
# marches run, and with them the overlap, wherever x is not split.
HEAT3D_OVERLAP = HEAT3D.replace("dims: [12, 10, 9]", "dims: [16, 17, 13]")


def mode_overlap():
    def layouts_run(case, layouts, *args, env=None, expect="overlap the halo exchange", rc=0):
        for np_, ranks in layouts:
            if MAXNP and np_ > MAXNP:
                print(f"mpi {MODE}: {np_} ranks skipped (GF_MPI_MAXNP={MAXNP})")
        layouts = [(np_, ranks) for np_, ranks in layouts if not (MAXNP and np_ > MAXNP)]
        if not layouts:
            return
        ref = os.path.join(BASE, "np1")
        shutil.rmtree(ref, ignore_errors=True)
        run(case, ref, *args, rc=rc)
        for np_, ranks in layouts:
            tag = f"np{np_}_" + "x".join(map(str, ranks))
            out = os.path.join(BASE, tag)
            shutil.rmtree(out, ignore_errors=True)
            p = run(case, out, *args, f"grid.ranks=[{','.join(map(str, ranks))}]", np_=np_,
                    rc=rc, env=env, quiet=False)
            # The GPU splits a step only where its marches run: not on blocks
            # split in x (their rows are not whole vectors).
            want = expect if DEVICE == "cpu" or ranks[0] == 1 or "OVERLAP=0" in expect else None
            lines = [l for l in p.stderr.splitlines() if l.startswith("mpi:")]
            if want and not any(want in l for l in lines):
                fail(f"{tag}: rank 0's log does not say '{want}': {lines}")
            # bit for bit on the GPU too: the split step's kernels compute
            # each point by the same formula as the whole step's
            compare(ref, out, tag + (" (" + want + ")" if want else ""), strict=True)

    # explicit heat, 3D, x and z periodic: z split over 3 (uneven, periodic),
    # y over 3 (uneven, walls), x over 2 (periodic, both neighbours the same
    # rank), 2×2 in y and z (edges), and a 4-rank split of x and z
    for prec in ("float64", "float32"):
        case = write_case("heat3d_overlap_" + prec, HEAT3D_OVERLAP.format(prec=prec))
        layouts_run(case, [(2, [1, 1, 2]), (3, [1, 1, 3]), (3, [1, 3, 1]), (2, [2, 1, 1]),
                           (4, [1, 2, 2]), (4, [2, 1, 2])])
    # Jacobi, 2D: y over 3 (uneven), x over 3; periodic x over 2 and y over 3
    # (one sweep a pass: with auto, 300 sweeps would deepen the halo for the
    # 2D passes, and blocks under 3 halo widths thick exchange after each step)
    args = [a for a in laplace_args("jacobi") if not a.startswith("grid.dims")] + [
        "grid.dims=[32,28]", "laplace.time_block=1"]
    layouts_run("cases/laplace2d_plate.yaml", [(2, [1, 2]), (3, [1, 3]), (3, [3, 1])], *args, rc=1)
    layouts_run("cases/laplace2d_plate.yaml", [(2, [2, 1]), (3, [1, 3])], *args,
                "boundary.x={type: periodic}", rc=1)
    # the exchange after the whole step, for comparison
    env = dict(ENV, GRIDFORGE_HALO_OVERLAP="0")
    case = write_case("heat3d_overlap_float64", HEAT3D_OVERLAP.format(prec="float64"))
    layouts_run(case, [(2, [1, 1, 2]), (3, [1, 1, 3])], env=env,
                expect="after each step (GRIDFORGE_HALO_OVERLAP=0)")
    layouts_run("cases/laplace2d_plate.yaml", [(3, [1, 3])], *args, env=env, rc=1,
                expect="after each step (GRIDFORGE_HALO_OVERLAP=0)")


def mode_time_block():
    def blocked(case, k_args, layouts, steps_key, rc=0):
        ref = os.path.join(BASE, "np1")
        shutil.rmtree(ref, ignore_errors=True)
        run(case, ref, *k_args, f"{steps_key}.time_block=1", rc=rc)
        for np_, ranks, k in layouts:
            if MAXNP and np_ > MAXNP:
                print(f"mpi {MODE}: {np_} ranks skipped (GF_MPI_MAXNP={MAXNP})")
                continue
            tag = f"np{np_}_" + "x".join(map(str, ranks)) + f"_tb{k}"
            out = os.path.join(BASE, tag)
            shutil.rmtree(out, ignore_errors=True)
            p = run(case, out, *k_args, f"{steps_key}.time_block={k}",
                    f"grid.ranks=[{','.join(map(str, ranks))}]", np_=np_, quiet=False, rc=rc)
            took = json.load(open(os.path.join(out, "timing.json"))).get("time_block")
            depth = k
            if took != depth:
                fail(f"{tag}: timing.json time_block {took}, expected {depth}")
            lines = [l for l in p.stderr.splitlines() if l.startswith("mpi:")]
            if depth > 1 and not any(f"(for passes of up to " in l for l in lines):
                fail(f"{tag}: rank 0's log does not give the halo's depth: {lines}")
            compare(ref, out, f"{tag} ({took} steps a pass) against one rank, one step a pass")

    # heat: x and z periodic (x over 2: both neighbours the same rank), y
    # walls (Dirichlet below, Neumann above); y over 3 and z over 3 uneven
    # (blocks of 4, 4, 3 and 4, 3, 3 points), 2×2 splits
    for prec in ("float64", "float32"):
        case = write_case("heat3d_tb_" + prec, HEAT3D.format(prec=prec).replace(
            "dims: [12, 10, 9]", "dims: [12, 11, 10]"))
        blocked(case, ["heat.steps=30", "output.every=15"],
                [(2, [1, 1, 2], 2), (2, [2, 1, 1], 3), (3, [1, 3, 1], 3), (3, [1, 1, 3], 2),
                 (4, [2, 1, 2], 2), (4, [1, 2, 2], 3)],
                "heat")
    # auto: 200 steps, as deep as the thinnest block allows (10 / 3: 3 points)
    case = write_case("heat3d_tb_float64", HEAT3D.format(prec="float64").replace(
        "dims: [12, 10, 9]", "dims: [12, 11, 10]"))
    ref = os.path.join(BASE, "np1")
    shutil.rmtree(ref, ignore_errors=True)
    run(case, ref, "heat.steps=200", "output.every=100", "heat.time_block=1")
    for np_, ranks, deepest in ((3, [1, 1, 3], 3), (2, [1, 2, 1], 4)):
        if MAXNP and np_ > MAXNP:
            continue
        tag = f"np{np_}_" + "x".join(map(str, ranks)) + "_auto"
        out = os.path.join(BASE, tag)
        shutil.rmtree(out, ignore_errors=True)
        p = run(case, out, "heat.steps=200", "output.every=100", "heat.time_block=auto",
                f"grid.ranks=[{','.join(map(str, ranks))}]", np_=np_, quiet=False)
        took = json.load(open(os.path.join(out, "timing.json"))).get("time_block")
        if not isinstance(took, int) or not 1 <= took <= deepest:
            fail(f"{tag}: timing.json time_block {took}, expected 1 to {deepest}")
        if not any(f"halo {deepest} points (for passes of up to {deepest} steps)" in l
                   for l in p.stderr.splitlines()):
            fail(f"{tag}: rank 0's log does not give a halo of {deepest}: {p.stderr}")
        compare(ref, out, f"{tag} (auto took {took} steps a pass) against one rank, one step a pass")
    # the star7 stencil: y periodic over 2 and 3 ranks, z walls (Dirichlet), x Neumann
    blocked("cases/stencil3d_star7.yaml",
            ["grid.dims=[16,15,14]", "stencil.steps=24", "output.every=12",
             "output.formats=[hdf5]"],
            [(2, [1, 2, 1], 2), (3, [1, 3, 1], 4), (3, [1, 1, 3], 4), (4, [2, 1, 2], 3)],
            "stencil")
    # Jacobi (3D, an f field, Dirichlet walls and a periodic x): 70 sweeps in
    # chunks of 30, max_iters reached (exit 1, the last iterate written)
    blocked("cases/laplace3d_jacobi.yaml",
            ["grid.dims=[14,13,12]", "laplace.max_iters=70", "laplace.check_every=30",
             "laplace.tolerance=1e-30", "boundary.x={type: periodic}", "output.formats=[hdf5]"],
            [(2, [2, 1, 1], 3), (3, [1, 3, 1], 2), (3, [1, 1, 3], 4), (4, [1, 2, 2], 3)],
            "laplace", rc=1)
    # 2D: heat (the plate: Dirichlet and Neumann y walls, a periodic x) with y
    # over 3 (uneven) and x over 2; star5 on Neumann walls; Jacobi on the plate
    blocked("cases/heat2d_plate.yaml",
            ["grid.dims=[20,17]", "heat={alpha: 1.0, steps: 30}", "output.every=15", "boundary.x={type: periodic}",
             "output.formats=[hdf5]"],
            [(3, [1, 3], 3), (2, [2, 1], 4), (4, [2, 2], 2)], "heat")
    blocked("cases/stencil2d_star9.yaml",
            ["grid.dims=[21,18]", "stencil={preset: star5, coeff: 5.0e-4, steps: 24}", "output.every=12",
             "boundary.default={type: neumann, gradient: 0.5}", "output.formats=[hdf5]"],
            [(2, [1, 2], 4), (3, [3, 1], 3)], "stencil")
    blocked("cases/laplace2d_plate.yaml", laplace_args("jacobi"),
            [(2, [2, 1], 3), (3, [1, 3], 4)], "laplace", rc=1)


def mode_render():
    def same_files(ref, got, names, label):
        for n in names:
            a, b = os.path.join(ref, n), os.path.join(got, n)
            if not os.path.isfile(b):
                fail(f"{label}: {n} missing")
            if open(a, "rb").read() != open(b, "rb").read():
                fail(f"{label}: {n} differs from one rank's")
        print(f"mpi {MODE}: {label}: {len(names)} images byte for byte")

    # in-situ frames of a heat run: frames at 0, 20 and 40
    args = ["grid.dims=[26,24,22]", "heat.steps=40", "render.every=20", "output.every=20",
            "output.formats=[hdf5]", "render.camera.width=96", "render.camera.height=72"]
    ref = os.path.join(BASE, "movie_np1")
    shutil.rmtree(ref, ignore_errors=True)
    run("cases/heat3d_movie.yaml", ref, *args)
    frames = sorted("frames/" + n for n in os.listdir(os.path.join(ref, "frames")))
    if len(frames) != 3:
        fail(f"one rank drew {frames}")
    for np_, ranks in ((2, None), (3, [1, 1, 3]), (4, [2, 1, 2])):
        if MAXNP and np_ > MAXNP:
            continue
        tag = f"movie_np{np_}"
        out = os.path.join(BASE, tag)
        shutil.rmtree(out, ignore_errors=True)
        extra = [] if ranks is None else [f"grid.ranks=[{','.join(map(str, ranks))}]"]
        run("cases/heat3d_movie.yaml", out, *args, *extra, np_=np_)
        compare(ref, out, tag)
        same_files(ref, out, frames, tag + " frames")
        if sorted(os.listdir(os.path.join(out, "frames"))) != sorted(f[7:] for f in frames):
            fail(f"{tag}: frames/ holds {os.listdir(os.path.join(out, 'frames'))}")
        t = json.load(open(os.path.join(out, "timing.json")))
        if t.get("ranks") != np_ or t.get("render", {}).get("frames") != 3:
            fail(f"{tag}: timing.json ranks {t.get('ranks')}, render {t.get('render')}")
    # 2D images and 1D line plots, drawn on rank 0 from the gathered field
    short = ["heat.steps=40", "render.every=20", "output.every=20", "output.formats=[hdf5]"]
    for case, splits in (("heat2d_frames", ((2, [2, 1]), (3, [1, 3]))), ("heat1d_frames", ((2, None),))):
        ref = os.path.join(BASE, case + "_np1")
        shutil.rmtree(ref, ignore_errors=True)
        run(f"cases/{case}.yaml", ref, *short)
        frames = sorted("frames/" + n for n in os.listdir(os.path.join(ref, "frames")))
        if len(frames) != 3:
            fail(f"{case}: one rank drew {frames}")
        for np_, ranks in splits:
            if MAXNP and np_ > MAXNP:
                continue
            tag = f"{case}_np{np_}"
            out = os.path.join(BASE, tag)
            shutil.rmtree(out, ignore_errors=True)
            extra = [] if ranks is None else [f"grid.ranks=[{','.join(map(str, ranks))}]"]
            run(f"cases/{case}.yaml", out, *short, *extra, np_=np_)
            compare(ref, out, tag)
            same_files(ref, out, frames, tag + " frames")
    # a raymarch case: rank 0 renders, the others wait
    args = ["grid.dims=[40,36,32]", "raymarch.camera.width=96", "raymarch.camera.height=64"]
    ref = os.path.join(BASE, "cloud_np1")
    shutil.rmtree(ref, ignore_errors=True)
    run("cases/raymarch_cloud.yaml", ref, *args)
    for np_ in (2, 3):
        if MAXNP and np_ > MAXNP:
            continue
        out = os.path.join(BASE, f"cloud_np{np_}")
        shutil.rmtree(out, ignore_errors=True)
        run("cases/raymarch_cloud.yaml", out, *args, np_=np_)
        same_files(ref, out, ["raymarch_cloud.png"], f"raymarch on {np_} ranks")
        with h5py.File(os.path.join(ref, "image.h5"), "r") as f, \
                h5py.File(os.path.join(out, "image.h5"), "r") as g:
            for k in f:
                if not np.array_equal(f[k][...], g[k][...]):
                    fail(f"raymarch on {np_} ranks: image.h5 {k} differs")
        t = json.load(open(os.path.join(out, "timing.json")))
        if t.get("ranks") != np_ or t.get("rendered_on") != "rank 0":
            fail(f"raymarch on {np_} ranks: timing.json ranks {t.get('ranks')}, "
                 f"rendered_on {t.get('rendered_on')}")


def mode_files():
    args = ["grid.dims=[33,29]", "heat.t_end=0.01", "output.every=150"]
    ref = os.path.join(BASE, "np1")
    got = os.path.join(BASE, "np3")
    for d in (ref, got):
        shutil.rmtree(d, ignore_errors=True)
    run("cases/heat2d_plate.yaml", ref, *args)
    run("cases/heat2d_plate.yaml", got, *args, np_=3)
    compare(ref, got, "np3")
    a, b = log_rows(ref), log_rows(got)
    if [r["step"] for r in a] != [r["step"] for r in b]:
        fail("log.csv: the steps differ from one rank's")
    for r, s in zip(a, b):
        if r["min"] != s["min"] or r["max"] != s["max"]:
            fail(f"log.csv step {r['step']}: min/max {s['min']}/{s['max']}, one rank {r['min']}/{r['max']}")
        if abs(float(r["mean"]) - float(s["mean"])) > 1e-12 * max(1.0, abs(float(r["mean"]))):
            fail(f"log.csv step {r['step']}: mean {s['mean']}, one rank {r['mean']}")
    t = json.load(open(os.path.join(got, "timing.json")))
    if t.get("ranks") != 3 or t["grid"] != [33, 29] or len(t.get("rank_dims", [])) != 2:
        fail(f"timing.json: ranks {t.get('ranks')}, grid {t['grid']}, rank_dims {t.get('rank_dims')}")
    if "ranks" in json.load(open(os.path.join(ref, "timing.json"))):
        fail("timing.json of one rank names ranks")
    if json.load(open(os.path.join(got, "run.json")))["status"] != "completed":
        fail("run.json: not completed")
    # The .pvd lists .pvti files; each one's pieces tile the whole extent.
    pvd = ET.parse(os.path.join(got, "heat2d-plate.pvd")).getroot()
    files = [d.get("file") for d in pvd.iter("DataSet")]
    if len(files) != len(steps_of(ref)) or not all(f.endswith(".pvti") for f in files):
        fail(f".pvd lists {files}")
    for rel in files:
        path = os.path.join(got, rel)
        root = ET.parse(path).getroot()
        img = root.find("PImageData")
        whole = list(map(int, img.get("WholeExtent").split()))
        if whole != [0, 32, 0, 28, 0, 0]:
            fail(f"{rel}: WholeExtent {whole}")
        covered = np.zeros((29, 33), dtype=int)
        pieces = img.findall("Piece")
        if len(pieces) != 3:
            fail(f"{rel}: {len(pieces)} pieces for 3 ranks")
        for p in pieces:
            e = list(map(int, p.get("Extent").split()))
            src = os.path.join(os.path.dirname(path), p.get("Source"))
            if not os.path.isfile(src):
                fail(f"{rel}: piece {p.get('Source')} missing")
            head = open(src, "rb").read(600).decode("latin-1")
            if f'WholeExtent="{" ".join(map(str, e))}"' not in head:
                fail(f"{src}: its extent is not the .pvti's {e}")
            covered[e[2]:e[3] + 1, e[0]:e[1] + 1] = 1
        if not covered.all():
            fail(f"{rel}: the pieces leave points uncovered")
    x1 = open(os.path.join(ref, "fields.xdmf")).read()
    x3 = open(os.path.join(got, "fields.xdmf")).read()
    if x1 != x3:
        fail("fields.xdmf differs from one rank's")
    with h5py.File(os.path.join(got, "fields.h5"), "r") as f, \
            h5py.File(os.path.join(ref, "fields.h5"), "r") as g:
        for k in ("dims", "spacing", "origin"):
            if not np.array_equal(f.attrs[k], g.attrs[k]):
                fail(f"fields.h5 attribute {k}: {f.attrs[k]}, one rank {g.attrs[k]}")
    leftovers = [n for n in os.listdir(got) if n.startswith(".")]
    if leftovers:
        fail(f"temporary files left: {leftovers}")
    print(f"mpi {MODE}: log.csv, timing.json, run.json, .pvd/.pvti pieces and fields.xdmf agree")


# Two fields, each with its own boundary: x periodic (split over 2 ranks: the
# same neighbour on both sides), u's y- Dirichlet value reads t (evaluated at
# every stage on the rank that owns that face) and is defined near its face
# only (sqrt(0.01 - y): a rank whose shared y- face were taken for a wall
# would fail), a coefficient read by div(k*grad u) (its halo too), upwind and
# central differences, ssprk3 (three stages a step, each exchanging both
# fields' halos).
PDE2D = """
name: pde2d
workload: pde
precision: {prec}
grid: {{dims: [23, 19], extent: [1.0, 0.8]}}
parameters: {{D: 0.01, a: 0.7}}
boundary:
  default: {{type: neumann, gradient: 0.3}}
  x: {{type: periodic}}
pde:
  fields:
    u:
      initial: {{expr: "sin(2*pi*x)*cos(3*y) + 0.2*y"}}
      boundary:
        default: {{type: neumann, gradient: -0.2}}
        x: {{type: periodic}}
        y-: {{type: dirichlet, value: "sin(2*pi*x) + 0.5*sin(20*t) + sqrt(0.01 - y)"}}
    v:
      initial: {{expr: "exp(-((x-0.3)^2 + (y-0.5)^2)/0.05)"}}
  coefficients:
    kappa: "1 + 0.5*sin(2*pi*x)*y"
  equations:
    u: "D*div(kappa*grad(u)) - a*dx_up(u, a) + 0.3*u*v"
    v: "D*lap(v) - 0.5*u*v + 0.1*dy(u)"
  integrator: ssprk3
  dt: auto
  steps: 30
output: {{every: 10, formats: [vtk, hdf5]}}
"""

# 3D, rk4 (an accumulator): z periodic, Dirichlet faces whose values read t
# (the case's for u, v's own x+), Neumann faces, div of an expression k.
PDE3D = """
name: pde3d
workload: pde
grid: {dims: [11, 10, 9], extent: [1.0, 0.9, 0.8]}
parameters: {D: 0.02}
boundary:
  default: {type: dirichlet, value: "x*y + z*cos(5*t)"}
  z: {type: periodic}
  y+: {type: neumann, gradient: -0.2}
pde:
  fields:
    u: {initial: {expr: "x*y + cos(2*pi*z/0.8)*sin(3*x)"}}
    v:
      initial: {expr: "0.5 + 0.3*sin(4*x + 2*y)*cos(2*pi*z/0.8)"}
      boundary:
        default: {type: neumann, gradient: 0.1}
        z: {type: periodic}
        x+: {type: dirichlet, value: "0.2*y + sin(7*t)"}
  equations:
    u: "D*lap(u) + 0.4*dz(v) - 0.1*u*v^2"
    v: "0.5*D*lap(v) + 0.01*div((1 + x*y)*grad(u)) - 0.2*dx_up(v, -1)"
  integrator: rk4
  dt: auto
  steps: 12
output: {every: 6, formats: [hdf5]}
"""


def mode_pde():
    """The pde workload (several fields, explicit stages) against one rank,
    bit for bit; log.csv's columns of every field and the .pvti of each
    output step (every field, a piece a rank) as one rank's."""
    for prec, layouts in (("float64", [(2, [2, 1]), (3, [1, 3]), (4, [2, 2])]),
                          ("float32", [(3, [3, 1])])):
        case = write_case(f"pde2d_{prec}", PDE2D.format(prec=prec))
        ref = against_one_rank(case, layouts)
    got = os.path.join(BASE, "np3_3x1")
    a, b = log_rows(ref), log_rows(got)
    cols = [f"{f}_{s}" for f in "uv" for s in ("min", "max", "mean")]
    if [r["step"] for r in a] != [r["step"] for r in b] or not all(c in b[0] for c in cols):
        fail(f"log.csv: steps or columns differ from one rank's: {list(b[0])}")
    for r, s in zip(a, b):
        for c in cols:
            same = r[c] == s[c] if not c.endswith("mean") else \
                abs(float(r[c]) - float(s[c])) <= 1e-6 * max(1.0, abs(float(r[c])))
            if not same:
                fail(f"log.csv step {r['step']}: {c} {s[c]}, one rank {r[c]}")
    pvd = ET.parse(os.path.join(got, "pde2d.pvd")).getroot()
    files = [d.get("file") for d in pvd.iter("DataSet")]
    if len(files) != len(steps_of(ref)) or not all(f.endswith(".pvti") for f in files):
        fail(f"pde2d.pvd lists {files}")
    for rel in files:
        img = ET.parse(os.path.join(got, rel)).getroot().find("PImageData")
        names = [x.get("Name") for x in img.iter("PDataArray")]
        pieces = img.findall("Piece")
        if names != ["u", "v"] or len(pieces) != 3:
            fail(f"{rel}: arrays {names}, {len(pieces)} pieces for 3 ranks")
        for p in pieces:
            src = os.path.join(got, os.path.dirname(rel), p.get("Source"))
            head = open(src, "rb").read(2000).decode("latin-1")
            if 'Name="u"' not in head or 'Name="v"' not in head:
                fail(f"{src}: not both fields")
    print(f"mpi {MODE}: log.csv columns of u and v, the .pvd and .pvti of both fields as one rank's")
    against_one_rank(write_case("pde3d", PDE3D), [(2, [1, 1, 2]), (3, [3, 1, 1]), (4, [1, 2, 2])])
    # 1D, a Dirichlet face that moves in time (rk4)
    against_one_rank("cases/pde_moving_boundary.yaml", [(2, None), (3, None)], "grid.dims=[41]",
                     "pde.t_end=1.0", "output.every=10", "output.formats=[hdf5]")


def mode_restart():
    case = write_case("heat3d_float64", HEAT3D.format(prec="float64"))
    both = "output.formats=[vtk,hdf5]"
    plans = [(case, ["output.every=10", both], "heat.steps", 20, 40, 0),
             (write_case("pde2d", PDE2D.format(prec="float64")), ["output.every=10", both],
              "pde.steps", 20, 30, 0),
             ("cases/laplace2d_plate.yaml",
              [a for a in laplace_args("jacobi") if "max_iters" not in a and "formats" not in a]
              + ["output.every=100", both], "laplace.max_iters", 200, 400, 1),
             # multigrid: cycles 3 and 6 of a solve that has not converged by then
             ("cases/poisson3d_multigrid.yaml",
              ["grid.dims=[17,15,13]", "laplace.tolerance=1e-30", "output.every=2", both],
              "laplace.max_iters", 3, 6, 1)]
    for case, args, key, half, full, rc in plans:
        ref = os.path.join(BASE, "full")
        shutil.rmtree(ref, ignore_errors=True)
        run(case, ref, *args, f"{key}={full}", "output.checkpoint_every=100", rc=rc)
        for first, second in ((2, 3), (2, 1), (3, 2)):
            out = os.path.join(BASE, f"np{first}_np{second}")
            shutil.rmtree(out, ignore_errors=True)
            run(case, out, *args, f"{key}={half}", "output.checkpoint_every=100", np_=first, rc=rc)
            ck = os.path.join(out, "checkpoint.h5")
            with h5py.File(ck, "r") as f:
                if int(f.attrs["step"]) != half:
                    fail(f"{ck}: step {f.attrs['step']}, expected {half}")
            run(case, out, *args, f"{key}={full}", "output.checkpoint_every=100",
                "--restart", ck, np_=second, rc=rc)
            compare(ref, out, f"{os.path.basename(case)}: {first} ranks to {half}, "
                              f"{second} from there to {full}")
            pvd = ET.parse(os.path.join(out, [n for n in os.listdir(out) if n.endswith(".pvd")][0]))
            times = [float(d.get("timestep")) for d in pvd.getroot().iter("DataSet")]
            if times != sorted(set(times)) or len(times) != len(steps_of(ref)):
                fail(f"{out}: the .pvd lists times {times}")


def mode_interrupt():
    """Ctrl-C over ranks: every rank agrees to stop after the same step, the
    checkpoint and the state reached are written, each rank exits 130, and no
    rank calls MPI_Abort (issue 23 item 8). Sent to the ranks (as a batch
    system does) the job ends with 130; sent to mpirun (a terminal's Ctrl-C),
    Open MPI's mpirun ends the job with SIGTERM to the ranks and its own
    status."""
    import signal
    import time
    case = write_case("heat3d_float64", HEAT3D.format(prec="float64"))
    for target in ("ranks", "mpirun"):
        out = os.path.join(BASE, f"int_{target}")
        shutil.rmtree(out, ignore_errors=True)
        cmd = mpirun(2) + [GF, "run", case, "--device", DEVICE, "--quiet", "--out", out,
                           "heat.steps=100000000", "output.every=0",
                           "output.checkpoint_every=100000000"]
        p = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        for _ in range(300):
            if os.path.isfile(os.path.join(out, "run.json")):
                break
            time.sleep(0.1)
        time.sleep(1.0)
        if target == "mpirun":
            p.send_signal(signal.SIGINT)
        else:
            subprocess.run(["pkill", "-INT", "-f", f"^{GF} run {case}"], check=False)
        text, _ = p.communicate(timeout=120)
        if "MPI_ABORT" in text or "MPI_Abort" in text:
            fail(f"interrupt to the {target}: a rank aborted:\n{text}")
        if target == "ranks" and p.returncode != 130:
            fail(f"interrupt to the ranks: exit {p.returncode}, expected 130:\n{text}")
        with open(os.path.join(out, "run.json")) as f:
            if '"status": "interrupted' not in f.read():
                fail(f"{out}/run.json does not say interrupted")
        with h5py.File(os.path.join(out, "checkpoint.h5"), "r") as f:
            ck = int(f.attrs["step"])
        last = int(open(os.path.join(out, "log.csv")).read().split()[-1].split(",")[0])
        if ck != last or ck <= 0 or sorted(steps_of(out)) != [f"{ck:06d}"]:
            fail(f"{out}: checkpoint at {ck}, log to {last}, fields.h5 steps {sorted(steps_of(out))}")
        print(f"mpi interrupt to the {target}: exit {p.returncode}, both ranks stopped at step {ck}")


def mode_errors():
    cases = [
        (3, "cases/heat2d_plate.yaml", ["grid.ranks=[2,2]"],
         r"grid.ranks: \[2, 2\] makes 4 ranks, but the run has 3"),
        (4, "cases/heat2d_plate.yaml", ["grid.dims=[40,3]", "grid.ranks=[1,4]"],
         r"grid.ranks: 4 ranks on axis y but grid.dims\[1\] is 3: more ranks than points"),
        (3, "cases/stencil2d_star9.yaml", ["grid.dims=[40,5]", "grid.ranks=[1,3]"],
         r"grid.ranks: 3 ranks on axis y give blocks of 1 points, narrower than the halo of 2"),
        (3, "cases/heat3d_hotspot.yaml", ["grid.dims=[20,20,9]", "grid.ranks=[1,1,3]",
                                          "heat.time_block=4"],
         r"grid.ranks: 3 ranks on axis z give blocks of 3 points, narrower than the halo of 4 "
         r"\(time_block 4 × the stencil radius 1\)"),
        (3, "cases/stencil2d_star9.yaml", ["grid.dims=[5,5]"],
         r"grid.dims: the grid 5\^2 cannot be split over 3 ranks with blocks at least 2 points wide"),
        (2, "cases/poisson3d_periodic.yaml", [], r"laplace.method: fft runs on one rank only"),
        (2, "cases/poisson3d_mixed.yaml", [], r"laplace.precision: mixed runs on one rank only"),
        (2, "cases/heat2d_plate.yaml", ["grid.ranks=[2]"], r"grid.ranks: expected a list of 2 integers"),
    ]
    import re
    for i, (np_, case, args, regex) in enumerate(cases):
        out = os.path.join(BASE, f"err{i}")
        shutil.rmtree(out, ignore_errors=True)
        p = run(case, out, *args, np_=np_, rc=2)
        # gridforge's lines: mpirun adds its own note in boxes of dashes after them.
        lines = [l for l in p.stderr.split("-" * 20)[0].splitlines() if l.strip()]
        if len(lines) != 1 or not re.search(regex, lines[0]):
            fail(f"{case} {args} on {np_} ranks: stderr {p.stderr!r}, expected one line matching {regex}")
        if os.path.exists(out):
            fail(f"{case} {args}: wrote {out}")
    p = subprocess.run(mpirun(2) + [GF, "validate", "cases/heat1d_rod.yaml"], env=ENV,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 2 or "only `gridforge run` runs over several MPI ranks" not in p.stderr:
        fail(f"validate under mpirun: exit {p.returncode}: {p.stderr}")
    out = os.path.join(BASE, "err_overlap")
    shutil.rmtree(out, ignore_errors=True)
    p = run("cases/heat2d_plate.yaml", out, np_=2, rc=2, env=dict(ENV, GRIDFORGE_HALO_OVERLAP="yes"))
    lines = [l for l in p.stderr.split("-" * 20)[0].splitlines() if l.strip()]
    if lines != ["error: GRIDFORGE_HALO_OVERLAP: 'yes' is not 0 or 1"] or os.path.exists(out):
        fail(f"GRIDFORGE_HALO_OVERLAP=yes: stderr {p.stderr!r}")
    print(f"mpi {MODE}: {len(cases) + 2} refusals with their messages")


MODES = {name[5:]: fn for name, fn in globals().items() if name.startswith("mode_")}
if MODE not in MODES:
    fail(f"unknown mode; one of {', '.join(MODES)}")
os.makedirs(BASE, exist_ok=True)
MODES[MODE]()
