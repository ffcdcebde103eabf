// Wave step kernels. Every point goes through wave_point (the shared
// formula): on 2D and 3D grids whose rows are whole 16-byte vectors, the
// marches of kernels/cuda/march_kernels.cuh with WaveOp (the earlier level
// read at the point's own index, as heat reads its source); other 2D and 3D
// grids a thread a point (wave_rows), 1D through wave_point_bc. An absorbing x face, which the
// marches do not know (they read x faces by neighbour()'s rules), has its
// points redone after the march by wave_x_faces.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/march_kernels.cuh"
#include "kernels/wave/wave_ops.hpp"

namespace gf {

// The step as an operator of the marches; SRC: a source term compiled in.
template <class T, int D, bool SRC>
struct WaveOp : WaveArgs<T> {
  using value_type = T;
  static constexpr int min_blocks = sizeof(T) == 4 ? 6 : 4;
  // No tail blocks (march_kernels.cuh): with them the 3D step lost (H100,
  // float32, fraction of copy: 257³ 0.89 → 0.83, 513³ 0.95 → 0.93,
  // 257 × 129 × 65 1.10 → 0.89; ncu at 257³: 146 → 154 MB read from DRAM,
  // 75 → 78 µs), where every other march gained.
  static constexpr bool no_tail = true;
  explicit WaveOp(const WaveArgs<T>& a) : WaveArgs<T>(a) {}
  __device__ __forceinline__ T interior(T u, const T* m, const T* p, int idx) const {
    return wave_point_as<D, SRC>(*this, u, this->w[idx], m, p,
                                 SRC ? wave_source(*this, idx) : T(0));
  }
  __device__ __forceinline__ T face(const FieldView<const T>& in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return wave_point_bc<D>(*this, in, i, j, k);
  }
};

// Every point through wave_point_bc, one thread a point.
template <int D, class T>
__global__ void __launch_bounds__(256) wave_points(WaveArgs<T> a, const T* __restrict__ in,
                                                   T* __restrict__ out, Layout l) {
  const std::int64_t q = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (q >= l.size()) return;
  std::int64_t i, j, k;
  l.position(q, i, j, k);
  out[l.index(i, j, k)] = wave_point_bc<D>(a, FieldView<const T>(in, l), i, j, k);
}

// 2D and 3D grids whose rows the marches do not take (odd lengths): a
// thread a point, (i, j) from a 2D block and k from the grid's z; points off
// every face read their neighbours directly, the others go through
// wave_point_bc (the same formula, so the same values).
template <int D, bool SRC, class T, class I>
__global__ void __launch_bounds__(256) wave_rows(WaveArgs<T> a, const T* __restrict__ in,
                                                 T* __restrict__ out, Layout l) {
  const I nx = I(l.n[0]), ny = I(l.n[1]), nz = I(l.n[2]);
  const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I j = I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y);
  const I k = I(blockIdx.z);
  if (i >= nx || j >= ny) return;
  const I idx = l.index_as<I>(i, j, k);
  const bool inner = i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && (D < 3 || (k > 0 && k < nz - 1));
  if (inner) {
    const I sy = I(l.sy), sz = I(l.sz);
    T m[3], p[3];
    m[0] = in[idx - 1], p[0] = in[idx + 1];
    m[1] = in[idx - sy], p[1] = in[idx + sy];
    if constexpr (D > 2) m[2] = in[idx - sz], p[2] = in[idx + sz];
    out[idx] = wave_point_as<D, SRC>(a, in[idx], a.w[idx], m, p,
                                     SRC ? wave_source(a, std::int64_t(idx)) : T(0));
  } else {
    out[idx] = wave_point_bc<D>(a, FieldView<const T>(in, l), i, j, k);
  }
}

template <int D, class T>
void launch_wave_rows(const WaveArgs<T>& a, const FieldView<const T>& in, const FieldView<T>& out,
                      cudaStream_t s) {
  const dim3 block(64, 4);
  const dim3 grid(unsigned((in.n[0] + 63) / 64), unsigned((in.n[1] + 3) / 4), unsigned(in.n[2]));
  const bool small = in.span() < (std::int64_t(1) << 31);
  if (wave_has_source(a)) {
    if (small) wave_rows<D, true, T, int><<<grid, block, 0, s>>>(a, in.p, out.p, in);
    else wave_rows<D, true, T, std::int64_t><<<grid, block, 0, s>>>(a, in.p, out.p, in);
  } else {
    if (small) wave_rows<D, false, T, int><<<grid, block, 0, s>>>(a, in.p, out.p, in);
    else wave_rows<D, false, T, std::int64_t><<<grid, block, 0, s>>>(a, in.p, out.p, in);
  }
}

// The points of the x faces (i = 0 and nx − 1) of every row, through
// wave_point_bc: after a march, where an x face absorbs.
template <int D, class T>
__global__ void __launch_bounds__(256) wave_x_faces(WaveArgs<T> a, const T* __restrict__ in,
                                                    T* __restrict__ out, Layout l) {
  const std::int64_t q = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (q >= 2 * l.rows()) return;
  const std::int64_t row = q / 2;
  const std::int64_t i = q % 2 ? l.n[0] - 1 : 0, j = row % l.n[1], k = row / l.n[1];
  out[l.index(i, j, k)] = wave_point_bc<D>(a, FieldView<const T>(in, l), i, j, k);
}

inline unsigned wave_blocks(std::int64_t n) { return unsigned((n + 255) / 256); }

template <class T>
bool absorbs_x(const WaveArgs<T>& a) {
  return a.bc[0].lo == BcType::Absorbing || a.bc[0].hi == BcType::Absorbing;
}

// f(op) with the WaveOp of the run's dimension D (2 or 3) and source.
template <int D, class T, class F>
void with_wave_op(const WaveArgs<T>& a, F&& f) {
  if (wave_has_source(a)) f(WaveOp<T, D, true>(a));
  else f(WaveOp<T, D, false>(a));
}

template <class T>
void launch_wave_step(const WaveArgs<T>& a, const FieldView<const T>& in, const FieldView<T>& out,
                      cudaStream_t s) {
  const auto fix_x = [&](auto d) {
    if (absorbs_x(a) && in.rows() > 0)
      wave_x_faces<decltype(d)::value><<<wave_blocks(2 * in.rows()), 256, 0, s>>>(a, in.p, out.p, in);
  };
  if (a.ndim == 3 && march3d_fits(in, out)) {
    with_wave_op<3>(a, [&](const auto& op) { launch_march3d<false>(op, in, out, s); });
    fix_x(std::integral_constant<int, 3>{});
  } else if (a.ndim == 2 && march2d_fits(in, out)) {
    with_wave_op<2>(a, [&](const auto& op) { launch_march2d<false>(op, in, out, s); });
    fix_x(std::integral_constant<int, 2>{});
  } else if (a.ndim == 3 && in.n[2] <= 65535) {
    launch_wave_rows<3>(a, in, out, s);
  } else if (a.ndim == 2) {
    launch_wave_rows<2>(a, in, out, s);
  } else {
    const unsigned b = wave_blocks(in.size());
    if (a.ndim == 3) wave_points<3><<<b, 256, 0, s>>>(a, in.p, out.p, in);
    else wave_points<1><<<b, 256, 0, s>>>(a, in.p, out.p, in);
  }
}

}  // namespace gf
