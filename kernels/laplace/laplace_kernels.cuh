// Laplace/Poisson kernels: Jacobi and red-black SOR sweeps, the residual as a
// term of the fused reductions (CudaBackend::reduce), the CSR matrix of the
// operator for cuSPARSE, and the spectral step of the FFT solve. Every point
// goes through the laplace_ops.hpp formulas.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/march_kernels.cuh"
#include "kernels/cuda/vec16.cuh"
#include "kernels/laplace/laplace_ops.hpp"

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

// True when no neighbour of (i, j, k) of a grid of n points per axis falls
// off it (and so no rule applies).
template <int D>
__device__ __forceinline__ bool lap_interior(const std::int64_t* n, std::int64_t i,
                                             std::int64_t j, std::int64_t k) {
  bool in = i > 0 && i < n[0] - 1;
  if constexpr (D > 1) in = in && j > 0 && j < n[1] - 1;
  if constexpr (D > 2) in = in && k > 0 && k < n[2] - 1;
  return in;
}

// Neighbours of an interior point, directly.
template <int D, class T>
__device__ __forceinline__ void gather_interior(const Layout& l, const T* u, std::int64_t idx,
                                                T* m, T* p) {
  m[0] = u[idx - 1];
  p[0] = u[idx + 1];
  if constexpr (D > 1) {
    m[1] = u[idx - l.sy];
    p[1] = u[idx + l.sy];
  }
  if constexpr (D > 2) {
    m[2] = u[idx - l.sz];
    p[2] = u[idx + l.sz];
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
  static constexpr bool ahead_whole_rows = sizeof(T) == 8;  // StarAhead, march_kernels.cuh
  static constexpr int down_within_l2 = sizeof(T) == 8 ? 2 : 8;  // DownWithinL2, the same
  __device__ __forceinline__ T interior(T, const T* m, const T* p, int idx) const {
    return jacobi_formula<D>(m, p, this->ih2, rhs_at(*this, std::int64_t(idx)), this->inv_diag);
  }
  __device__ __forceinline__ T face(const FieldView<const T>& in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return jacobi_point<D>(*this, in, i, j, k);
  }
};

template <int D, class T>
__global__ void __launch_bounds__(256) jacobi_kernel(LaplaceArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out, Layout l) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      const std::int64_t idx = l.index(i, j, k);
      if (lap_interior<D>(l.n, i, j, k)) {
        T m[3], p[3];
        gather_interior<D>(l, in, idx, m, p);
        out[idx] = jacobi_formula<D>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag);
      } else {
        out[idx] = jacobi_point<D>(a, FieldView<const T>(in, l), i, j, k);
      }
    }
}

// sor_point at an interior point of u (every neighbour in the grid), in
// place: its neighbours read directly.
template <int D, class T>
__device__ __forceinline__ void sor_interior_in_place(const LaplaceArgs<T>& a,
                                                      const FieldView<T>& u, std::int64_t idx) {
  T m[3], p[3];
  gather_interior<D>(static_cast<const Layout&>(u), u.p, idx, m, p);
  u[idx] = sor_formula(u[idx], jacobi_formula<D>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag), a.omega);
}

// sor_point at any point (i, j, k) of u (index idx), in place: off the faces
// by sor_interior_in_place, on them by the boundary rules.
template <int D, class T>
__device__ __forceinline__ void sor_in_place(const LaplaceArgs<T>& a, const FieldView<T>& u,
                                             std::int64_t i, std::int64_t j, std::int64_t k,
                                             std::int64_t idx) {
  if (lap_interior<D>(u.n, i, j, k))
    sor_interior_in_place<D>(a, u, idx);
  else
    u[idx] = sor_point<D>(a, FieldView<const T>(u), i, j, k);
}

