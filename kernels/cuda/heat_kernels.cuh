// Explicit heat step kernels. Every point goes through ftcs_point (the shared
// formula); interior points gather their neighbours directly, points on or
// next to a face go through heat_point_bc, which applies the boundary rules.
#pragma once
#include <cuda_runtime.h>

#include <cstdlib>

#include "kernels/ops/heat.hpp"

namespace gf {

// 3D: one thread per (x, y) column, marching along z over a chunk of planes
// and keeping the z−1, z, z+1 values in registers, so each value is read from
// memory about once; x and y neighbours come through L1. Columns on an x or y
// face, and the z = 0 and z = nz−1 planes, take the boundary path; the interior
// loop has no branch, so the compiler can unroll it and keep several planes'
// loads in flight (a thread that waits on one load at a time cannot cover the
// memory latency: that kernel ran at 0.37 of copy bandwidth on an H200).
template <class T>
__global__ void __launch_bounds__(256) heat3d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out, int kchunk) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const std::int64_t k0 = std::int64_t(blockIdx.z) * kchunk;
  const std::int64_t k1 = k0 + kchunk < nz ? k0 + kchunk : nz;
  const std::int64_t plane = nx * ny;
  const std::int64_t base = i + nx * j;
  if (i == 0 || i == nx - 1 || j == 0 || j == ny - 1) {
    for (std::int64_t k = k0; k < k1; ++k) out[base + k * plane] = heat_point_bc<3>(a, in, i, j, k);
    return;
  }
  if (k0 == 0) out[base] = heat_point_bc<3>(a, in, i, j, 0);
  if (k1 == nz) out[base + (nz - 1) * plane] = heat_point_bc<3>(a, in, i, j, nz - 1);
  const std::int64_t kb = k0 > 1 ? k0 : 1;
  const std::int64_t ke = k1 < nz - 1 ? k1 : nz - 1;
  if (kb >= ke) return;
  std::int64_t idx = base + kb * plane;
  T uzm = in[idx - plane];
  T uc = in[idx];
#pragma unroll 4
  for (std::int64_t k = kb; k < ke; ++k, idx += plane) {
    const T uzp = in[idx + plane];
    const T m[3] = {in[idx - 1], in[idx - nx], uzm};
    const T p[3] = {in[idx + 1], in[idx + nx], uzp};
    out[idx] = ftcs_point<3>(uc, m, p, a.c, heat_source(a, idx));
    uzm = uc;
    uc = uzp;
  }
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
    // Tuning knobs, read once: GF_HEAT3D_BX (x threads of a 256-thread block)
    // and GF_HEAT3D_KCHUNK (z planes per thread). Temporary, for measuring.
    static const int bx = std::getenv("GF_HEAT3D_BX") ? std::atoi(std::getenv("GF_HEAT3D_BX")) : 32;
    static const int kc = std::getenv("GF_HEAT3D_KCHUNK") ? std::atoi(std::getenv("GF_HEAT3D_KCHUNK")) : 32;
    const dim3 block(bx, 256 / bx);
    const int kchunk = int(kc < a.n[2] ? kc : a.n[2]);
    const dim3 grid(blocks_for(a.n[0], block.x), blocks_for(a.n[1], block.y),
                    blocks_for(a.n[2], kchunk));
    heat3d_kernel<T><<<grid, block, 0, s>>>(a, in, out, kchunk);
  } else if (a.ndim == 2) {
    const dim3 block(64, 4);
    const dim3 grid(blocks_for(a.n[0], 64), blocks_for(a.n[1], 4));
    heat2d_kernel<T><<<grid, block, 0, s>>>(a, in, out);
  } else {
    heat1d_kernel<T><<<blocks_for(a.n[0], 256), 256, 0, s>>>(a, in, out);
  }
}

}  // namespace gf
