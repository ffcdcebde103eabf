// Explicit heat step kernels. Every point goes through ftcs_point (the shared
// formula); interior points gather their neighbours directly, points on or
// next to a face go through heat_point_bc, which applies the boundary rules.
#pragma once
#include <cuda_runtime.h>

#include <cstdlib>

#include "kernels/ops/heat.hpp"

namespace gf {

// 3D interior (every point off the faces): one thread per (x, y) column,
// marching along z over a chunk of planes with the z−1, z, z+1 values in
// registers, so each value comes from memory about once; x and y neighbours
// come through L1/L2. The kernel has no boundary branch and uses 32-bit
// indices (grids under 2³¹ points), which keeps it at few registers and so
// at full occupancy: the march is bound by memory latency, and the number
// of warps in flight is what hides it. (Measured on an H200, 512³ float32:
// with the boundary path inlined and 64-bit indices the kernel took 64
// registers, ran at half occupancy and reached 0.5 of copy bandwidth.)
template <class T, class I>
__global__ void __launch_bounds__(256, 8) heat3d_interior(HeatArgs<T> a, const T* __restrict__ in,
                                                       T* __restrict__ out, int kchunk) {
  const I nx = I(a.n[0]), ny = I(a.n[1]), nz = I(a.n[2]);
  const I i = 1 + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I j = 1 + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y);
  if (i >= nx - 1 || j >= ny - 1) return;
  const I kb = 1 + I(blockIdx.z) * I(kchunk);
  const I ke = kb + kchunk < nz - 1 ? kb + kchunk : nz - 1;
  const I plane = nx * ny;
  I idx = i + nx * j + kb * plane;
  T uzm = in[idx - plane];
  T uc = in[idx];
#pragma unroll 4
  for (I k = kb; k < ke; ++k, idx += plane) {
    const T uzp = in[idx + plane];
    const T m[3] = {in[idx - 1], in[idx - nx], uzm};
    const T p[3] = {in[idx + 1], in[idx + nx], uzp};
    out[idx] = ftcs_point<3>(uc, m, p, a.c, heat_source(a, idx));
    uzm = uc;
    uc = uzp;
  }
}

// 3D faces: every point with a coordinate on a face, one thread each, through
// heat_point_bc (the boundary rules). About 6/n of the points.
template <class T>
__global__ void __launch_bounds__(256) heat3d_faces(HeatArgs<T> a, const T* __restrict__ in,
                                                    T* __restrict__ out) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
  std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  std::int64_t i, j, k;
  const std::int64_t nxs = nx - 2, nys = ny - 2;  // interior extents
  if (t < 2 * ny * nz) {  // x faces: all j, k
    i = (t % 2) ? nx - 1 : 0;
    t /= 2;
    j = t % ny;
    k = t / ny;
  } else if ((t -= 2 * ny * nz) < 2 * nxs * nz) {  // y faces, interior i
    j = (t % 2) ? ny - 1 : 0;
    t /= 2;
    i = 1 + t % nxs;
    k = t / nxs;
  } else if ((t -= 2 * nxs * nz) < 2 * nxs * nys) {  // z faces, interior i and j
    k = (t % 2) ? nz - 1 : 0;
    t /= 2;
    i = 1 + t % nxs;
    j = 1 + t / nxs;
  } else {
    return;
  }
  out[i + nx * (j + ny * k)] = heat_point_bc<3>(a, in, i, j, k);
}

template <class T>
__global__ void __launch_bounds__(256) heat2d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out) {
  const std::int64_t nx = a.n[0], ny = a.n[1];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const std::int64_t idx = i + nx * j;
  if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {
    const T m[2] = {in[idx - 1], in[idx - nx]};
    const T p[2] = {in[idx + 1], in[idx + nx]};
    out[idx] = ftcs_point<2>(in[idx], m, p, a.c, heat_source(a, idx));
  } else {
    out[idx] = heat_point_bc<2>(a, in, i, j, 0);
  }
}

template <class T>
__global__ void __launch_bounds__(256) heat1d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out) {
  const std::int64_t nx = a.n[0];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  if (i > 0 && i < nx - 1) {
    const T m[1] = {in[i - 1]};
    const T p[1] = {in[i + 1]};
    out[i] = ftcs_point<1>(in[i], m, p, a.c, heat_source(a, i));
  } else {
    out[i] = heat_point_bc<1>(a, in, i, 0, 0);
  }
}

inline unsigned blocks_for(std::int64_t n, unsigned b) { return unsigned((n + b - 1) / b); }

template <class T>
void launch_heat_step(const HeatArgs<T>& a, const T* in, T* out, cudaStream_t s) {
  if (a.ndim == 3) {
    const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
    const std::int64_t faces = 2 * (ny * nz + (nx - 2) * nz + (nx - 2) * (ny - 2));
    heat3d_faces<T><<<blocks_for(faces, 256), 256, 0, s>>>(a, in, out);
    // GF_HEAT3D_KCHUNK (z planes per block): a tuning knob, read once, temporary.
    static const int kc = std::getenv("GF_HEAT3D_KCHUNK") ? std::atoi(std::getenv("GF_HEAT3D_KCHUNK")) : 16;
    const int kchunk = int(kc < nz - 2 ? kc : nz - 2);
    const dim3 block(32, 8);
    const dim3 grid(blocks_for(nx - 2, 32), blocks_for(ny - 2, 8), blocks_for(nz - 2, kchunk));
    if (nx * ny * nz < (std::int64_t(1) << 31))
      heat3d_interior<T, int><<<grid, block, 0, s>>>(a, in, out, kchunk);
    else
      heat3d_interior<T, std::int64_t><<<grid, block, 0, s>>>(a, in, out, kchunk);
  } else if (a.ndim == 2) {
    const dim3 block(64, 4);
    const dim3 grid(blocks_for(a.n[0], 64), blocks_for(a.n[1], 4));
    heat2d_kernel<T><<<grid, block, 0, s>>>(a, in, out);
  } else {
    heat1d_kernel<T><<<blocks_for(a.n[0], 256), 256, 0, s>>>(a, in, out);
  }
}

}  // namespace gf
