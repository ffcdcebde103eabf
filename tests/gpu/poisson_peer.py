#!/usr/bin/env python3
"""Whole-run peer of cases/poisson3d_multigrid.yaml with laplace.rhs=-1, as a CuPy user would
write it without a multigrid: nabla^2 u = -1 on the unit cube, u = 0 on the walls, nx x ny x
nz points (h = 1/(n - 1) per axis), float64, conjugate gradients on the 7-point operator (a
RawKernel, matrix-free) from u = 0 to a relative residual TOL, then u written with h5py.
Prints setup, solve, output and total seconds, the iterations, the residual and max u.
(The case's own right-hand side, -3 pi^2 sin sin sin, is an eigenvector of the discrete
operator: CG solves it in one iteration, which says nothing.)

usage: poisson_peer.py NX NY NZ OUT [TOL]   (run beside `gridforge run
cases/poisson3d_multigrid.yaml "grid.dims=[NX,NY,NZ]" laplace.rhs=-1` in the same call)"""
import os
import sys
import time

import cupy as cp
import h5py
import numpy as np

nx, ny, nz = (int(a) for a in sys.argv[1:4])
out = sys.argv[4]
tol = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-8
t0 = time.perf_counter()
b = cp.ones((nz, ny, nx))  # -nabla^2 u = b
b[0, :, :] = b[-1, :, :] = b[:, 0, :] = b[:, -1, :] = b[:, :, 0] = b[:, :, -1] = 0
ih2 = [float((n - 1) ** 2) for n in (nx, ny, nz)]
apply = cp.RawKernel(r'''extern "C" __global__ void apply(const double* p, double* q, long nx,
    long ny, long nz, double ix, double iy, double iz) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x, j = blockIdx.y * (long)blockDim.y + threadIdx.y,
       k = blockIdx.z;
  if (i >= nx || j >= ny) return;
  long s = nx * ny, o = k * s + j * nx + i;
  if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1) { q[o] = 0; return; }
  q[o] = ix * (2 * p[o] - p[o - 1] - p[o + 1]) + iy * (2 * p[o] - p[o - nx] - p[o + nx]) +
         iz * (2 * p[o] - p[o - s] - p[o + s]);
}''', "apply")
grid = ((nx + 31) // 32, (ny + 7) // 8, nz)
u = cp.zeros_like(b)
r = b.copy()
p = r.copy()
q = cp.empty_like(b)
rr = float(cp.dot(r.ravel(), r.ravel()))
bnorm = rr ** 0.5
cp.cuda.Device().synchronize()
t1 = time.perf_counter()
it = 0
while rr ** 0.5 > tol * bnorm and it < 100000:
    apply(grid, (32, 8, 1), (p, q, np.int64(nx), np.int64(ny), np.int64(nz), ih2[0], ih2[1], ih2[2]))
    alpha = rr / float(cp.dot(p.ravel(), q.ravel()))
    u += alpha * p
    r -= alpha * q
    new = float(cp.dot(r.ravel(), r.ravel()))
    p = r + (new / rr) * p
    rr = new
    it += 1
cp.cuda.Device().synchronize()
t2 = time.perf_counter()
os.makedirs(out, exist_ok=True)
with h5py.File(os.path.join(out, "fields.h5"), "w") as f:
    f.create_dataset("u", data=cp.asnumpy(u))
os.sync()
t3 = time.perf_counter()
umax = float(u.max())
print(f"cupy cg whole run {nx}x{ny}x{nz}: {it} iterations, residual {rr ** 0.5 / bnorm:.2e}, "
      f"max u {umax:.6e}; setup {t1 - t0:.3f} s, solve {t2 - t1:.3f} s, output {t3 - t2:.3f} s, "
      f"total {t3 - t0:.3f} s")
