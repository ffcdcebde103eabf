// Kernels of the MPI halo exchange (kernels/dist/) and the owned-point mask
// of the reductions on a rank-local grid. The MPI calls themselves are in
// kernels/dist/dist_backend.cpp: no .cu file includes mpi.h.
#pragma once
#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "grid/grid.hpp"
#include "kernels/ops/stats.hpp"

namespace gf {

// The box a rank owns inside its padded block, in a field of layout l (the
// values of a padded row's padding belong to no point); `all`: every value
// (one rank, a dense field).
struct OwnedMask {
  std::int64_t lo[3], hi[3];
  Layout l;
  bool all;
  static OwnedMask of(const Grid& g, const Layout& l) {
    OwnedMask m{};
    for (int a = 0; a < 3; ++a) {
      m.lo[a] = g.halo_lo[a];
      m.hi[a] = l.n[a] - g.halo_hi[a];
    }
    m.l = l;
    m.all = !g.has_halo() && l.is_dense();
    return m;
  }
  __device__ __forceinline__ bool owns(std::int64_t idx) const {
    if (all) return true;
    std::int64_t i, j, k;
    l.locate(idx, i, j, k);
    return owns_at(i, j, k);
  }
  __device__ __forceinline__ bool owns_at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return all ||
           (i >= lo[0] && i < hi[0] && j >= lo[1] && j < hi[1] && k >= lo[2] && k < hi[2]);
  }
};

// A thread's walk over the points q, q + stride, ... of a layout in
// x-fastest order (the order of a dense field's values), giving each one's
// index in the layout and its coordinates (i, j, k) without a division per
// point: rows are sy apart (Layout::aligned_rows pads rows, never planes,
// so row r = j + k·ny starts at r·sy).
struct PointWalk {
  std::int64_t i, j, k, row, di, dj, dk, drow, n0, n1, sy;
  __device__ PointWalk(const Layout& l, std::int64_t q, std::int64_t stride)
      : i(q % l.n[0]), row(q / l.n[0]), di(stride % l.n[0]), drow(stride / l.n[0]), n0(l.n[0]),
        n1(l.n[1]), sy(l.sy) {
    j = row % n1;
    k = row / n1;
    dj = drow % n1;
    dk = drow / n1;
  }
  __device__ std::int64_t index() const { return i + row * sy; }
  __device__ void next() {
    i += di;
    row += drow;
    j += dj;
    k += dk;
    if (i >= n0) {
      i -= n0;
      ++row;
      ++j;
    }
    if (j >= n1) {
      j -= n1;
      ++k;
    }
  }
};

// Whether a reduction term takes the point's coordinates too: f.at(i, j,
// k, idx) (the walk's, no division), else f(idx).
template <class F, class = void>
struct TermAt : std::false_type {};
template <class F>
struct TermAt<F, std::void_t<decltype(std::declval<const F&>().at(std::int64_t(0), std::int64_t(0),
                                                                   std::int64_t(0), std::int64_t(0)))>>
    : std::true_type {};

// A reduction term counted at owned points only; f runs everywhere (its
// writes, r of residual and cg_update, cover the halo too).
template <class F>
struct OwnedOnly {
  F f;
  OwnedMask m;
  __device__ double operator()(std::int64_t idx) const {
    const double v = f(idx);
    return m.owns(idx) ? v : 0.0;
  }
  template <class G = F, class = std::enable_if_t<TermAt<G>::value>>
  __device__ double at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) const {
    const double v = f.at(i, j, k, idx);
    return m.owns_at(i, j, k) ? v : 0.0;
  }
};

// buf = the box b of a field (ToBuf: b a view of the box, grid/view.hpp), or
// the box = buf; buf packed x fastest.
template <class T, bool ToBuf>
__global__ void __launch_bounds__(256) box_copy_kernel(FieldView<T> b, T* buf) {
  const std::int64_t total = b.size();
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t q = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; q < total;
       q += stride) {
    const std::int64_t idx = b.index_of_point(q);
    if constexpr (ToBuf)
      buf[q] = b[idx];
    else
      b[idx] = buf[q];
  }
}

// Per-block min/max/sum/non-finite count over the points of a field (not
// its rows' padding), the owned box only where `masked` (a rank's block);
// the host combines the blocks' partials.
template <class T>
__global__ void __launch_bounds__(256) owned_stats_kernel(const T* u, OwnedMask m, bool masked,
                                                          StatsAcc* partials) {
  using BlockReduce = cub::BlockReduce<StatsAcc, 256>;
  __shared__ typename BlockReduce::TempStorage tmp;
  StatsAcc acc{INFINITY, -INFINITY, 0.0, 0ull};
  const std::int64_t n = m.l.size();
  const std::int64_t stride = std::int64_t(gridDim.x) * 256;
  std::int64_t q = blockIdx.x * std::int64_t(256) + threadIdx.x;
  if (q < n) {
    PointWalk w(m.l, q, stride);
    for (; q < n; q += stride, w.next()) {
      const std::int64_t idx = w.index();
      if (!masked || m.owns(idx)) acc = StatsCombine{}(acc, StatsOf{}(u[idx]));
    }
  }
  const StatsAcc s = BlockReduce(tmp).Reduce(acc, StatsCombine{});
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

}  // namespace gf
