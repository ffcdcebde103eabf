// Generic stencil kernels: the taps live in constant memory (every thread of
// a warp reads the same tap at the same time, which the constant cache
// broadcasts); interior points sum taps by linear offset in one kernel, points
// within the radius of a face go through stencil_point_bc (the boundary
// rules) in another.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/ops/stencil.hpp"

namespace gf {

__constant__ StencilTap<float> c_taps_f[kMaxStencilTaps];
__constant__ StencilTap<double> c_taps_d[kMaxStencilTaps];

// Tap t, read from the constant bank itself (a pointer to it would turn the
// reads into generic loads, one pair per tap per thread).
template <class T>
__device__ __forceinline__ const StencilTap<T>& tap(int t) {
  if constexpr (sizeof(T) == 4) return c_taps_f[t];
  else return c_taps_d[t];
}
template <class T>
__device__ __forceinline__ const StencilTap<T>* const_taps() {
  if constexpr (sizeof(T) == 4) return c_taps_f;
  else return c_taps_d;
}

template <class T>
void upload_stencil_taps(const std::vector<StencilTap<T>>& taps, cudaStream_t s) {
  if (taps.size() > std::size_t(kMaxStencilTaps))
    throw DeviceError("a stencil of " + std::to_string(taps.size()) + " points is more than " +
                      std::to_string(kMaxStencilTaps));
  const void* sym = nullptr;
  if constexpr (sizeof(T) == 4) sym = static_cast<const void*>(&c_taps_f);
  else sym = static_cast<const void*>(&c_taps_d);
  GF_CUDA_CHECK(cudaMemcpyToSymbolAsync(sym, taps.data(), taps.size() * sizeof(StencilTap<T>), 0,
                                        cudaMemcpyHostToDevice, s));
}

// Interior points (every tap inside the grid): one thread per point over the
// interior box, no boundary branch, 32-bit indices where the grid allows, so
// the kernel stays small and occupancy high.
template <class T, class I>
__global__ void __launch_bounds__(256) stencil_interior_kernel(StencilArgs<T> a,
                                                               const T* __restrict__ in,
                                                               T* __restrict__ out) {
  const I r = a.radius > 0 ? a.radius : 1;
  const I nx = I(a.n[0]), ny = I(a.n[1]), nz = I(a.n[2]);
  const I i = r + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I j = (a.ndim > 1 ? r : 0) + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y);
  const I k = (a.ndim > 2 ? r : 0) + I(blockIdx.z);
  if (i >= nx - r || (a.ndim > 1 && j >= ny - r)) return;
  const I idx = i + nx * (j + ny * k);
  // Taps in batches of 8 whose loads are all issued before the first is
  // used: a loop that waits on each load in turn is bound by memory latency
  // (seen: star7 at 0.06 of copy bandwidth). The sum keeps the taps' order,
  // as stencil_point_interior does.
  constexpr int B = 8;
  T acc = 0;
  for (int t = 0; t < a.ntaps; t += B) {
    T v[B];
#pragma unroll
    for (int q = 0; q < B; ++q) v[q] = t + q < a.ntaps ? in[idx + I(tap<T>(t + q).lin)] : T(0);
#pragma unroll
    for (int q = 0; q < B; ++q)
      if (t + q < a.ntaps) acc += tap<T>(t + q).w * v[q];
  }
  out[idx] = stencil_combine(a, in[idx], acc);
}

// Points within the radius r of a face (the shell), through the boundary
// rules, one thread each: first the 2r end planes in z, then the 2r end rows
// in y of the planes between, then the 2r end points in x of the rows between
// (r counts only on the grid's axes). Consecutive threads run along x.
template <int D, class T>
__global__ void __launch_bounds__(256) stencil_shell_kernel(StencilArgs<T> a,
                                                            const T* __restrict__ in,
                                                            T* __restrict__ out) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::int64_t r = a.radius > 0 ? a.radius : 1;
  const std::int64_t rz = D > 2 ? r : 0, ry = D > 1 ? r : 0;
  const std::int64_t mz = nz - 2 * rz, my = ny - 2 * ry;  // planes, rows between
  std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  std::int64_t i, j, k;
  if (t < 2 * rz * nx * ny) {  // end planes
    const std::int64_t p = t / (nx * ny);
    k = p < rz ? p : nz - 2 * rz + p;
    j = (t / nx) % ny;
    i = t % nx;
  } else if ((t -= 2 * rz * nx * ny) < mz * 2 * ry * nx) {  // end rows
    const std::int64_t row = t / nx;
    const std::int64_t q = row % (2 * ry);
    k = rz + row / (2 * ry);
    j = q < ry ? q : ny - 2 * ry + q;
    i = t % nx;
  } else if ((t -= mz * 2 * ry * nx) < mz * my * 2 * r) {  // end points of the rows
    const std::int64_t q = t % (2 * r);
    const std::int64_t row = t / (2 * r);
    i = q < r ? q : nx - 2 * r + q;
    j = ry + row % my;
    k = rz + row / my;
  } else {
    return;
  }
  out[i + nx * (j + ny * k)] = stencil_point_bc<D>(a, const_taps<T>(), in, i, j, k);
}

template <class T>
void launch_stencil(const StencilArgs<T>& a, const T* in, T* out, cudaStream_t s) {
  const std::int64_t r = a.radius > 0 ? a.radius : 1;
  std::int64_t m[3];  // interior extent per axis
  for (int ax = 0; ax < 3; ++ax) m[ax] = ax < a.ndim ? a.n[ax] - 2 * r : 1;
  const dim3 block(32, a.ndim > 1 ? 8 : 1);
  if (m[0] > 0 && m[1] > 0 && m[2] > 0) {
    const dim3 grid(unsigned((m[0] + 31) / 32), unsigned((m[1] + block.y - 1) / block.y),
                    unsigned(m[2]));
    if (a.n[0] * a.n[1] * a.n[2] < (std::int64_t(1) << 31))
      stencil_interior_kernel<T, int><<<grid, block, 0, s>>>(a, in, out);
    else
      stencil_interior_kernel<T, std::int64_t><<<grid, block, 0, s>>>(a, in, out);
  }
  const std::int64_t shell = a.n[0] * a.n[1] * a.n[2] - std::max<std::int64_t>(0, m[0]) *
                                                          std::max<std::int64_t>(0, m[1]) *
                                                          std::max<std::int64_t>(0, m[2]);
  const unsigned grid = unsigned((shell + 255) / 256);
  if (shell == 0) return;
  switch (a.ndim) {
    case 1: stencil_shell_kernel<1, T><<<grid, 256, 0, s>>>(a, in, out); break;
    case 2: stencil_shell_kernel<2, T><<<grid, 256, 0, s>>>(a, in, out); break;
    default: stencil_shell_kernel<3, T><<<grid, 256, 0, s>>>(a, in, out); break;
  }
}

}  // namespace gf
