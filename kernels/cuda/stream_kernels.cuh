// STREAM's triad a = b + s·c (ops/stream.hpp): the reference load of
// `gridforge bench` (the GPU's ceiling is its device-to-device copy; the
// triad is here so that both executors have every Backend operation).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/ops/stream.hpp"

namespace gf {

template <class T>
__global__ void __launch_bounds__(256) triad_kernel(T* __restrict__ a, const T* __restrict__ b,
                                                    T s, const T* __restrict__ c,
                                                    std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += stride)
    a[i] = triad_point(b[i], s, c[i]);
}

}  // namespace gf
