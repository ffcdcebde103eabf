// Laplace/Poisson kernels: Jacobi and red-black SOR sweeps, reductions fused
// with the per-point work (residual, dot, CG's update: a CUB BlockReduce per
// block into partial sums, then cub::DeviceReduce::Sum over the partials, so
// results do not depend on the order blocks finish), the CSR matrix of the
// operator for cuSPARSE, and the spectral step of the FFT solve. Every point
// goes through the kernels/ops/laplace.hpp formulas.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/march_kernels.cuh"
#include "kernels/cuda/vec16.cuh"
#include "kernels/ops/laplace.hpp"

namespace gf {

inline unsigned lap_blocks(std::int64_t n, unsigned b) { return unsigned((n + b - 1) / b); }

// Block and grid of the point kernels: x in the grid's x, y and z looped over
// (grid-stride) so that no grid dimension passes its limit of 65535.
inline void point_launch(int ndim, const std::int64_t* n, dim3& grid, dim3& block) {
  if (ndim == 1) {
    block = dim3(256);
    grid = dim3(lap_blocks(n[0], 256));
  } else if (ndim == 2) {
    block = dim3(64, 4);
    grid = dim3(lap_blocks(n[0], 64), std::min(lap_blocks(n[1], 4), 65535u));
  } else {
    block = dim3(32, 8);
    grid = dim3(lap_blocks(n[0], 32), std::min(lap_blocks(n[1], 8), 65535u),
                unsigned(std::min<std::int64_t>(n[2], 65535)));
  }
}

// True when no neighbour of (i, j, k) falls off the grid (and so no rule applies).
template <int D, class T>
__device__ __forceinline__ bool lap_interior(const LaplaceArgs<T>& a, std::int64_t i,
                                             std::int64_t j, std::int64_t k) {
  bool in = i > 0 && i < a.n[0] - 1;
  if constexpr (D > 1) in = in && j > 0 && j < a.n[1] - 1;
  if constexpr (D > 2) in = in && k > 0 && k < a.n[2] - 1;
  return in;
}

// Neighbours of an interior point, directly.
template <int D, class T>
__device__ __forceinline__ void gather_interior(const LaplaceArgs<T>& a, const T* u,
                                                std::int64_t idx, T* m, T* p) {
  m[0] = u[idx - 1];
  p[0] = u[idx + 1];
  if constexpr (D > 1) {
    m[1] = u[idx - a.n[0]];
    p[1] = u[idx + a.n[0]];
  }
  if constexpr (D > 2) {
    const std::int64_t plane = a.n[0] * a.n[1];
    m[2] = u[idx - plane];
    p[2] = u[idx + plane];
  }
}

// The Jacobi sweep as an operator of the marches (march_kernels.cuh): the
// formula from gathered neighbours inside, jacobi_point (the boundary rules)
// on the faces. (The one-thread-per-point kernel below ran a 512³ float32
// sweep at 0.24 of copy bandwidth on an H200, a 16384² one at 0.27.)
template <class T, int D>
struct JacobiOp : LaplaceArgs<T> {
  using value_type = T;
  static constexpr int min_blocks = sizeof(T) == 4 ? 6 : 4;
  __device__ __forceinline__ T interior(T, const T* m, const T* p, int idx) const {
    return jacobi_formula<D>(m, p, this->ih2, rhs_at(*this, std::int64_t(idx)), this->inv_diag);
  }
  __device__ __forceinline__ T face(const T* in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return jacobi_point<D>(*this, in, i, j, k);
  }
};

template <int D, class T>
__global__ void __launch_bounds__(256) jacobi_kernel(LaplaceArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      const std::int64_t idx = i + nx * (j + ny * k);
      if (lap_interior<D>(a, i, j, k)) {
        T m[3], p[3];
        gather_interior<D>(a, in, idx, m, p);
        out[idx] = jacobi_formula<D>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag);
      } else {
        out[idx] = jacobi_point<D>(a, in, i, j, k);
      }
    }
}

// One colour, in place: a point reads only points of the other colour (an
// even number of points on periodic axes is a case rule), so no thread reads
// what another writes.
template <int D, class T>
__global__ void __launch_bounds__(256) sor_kernel(LaplaceArgs<T> a, T* u, int colour) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      if (sor_colour(i, j, k) != colour) continue;
      const std::int64_t idx = i + nx * (j + ny * k);
      if (lap_interior<D>(a, i, j, k)) {
        T m[3], p[3];
        gather_interior<D>(a, u, idx, m, p);
        u[idx] = sor_formula(u[idx], jacobi_formula<D>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag),
                             a.omega);
      } else {
        u[idx] = sor_point<D>(a, u, i, j, k);
      }
    }
}

// ---- fused reductions -------------------------------------------------------------

constexpr int kReduceThreads = 256;
constexpr int kMaxReduceBlocks = 2048;

