// Temporal blocking on 2D grids: K steps of explicit heat, of a 2D radius-1
// star stencil (star5's taps in its order) or K Jacobi sweeps in one pass
// over memory, bit for bit the one-step kernels' (every point goes through
// the operator's formula, ops/time_block.hpp, with the same neighbours in the
// same order, and the boundary rules of heat_point_bc / stencil_point_bc /
// jacobi_point through tb_point).
//
// A warp owns a strip of the grid BX = 32·P points wide in x (P points a
// lane, in 16-byte vectors) and marches along a chunk of y, on its own: no
// shared memory and no barrier. Each lane keeps, for every time level
// 0..K−1, that level's values at rows p − 1, p, p + 1 of its P columns in
// registers; the x neighbours of its first and last point come from the next
// lanes by a warp shuffle. When row z of level 0 arrives from memory, level 1
// is computed at z − 1, level 2 at z − 2, ..., level K at z − K, which is
// written. Each level loses one point of valid values at either end of the
// strip, so the strip reaches PADX ≥ K points (a multiple of the vector
// width) beyond the IX = BX − 2·PADX points it writes on either side; the
// chunk starts K rows early for the same reason in y. The y loop is unrolled
// by three, so that the three rows of each level rotate by renaming
// registers instead of moving them.
//
// Strips clear of the x faces run a kernel without the x rules (rows on a y
// wall take the rules for the whole warp alike); the strips at the faces
// (off the grid in part, or on a wall face, or wrapping on a periodic x)
// run the same march with the rules at every point, as a second launch.
// Periodic axes are read wrapped and computed like any other point; beyond a
// wall nothing is read that a written point uses (see time_block_kernels.cuh).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/time_block_kernels.cuh"
#include "grid/view.hpp"
#include "kernels/cuda/vec16.cuh"
#include "kernels/ops/time_block.hpp"

