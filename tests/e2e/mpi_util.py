"""Shared by mpi.py and mpi_modes_io.py: the command line, how a case runs
over ranks against one rank, and the small cases the modes run (mpi.py says
what each mode checks)."""
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


def laplace_args(method):
    # A fixed number of sweeps (max_iters, a tolerance it cannot reach: exit 1,
    # the last iterate written) so that no residual decides when to stop.
    return [f"laplace.method={method}", "grid.dims=[30,26]", "laplace.max_iters=300",
            "laplace.check_every=100", "laplace.tolerance=1e-30", "output.formats=[hdf5]"]


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
