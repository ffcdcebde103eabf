#!/usr/bin/env python3
"""End-to-end peer: the heat3d_hotspot case (Gaussian initial, 7-point explicit FTCS, source q)
at N^3 float32 written as a user would in CuPy: initial condition on the GPU, a RawKernel step,
h5py writes of the field every `every` steps. Prints setup, compute, output and total seconds.

The team's peer from the shared bench folder (ours), kept here so that it travels with the
repository to the GPU machine; postprocess/whole_run.py runs it beside gridforge:
    python3 postprocess/heat_whole_run.py N STEPS EVERY DIR"""
import sys, time, os, numpy as np, cupy as cp, h5py
N = int(sys.argv[1]); steps = int(sys.argv[2]); every = int(sys.argv[3]); out = sys.argv[4]
t0 = time.perf_counter()
h = 1.0 / (N - 1); ax = cp.linspace(0, 1, N, dtype=cp.float32)
z, y, x = cp.meshgrid(ax, ax, ax, indexing="ij")
u = (100 * cp.exp(-((x - .5)**2 + (y - .5)**2 + (z - .5)**2) / 0.01)).astype(cp.float32)
del x, y, z
v = cp.empty_like(u); dt = 0.9 * h * h / (6 * 1e-2); c = cp.float32(1e-2 * dt / h / h); s = cp.float32(0.5 * dt)
k = cp.RawKernel(r'''extern "C" __global__ void step(const float* __restrict__ u, float* __restrict__ v, int n, float c, float s){
 int i=blockIdx.x*blockDim.x+threadIdx.x, j=blockIdx.y*blockDim.y+threadIdx.y, k=blockIdx.z; if(i>=n||j>=n) return;
 long S=n, p=(long)k*S*S+(long)j*S+i; if(i==0){v[p]=0.f;return;}
 float xm=u[p-1], xp=i<n-1?u[p+1]:u[p-1], ym=j>0?u[p-S]:u[p+S], yp=j<n-1?u[p+S]:u[p-S];
 float zm=u[k>0?p-S*S:p+(long)(n-1)*S*S], zp=u[k<n-1?p+S*S:p-(long)(n-1)*S*S];
 v[p]=u[p]+c*(xm+xp+ym+yp+zm+zp-6.f*u[p])+s;}''', "step")
cp.cuda.Device().synchronize(); t1 = time.perf_counter()
os.makedirs(out, exist_ok=True); f = h5py.File(os.path.join(out, "fields.h5"), "w"); tout = 0.0; tc = 0.0
def write(i):
    global tout; a = time.perf_counter(); f.create_dataset(f"steps/{i:06d}/u", data=cp.asnumpy(u)); tout += time.perf_counter() - a
write(0)
for i in range(1, steps + 1):
    a = time.perf_counter(); k(((N + 31) // 32, (N + 7) // 8, N), (32, 8, 1), (u, v, np.int32(N), c, s)); u, v = v, u
    cp.cuda.Device().synchronize(); tc += time.perf_counter() - a
    if every and i % every == 0: write(i)
if not every or steps % every: write(steps)
a = time.perf_counter(); f.close(); os.sync(); tout += time.perf_counter() - a
print(f"cupy whole run {N}^3 {steps} steps every {every}: setup {t1-t0:.3f} s, compute {tc:.3f} s, output {tout:.3f} s, total {time.perf_counter()-t0:.3f} s")