namespace gf {

// The shape of a 2D pass: K steps; NV 16-byte vectors (P = NV·W points) a
// lane; WARPS strips a block; MINB blocks an SM the registers are fitted
// to; AHEAD rows of level 0 fetched ahead (1 or 2).
template <class T, int K_, int NV_, int WARPS_, int MINB_, int AHEAD_>
struct Tb2Shape {
  static constexpr int K = K_, W = Vec16<T>::n, NV = NV_, P = NV * W;
  static constexpr int WARPS = WARPS_, MINB = MINB_, AHEAD = AHEAD_;
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int BX = 32 * P;                 // a strip's points in x
  static constexpr int PADX = (K + W - 1) / W * W;  // computed, not written, on either side
  static constexpr int IX = BX - 2 * PADX;          // written
  static_assert(AHEAD == 1 || AHEAD == 2, "one or two rows ahead");
};

// The march of one strip (a warp) over the rows [kb, ke). XW: a strip at the
// x faces (every point takes the rules; columns off the grid are read as
// zeros and never written). VEC: 16-byte loads and stores (rows starting on
// whole vectors: sy a multiple of W; the middle strips only); else one point
// at a time.
template <bool XW, bool VEC, class Op, class Sh, class T = typename Op::value_type>
__device__ __forceinline__ void tb2_march(const Op& a, const T* __restrict__ in,
                                          T* __restrict__ out, const Layout& lay, int strip, int kb,
                                          int ke) {
  using V = typename Vec16<T>::type;
  constexpr int K = Sh::K, W = Sh::W, NV = Sh::NV, P = Sh::P;
  constexpr TbWalls none{false, false, false};
  const int nx = int(lay.n[0]), ny = int(lay.n[1]);
  const bool px = a.bc[0].lo == BcType::Periodic, py = a.bc[1].lo == BcType::Periodic;
  const int lane = int(threadIdx.x) & 31;
  const int gx = strip * Sh::IX - Sh::PADX + lane * P;  // a multiple of W
  int ix[P];                                            // the lane's columns (−1: off the grid)
  TbWalls wx[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    ix[e] = XW ? tb_axis_index(gx + e, nx, px) : gx + e;
    wx[e] = XW && ix[e] >= 0 ? tb_walls<T>(ix[e], nx, px, a.bc[0]) : none;
  }
  // the lane's points written: whole vectors inside the strip's written part
  // (and, at the faces, on the grid, not wrapped)
  bool writes[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    const int v0 = lane * P + e / W * W;
    writes[e] = v0 >= Sh::PADX && v0 < Sh::BX - Sh::PADX && (!XW || gx + e < nx);
  }
  const int zs = py ? kb - K : max(kb - K, 0);
  const int zf = py ? ke + K : min(ke + K, ny);  // rows read from memory: [zs, zf)

  T r[K][3][P];  // levels 0..K−1, three rows each
#pragma unroll
  for (int l = 0; l < K; ++l)
#pragma unroll
    for (int q = 0; q < 3; ++q)
#pragma unroll
      for (int e = 0; e < P; ++e) r[l][q][e] = T(0);
  // P values of a row from `from` (level 0 or the source field), row iz
  const auto load_row = [&](const T* __restrict__ from, int iz, T(&dst)[P], bool ok) {
    if constexpr (VEC && !XW) {
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        V x{};
        if (ok) x = *reinterpret_cast<const V*>(from + lay.index_as<int>(gx + v * W, iz, 0));
        const T* xs = reinterpret_cast<const T*>(&x);
#pragma unroll
        for (int e = 0; e < W; ++e) dst[v * W + e] = xs[e];
      }
    } else {
#pragma unroll
      for (int e = 0; e < P; ++e)
        dst[e] = (ok && ix[e] >= 0) ? from[lay.index_as<int>(ix[e], iz, 0)] : T(0);
    }
  };
  // Level 0 arrives AHEAD rows ahead of its use, in a ring of three (AHEAD 2)
  T ahead[Sh::AHEAD == 2 ? 3 : 1][P];
  const auto fetch = [&](int z, T(&dst)[P]) {
    load_row(in, py ? tb_axis_index(z, ny, true) : z, dst, z < zf);
  };
  fetch(zs, ahead[0]);
  if constexpr (Sh::AHEAD == 2) fetch(zs + 1, ahead[1]);
  T src_const = T(0);
  if constexpr (Op::kSource) src_const = a.source_term(a.source_const);
  const auto step = [&](int z, auto rot) {
    constexpr int N = decltype(rot)::value, C = (N + 2) % 3,
                  O = (N + 1) % 3;  // rows z, z − 1, z − 2
#pragma unroll
    for (int e = 0; e < P; ++e) r[0][N][e] = ahead[Sh::AHEAD == 2 ? N : 0][e];
    if constexpr (Sh::AHEAD == 2)
      fetch(z + 2, ahead[(N + 2) % 3]);
    else
      fetch(z + 1, ahead[0]);
#pragma unroll
    for (int l = 1; l <= K; ++l) {
      // level l at row p from level l − 1 at p − 1 (O), p (C), p + 1 (N)
      const int p = z - l;
      const T(&c)[P] = r[l - 1][C];
      // beyond the strip's first and last lane the shuffle gives the lane's
      // own value, never used by a written point
      const T left = __shfl_up_sync(0xffffffffu, c[P - 1], 1);
      const T right = __shfl_down_sync(0xffffffffu, c[0], 1);
      const bool in_y = py || (p >= 0 && p < ny);
      const int iy = py ? tb_axis_index(p, ny, true) : p;
      T src[P];
#pragma unroll
      for (int e = 0; e < P; ++e) src[e] = src_const;
      if constexpr (Op::kSource) {
        if (a.source) {
          T raw[P];
          load_row(a.source, iy, raw, in_y);
#pragma unroll
          for (int e = 0; e < P; ++e) src[e] = a.source_term(raw[e]);
        }
      }
      T v[P];
      // the row's place in y, alike for the whole warp: an ordinary row
      // (inside the grid and, unless y is periodic, off the wall faces) of a
      // strip clear of the x faces takes the short way, without rules
      const auto points = [&](auto rules) {
        constexpr bool R = decltype(rules)::value;
        const TbWalls wy = R && !py && in_y ? tb_walls<T>(iy, ny, false, a.bc[1]) : none;
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const T xl = e > 0 ? c[e - 1] : left, xr = e < P - 1 ? c[e + 1] : right;
          const T yl = r[l - 1][O][e], yr = r[l - 1][N][e];
          if constexpr (R)
            v[e] = (in_y && (!XW || ix[e] >= 0)) ? tb_point<true>(a, wx[e], wy, none, src[e], c[e],
                                                                  xl, xr, yl, yr, T(0), T(0))
                                                 : T(0);
          else
            v[e] = tb_point<false>(a, none, none, none, src[e], c[e], xl, xr, yl, yr, T(0), T(0));
        }
      };
      const bool ordinary = py || (p >= 1 && p < ny - 1);
      if (!XW && ordinary)
        points(std::false_type{});
      else
        points(std::true_type{});
      if (l < K) {
#pragma unroll
        for (int e = 0; e < P; ++e) r[l][N][e] = v[e];
      } else if (p >= kb && p < ke) {
        if constexpr (VEC && !XW) {
#pragma unroll
          for (int q = 0; q < NV; ++q)
            if (writes[q * W])
              *reinterpret_cast<V*>(out + lay.index_as<int>(gx + q * W, p, 0)) =
                  *reinterpret_cast<const V*>(&v[q * W]);
        } else {
#pragma unroll
          for (int e = 0; e < P; ++e)
            if (writes[e]) out[lay.index_as<int>(ix[e], p, 0)] = v[e];
        }
      }
    }
  };
  // Whole rounds of three rows: up to two more than [zs, ke + K) are marched
  // through, read as zeros and never written.
  for (int z = zs; z < ke + K; z += 3) {
    step(z, std::integral_constant<int, 0>{});
    step(z + 1, std::integral_constant<int, 1>{});
    step(z + 2, std::integral_constant<int, 2>{});
  }
}

