// Generic stencil kernels: the taps live in constant memory (every thread of
// a warp reads the same tap at the same time, which the constant cache
// broadcasts); interior points sum taps by linear offset, points within the
// radius of a face go through stencil_point_bc (the boundary rules).
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/ops/stencil.hpp"

namespace gf {

__constant__ StencilTap<float> c_taps_f[kMaxStencilTaps];
__constant__ StencilTap<double> c_taps_d[kMaxStencilTaps];

template <class T>
__device__ __forceinline__ const StencilTap<T>* const_taps();
template <>
__device__ __forceinline__ const StencilTap<float>* const_taps<float>() { return c_taps_f; }
template <>
__device__ __forceinline__ const StencilTap<double>* const_taps<double>() { return c_taps_d; }

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

// One thread per point; blocks of 32 × 8 in x and y, one z plane per block row.
template <int D, class T>
__global__ void __launch_bounds__(256) stencil_kernel(StencilArgs<T> a, const T* __restrict__ in,
                                                      T* __restrict__ out) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  const std::int64_t k = blockIdx.z;
  if (i >= a.n[0] || j >= a.n[1]) return;
  const std::int64_t idx = i + a.n[0] * (j + a.n[1] * k);
  const StencilTap<T>* taps = const_taps<T>();
  out[idx] = stencil_interior(a, i, j, k) ? stencil_point_interior(a, taps, in, idx)
                                          : stencil_point_bc<D>(a, taps, in, i, j, k);
}

template <class T>
void launch_stencil(const StencilArgs<T>& a, const T* in, T* out, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid(unsigned((a.n[0] + 31) / 32), unsigned((a.n[1] + 7) / 8), unsigned(a.n[2]));
  switch (a.ndim) {
    case 1: stencil_kernel<1, T><<<grid, block, 0, s>>>(a, in, out); break;
    case 2: stencil_kernel<2, T><<<grid, block, 0, s>>>(a, in, out); break;
    default: stencil_kernel<3, T><<<grid, block, 0, s>>>(a, in, out); break;
  }
}

}  // namespace gf