// What sor_in_place would store at (i, j, k) of u (3D), read from u and
// stored nowhere: the same two formulas on the same values, so the same
// bits; indices in I off the faces (32 bits where the field has fewer than
// 2³¹ values), gathered in gather_interior's order.
template <class T, class I>
__device__ __forceinline__ T sor_value(const LaplaceArgs<T>& a, const FieldView<const T>& u, I i,
                                       I j, I k) {
  if (i < 1 || j < 1 || k < 1 || i > I(u.n[0] - 2) || j > I(u.n[1] - 2) || k > I(u.n[2] - 2))
    return sor_point<3>(a, u, i, j, k);
  const I sy = I(u.sy), sz = I(u.sz);
  const I idx = u.template index_as<I>(i, j, k);
  T m[3] = {u.p[idx - 1], u.p[idx - sy], u.p[idx - sz]};
  T p[3] = {u.p[idx + 1], u.p[idx + sy], u.p[idx + sz]};
  return sor_formula(u.p[idx], jacobi_formula<3>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag),
                     a.omega);
}

// One colour, in place: a point reads only points of the other colour (an
// even number of points on periodic axes is a case rule), so no thread reads
// what another writes.
template <int D, class T>
__global__ void __launch_bounds__(256) sor_kernel(LaplaceArgs<T> a, T* u, Layout l, int colour) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      if (sor_colour(i, j, k) != colour) continue;
      const std::int64_t idx = l.index(i, j, k);
      sor_in_place<D>(a, FieldView<T>(u, l), i, j, k, idx);
    }
}

// ---- the residual, a term of the fused reductions ----------------------------

// The residual r of a point of a field of layout l, stored in r when r is
// given; its term r² (reductions: TermAt, the point's coordinates given).
template <int D, class T>
struct ResidualFn {
  LaplaceArgs<T> a;
  const T* u;
  T* r;  // may be null
  Layout l;
  // The term of point (i, j, k) at index idx (the reductions' walk gives
  // both: no division a point, which cost more than the formula). Off the
  // faces residual_point's formula on the neighbours read directly, W = 1:
  // the same value.
  __device__ double at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) const {
    T v;
    if (lap_interior<D>(l.n, i, j, k)) {
      T m[3], p[3];
      gather_interior<D>(l, u, idx, m, p);
      v = residual_formula<D>(a, u[idx], m, p, rhs_at(a, idx), T(1));
    } else {
      v = residual_point<D>(a, FieldView<const T>(u, l), i, j, k);
    }
    if (r) r[idx] = v;
    return double(v) * double(v);
  }
};

// ---- the operator, matrix-free ---------------------------------------------------

// y = A x through the marches: apply_formula off the faces (every such point
// has weight 1 and is no unknown's neighbour rule), apply_point on the y and
// z faces. The x faces take the march's x rule (wrap, mirror, hold), which
// knows no weight W and holds Dirichlet points at x instead of 0: the
// x-faces kernel below rewrites them unless both x faces are periodic.
template <class T, int D>
struct ApplyOp : LaplaceArgs<T> {
  using value_type = T;
  static constexpr int min_blocks = sizeof(T) == 4 ? 6 : 4;
  static constexpr int down_within_l2 = 0;  // never (DownWithinL2, march_kernels.cuh)
  __device__ __forceinline__ T interior(T c, const T* m, const T* p, int) const {
    return apply_formula<D>(*this, c, m, p);
  }
  __device__ __forceinline__ T face(const FieldView<const T>& in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return apply_point<D>(*this, in, i, j, k);
  }
};

// apply_point at i = 0 and i = nx − 1 of every row (thread t: row t / 2, end t % 2).
template <int D, class T>
__global__ void __launch_bounds__(256) apply_xfaces_kernel(LaplaceArgs<T> a,
                                                           const T* __restrict__ x,
                                                           T* __restrict__ y, Layout l) {
  const std::int64_t rows = l.n[1] * l.n[2];
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; t < 2 * rows;
       t += stride) {
    const std::int64_t row = t / 2, j = row % l.n[1], k = row / l.n[1];
    const std::int64_t i = (t % 2) ? l.n[0] - 1 : 0;
    y[l.index(i, j, k)] = apply_point<D>(a, FieldView<const T>(x, l), i, j, k);
  }
}