// The strips clear of the x faces, [s0, s1) (XW false), or the others of
// the `strips` (XW true), WARPS a block, in chunks of `ychunk` rows.
template <class Op, class Sh, bool XW, bool VEC, class T = typename Op::value_type>
__global__ void __launch_bounds__(Sh::THREADS, Sh::MINB)
    time_block2d(Op a, const T* __restrict__ in, T* __restrict__ out, Layout l, int ychunk, int s0,
                 int s1, int strips) {
  const int q = int(blockIdx.x) * Sh::WARPS + int(threadIdx.x) / 32;  // alike in a warp
  int strip;
  if constexpr (XW) {
    if (q >= strips - (s1 - s0)) return;
    strip = q < s0 ? q : q + (s1 - s0);
  } else {
    if (q >= s1 - s0) return;
    strip = s0 + q;
  }
  const int kb = int(blockIdx.y) * ychunk;
  const int ke = min(kb + ychunk, int(l.n[1]));
  tb2_march<XW, VEC, Op, Sh>(a, in, out, l, strip, kb, ke);
}

template <class Op, class Sh, bool XW, bool VEC>
int tb2_warps_per_sm() {
  static const int per_sm = [] {
    int blocks = 0;
    GF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, time_block2d<Op, Sh, XW, VEC>, Sh::THREADS, 0));
    return (blocks > 0 ? blocks : 1) * Sh::WARPS;
  }();
  return per_sm;
}

// One pass: the strips clear of the x faces and the others as two launches,
// each in the y chunks that fill the device best (tb_zchunk).
template <class Op, class Sh, class T = typename Op::value_type>
void launch_tb2(const Op& a, const FieldView<const T>& in, const FieldView<T>& out,
                cudaStream_t s) {
  const int sms = device_sms();
  const int nx = int(in.n[0]), ny = int(in.n[1]);
  const int strips = (nx + Sh::IX - 1) / Sh::IX;
  int s0, s1;
  tb_plain_blocks(strips, Sh::IX, Sh::PADX, Sh::BX, nx, a.bc[0].lo == BcType::Periodic, s0, s1);
  const auto go = [&](auto xw, auto vec) {
    constexpr bool XW = decltype(xw)::value, VEC = decltype(vec)::value;
    const int n = XW ? strips - (s1 - s0) : s1 - s0;
    if (n <= 0) return;
    const int ychunk = tb_zchunk(n, ny, Sh::K, tb2_warps_per_sm<Op, Sh, XW, VEC>() * sms);
    const dim3 grid(unsigned((n + Sh::WARPS - 1) / Sh::WARPS),
                    unsigned((ny + ychunk - 1) / ychunk));
    time_block2d<Op, Sh, XW, VEC><<<grid, Sh::THREADS, 0, s>>>(a, in.p, out.p, in, ychunk, s0, s1,
                                                               strips);
  };
  // the middle strips never reach a row's end: rows starting on whole
  // vectors (sy a multiple of W, padded or not) are all they need
  if (in.sy % Sh::W == 0)
    go(std::false_type{}, std::true_type{});
  else
    go(std::false_type{}, std::false_type{});
  go(std::true_type{}, std::false_type{});
}

// K = k steps (2 to 4, time_block_supported), in → out (distinct buffers),
// on a 2D grid of fewer than 2³¹ points.
template <class Op, class T = typename Op::value_type>
void launch_time_block2d(const Op& a, int k, const FieldView<const T>& in,
                         const FieldView<T>& out, cudaStream_t s) {
  static_assert(Op::kDim == 2, "the 2D passes");
  constexpr bool f32 = sizeof(T) == 4;
  switch (k) {
    case 2: launch_tb2<Op, Tb2Shape<T, 2, 1, 4, 8, 2>>(a, in, out, s); break;
    case 3: launch_tb2<Op, Tb2Shape<T, 3, 1, 4, 6, 2>>(a, in, out, s); break;
    default: launch_tb2<Op, Tb2Shape<T, 4, 1, 4, f32 ? 6 : 5, 2>>(a, in, out, s); break;
  }
}

}  // namespace gf
