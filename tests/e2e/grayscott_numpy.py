#!/usr/bin/env python3
"""Gray–Scott in 2D, float64 (issue 27): gridforge's pde workload, the case
cases/pde_grayscott2d.yaml run 1000 forward Euler steps, against the same
scheme written in NumPy (periodic 5-point Laplacian with np.roll), to 1e-12.

  grayscott_numpy.py GRIDFORGE OUT [--device cpu|cuda]
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

GF, OUT = sys.argv[1], sys.argv[2]
DEVICE = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--device" else "cpu"
CASE = "cases/pde_grayscott2d.yaml"
STEPS, DT = 1000, 0.5


def fail(msg):
    print("grayscott_numpy: FAIL: " + msg)
    sys.exit(1)


shutil.rmtree(OUT, ignore_errors=True)
p = subprocess.run([GF, "run", CASE, "--device", DEVICE, "--out", OUT, "--quiet",
                    f"pde.steps={STEPS}", f"pde.dt={DT}", "output.every=0",
                    "output.formats=[hdf5]"], capture_output=True, text=True)
if p.returncode != 0:
    fail(f"gridforge exited {p.returncode}: {p.stderr}")
with h5py.File(os.path.join(OUT, "fields.h5"), "r") as f:
    last = f["steps"][sorted(f["steps"])[-1]]
    gu, gv = last["u"][...], last["v"][...]
    n, ext = int(f.attrs["dims"][0]), 1.25

# The case's grid (periodic: h = extent/n), initial values and parameters.
h = ext / n
x = np.arange(n) * h
X, Y = np.meshgrid(x, x)  # [j, i]: y slowest, as fields.h5 stores 2D fields
seed = (np.abs(X - 0.625) < 0.1) & (np.abs(Y - 0.625) < 0.1)
u = np.where(seed, 0.5, 1.0)
v = np.where(seed, 0.25 + 0.01 * np.sin(97 * X) * np.sin(89 * Y), 0.0)
Du, Dv, F, k = 2.0e-5, 1.0e-5, 0.035, 0.065


def lap(a):
    return (np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1) - 4 * a) / (h * h)


for _ in range(STEPS):
    uvv = u * v * v
    u, v = (u + DT * (Du * lap(u) - uvv + F * (1 - u)),
            v + DT * (Dv * lap(v) + uvv - (F + k) * v))
du, dv = np.abs(gu - u).max(), np.abs(gv - v).max()
if not (du < 1e-12 and dv < 1e-12):
    fail(f"max |gridforge - numpy|: u {du:.3g}, v {dv:.3g}")
if not (v.max() > 0.1 and np.abs(u - 1).max() > 0.1):
    fail("the reaction did not start: the comparison would say nothing")
print(f"grayscott_numpy: ok ({DEVICE}): {n}x{n}, {STEPS} steps: max |diff| u {du:.2e}, v {dv:.2e}")