// One thread a point (1D grids, and fields the marches do not take).
template <int D, class T>
__global__ void __launch_bounds__(256) apply_kernel(LaplaceArgs<T> a, const T* __restrict__ x,
                                                    T* __restrict__ y, Layout l) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      const std::int64_t idx = l.index(i, j, k);
      if (lap_interior<D>(l.n, i, j, k)) {
        T m[3], p[3];
        gather_interior<D>(l, x, idx, m, p);
        y[idx] = apply_formula<D>(a, x[idx], m, p);
      } else {
        y[idx] = apply_point<D>(a, FieldView<const T>(x, l), i, j, k);
      }
    }
}

// ---- the operator as a CSR matrix (cuSPARSE) -------------------------------------

// Rows of the matrix are the fields' values (a padding value's row is empty).
// I: the index type of the row pointers and columns (int, or std::int64_t
// where the entries pass 2³¹).
template <int D, class T, class I>
__global__ void __launch_bounds__(256) csr_count_kernel(LaplaceArgs<T> a, Layout l, I* counts,
                                                        std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += stride) {
    std::int64_t i, j, k, cols[kMaxRowEntries];
    T vals[kMaxRowEntries];
    l.locate(idx, i, j, k);
    counts[idx] = i < l.n[0] ? laplace_row<D>(a, l, i, j, k, cols, vals) : 0;
  }
}

template <int D, class T, class I>
__global__ void __launch_bounds__(256) csr_fill_kernel(LaplaceArgs<T> a, Layout l,
                                                       const I* rowptr, I* colind, T* values,
                                                       std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += stride) {
    std::int64_t i, j, k, cols[kMaxRowEntries];
    T vals[kMaxRowEntries];
    l.locate(idx, i, j, k);
    if (i >= l.n[0]) continue;
    const int cnt = laplace_row<D>(a, l, i, j, k, cols, vals);
    const I base = rowptr[idx];
    for (int e = 0; e < cnt; ++e) {
      colind[base + e] = I(cols[e]);
      values[base + e] = vals[e];
    }
  }
}

// ---- the spectral step of the FFT solve -------------------------------------------

template <class T>
using FftComplex = std::conditional_t<sizeof(T) == 4, cufftComplex, cufftDoubleComplex>;

// The half spectrum of a grid of n points per axis: n[0]/2 + 1 x modes,
// then n[1], n[2], x fastest (cuFFT's r2c layout).
struct HalfSpectrum {
  std::int64_t n[3];
  Layout modes;
  explicit HalfSpectrum(const std::int64_t* grid) {
    for (int a = 0; a < 3; ++a) n[a] = grid[a];
    const std::int64_t h[3] = {grid[0] / 2 + 1, grid[1], grid[2]};
    modes = Layout::dense(h);
  }
};

template <class T>
__global__ void __launch_bounds__(256) spectral_scale_kernel(LaplaceArgs<T> a, HalfSpectrum hs,
                                                             const FftComplex<T>* __restrict__ f,
                                                             FftComplex<T>* __restrict__ u,
                                                             double npts) {
  const std::int64_t nhalf = hs.modes.size();
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t m = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; m < nhalf;
       m += stride) {
    std::int64_t mx, my, mz;
    hs.modes.position(m, mx, my, mz);
    const double s = spectral_factor(a, hs.n, mx, my, mz, npts);
    u[m].x = T(s * double(f[m].x));
    u[m].y = T(s * double(f[m].y));
  }
}

// |F + k²·G|² per mode (base: |F|²), weighted for the half spectrum.
template <class T>
struct SpectralResidualFn {
  LaplaceArgs<T> a;
  HalfSpectrum hs;
  const FftComplex<T>* f;
  const FftComplex<T>* g;  // null: the norm of f
  __device__ double operator()(std::int64_t m) const {
    std::int64_t mx, my, mz;
    hs.modes.position(m, mx, my, mz);
    const double w = half_spectrum_weight(mx, hs.n[0]);
    if (!g) return spectral_residual2(0.0, w, f[m].x, f[m].y, 0.0, 0.0);
    return spectral_residual2(spectral_k2(a, hs.n, mx, my, mz), w, f[m].x, f[m].y, g[m].x,
                              g[m].y);
  }
};

}  // namespace gf