// partials[b] = Σ f(idx) over the indices block b visits (grid-stride).
template <class F>
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(F f, std::int64_t n,
                                                                double* partials) {
  using BlockReduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  double acc = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * kReduceThreads;
  for (std::int64_t idx = blockIdx.x * std::int64_t(kReduceThreads) + threadIdx.x; idx < n;
       idx += stride)
    acc += f(idx);
  const double s = BlockReduce(tmp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__device__ __forceinline__ void split_index(std::int64_t idx, std::int64_t nx, std::int64_t ny,
                                            std::int64_t& i, std::int64_t& j, std::int64_t& k) {
  i = idx % nx;
  const std::int64_t t = idx / nx;
  j = t % ny;
  k = t / ny;
}

template <int D, class T>
struct ResidualFn {
  LaplaceArgs<T> a;
  const T* u;
  T* r;  // may be null
  __device__ double operator()(std::int64_t idx) const {
    std::int64_t i, j, k;
    split_index(idx, a.n[0], a.n[1], i, j, k);
    const T v = residual_point<D>(a, u, i, j, k);
    if (r) r[idx] = v;
    return double(v) * double(v);
  }
};

template <class T>
struct DotFn {
  const T* x;
  const T* y;
  __device__ double operator()(std::int64_t i) const { return double(x[i]) * double(y[i]); }
};

template <class T>
struct CgUpdateFn {
  T alpha;
  const T* p;
  const T* q;
  T* u;
  T* r;
  __device__ double operator()(std::int64_t i) const {
    u[i] += alpha * p[i];
    const T rn = r[i] - alpha * q[i];
    r[i] = rn;
    return double(rn) * double(rn);
  }
};

template <class T>
__global__ void __launch_bounds__(256) axpby_kernel(T a, const T* __restrict__ x, T b,
                                                    T* __restrict__ y, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = b == T(0) ? a * x[i] : a * x[i] + b * y[i];  // y is not read when b is 0
}

template <class T>
__global__ void __launch_bounds__(256) add_constant_kernel(T* u, T c, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += stride)
    u[i] += c;
}

// ---- the operator as a CSR matrix (cuSPARSE) -------------------------------------

template <int D, class T>
__global__ void __launch_bounds__(256) csr_count_kernel(LaplaceArgs<T> a, int* counts,
                                                        std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += stride) {
    std::int64_t i, j, k, cols[kMaxRowEntries];
    T vals[kMaxRowEntries];
    split_index(idx, a.n[0], a.n[1], i, j, k);
    counts[idx] = laplace_row<D>(a, i, j, k, cols, vals);
  }
}

template <int D, class T>
__global__ void __launch_bounds__(256) csr_fill_kernel(LaplaceArgs<T> a, const int* rowptr,
                                                       int* colind, T* values, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += stride) {
    std::int64_t i, j, k, cols[kMaxRowEntries];
    T vals[kMaxRowEntries];
    split_index(idx, a.n[0], a.n[1], i, j, k);
    const int cnt = laplace_row<D>(a, i, j, k, cols, vals);
    const int base = rowptr[idx];
    for (int e = 0; e < cnt; ++e) {
      colind[base + e] = int(cols[e]);
      values[base + e] = vals[e];
    }
  }
}

// ---- the spectral step of the FFT solve -------------------------------------------

template <class T>
using FftComplex = std::conditional_t<sizeof(T) == 4, cufftComplex, cufftDoubleComplex>;

// Mode m of the half spectrum (hx = nx/2 + 1 x modes, x fastest).
__device__ __forceinline__ void split_mode(std::int64_t m, std::int64_t hx, std::int64_t ny,
                                           std::int64_t& mx, std::int64_t& my, std::int64_t& mz) {
  split_index(m, hx, ny, mx, my, mz);
}

template <class T>
__global__ void __launch_bounds__(256) spectral_scale_kernel(LaplaceArgs<T> a,
                                                             const FftComplex<T>* __restrict__ f,
                                                             FftComplex<T>* __restrict__ u,
                                                             std::int64_t nhalf, double npts) {
  const std::int64_t hx = a.n[0] / 2 + 1;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t m = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; m < nhalf;
       m += stride) {
    std::int64_t mx, my, mz;
    split_mode(m, hx, a.n[1], mx, my, mz);
    const double s = spectral_factor(a, mx, my, mz, npts);
    u[m].x = T(s * double(f[m].x));
    u[m].y = T(s * double(f[m].y));
  }
}

// |F + k²·G|² per mode (base: |F|²), weighted for the half spectrum.
template <class T>
struct SpectralResidualFn {
  LaplaceArgs<T> a;
  const FftComplex<T>* f;
  const FftComplex<T>* g;  // null: the norm of f
  __device__ double operator()(std::int64_t m) const {
    std::int64_t mx, my, mz;
    split_mode(m, a.n[0] / 2 + 1, a.n[1], mx, my, mz);
    const double w = half_spectrum_weight(mx, a.n[0]);
    if (!g) return spectral_residual2(0.0, w, f[m].x, f[m].y, 0.0, 0.0);
    return spectral_residual2(spectral_k2(a, mx, my, mz), w, f[m].x, f[m].y, g[m].x, g[m].y);
  }
};

}  // namespace gf
