// Temporal blocking for the 3D explicit heat step and the 3D radius-1 star
// stencils: K steps in one pass over memory, bit for bit the K steps of
// launch_heat_step or of the star's march (every point goes through the
// operator's formula, ops/time_block.hpp, with the same neighbours in the
// same order, and the boundary rules of heat_point_bc / stencil_point_bc).
//
// A block owns a BX × BY column of the grid in x and y, K points wider on
// every side than the points it writes, and marches along a chunk of z.
// Each thread owns one (x, y) column and keeps, for every time level
// 0..K−1, that level's values at planes p − 1, p, p + 1 in registers; the x
// and y neighbours come from a shared-memory copy of the level's plane p.
// When plane z of level 0 arrives from memory, level 1 is computed at z − 1,
// level 2 at z − 2, ..., level K at z − K, which is written. Each level
// loses one point of its ring of valid values per step, so after K levels
// the inner (BX − 2K) × (BY − 2K) points are exact; the chunk starts K
// planes early for the same reason in z.
//
// Periodic axes: the columns and planes beyond the ends are read wrapped,
// and computed like any other point, so every neighbour is simply the next
// point of the tile. Dirichlet and Neumann axes: the points beyond the ends
// are never read; the boundary points are held (Dirichlet) or take the
// mirrored neighbour plus 2h·g (Neumann), as heat_point_bc and
// stencil_point_bc do.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/cuda_check.cuh"
#include "grid/view.hpp"
#include "kernels/cuda/vec16.cuh"
#include "kernels/cuda/waves.cuh"
#include "kernels/ops/time_block.hpp"

namespace gf {

// Index of grid position g on an axis of n points: wrapped on a periodic
// axis, −1 off the ends of a wall axis.
__device__ __forceinline__ int tb_axis_index(int g, int n, bool periodic) {
  if (g >= 0 && g < n) return g;
  if (!periodic) return -1;
  g %= n;
  return g < 0 ? g + n : g;
}

// The shape of a blocked pass: BX × TY threads, each owning a strip of S
// points along y, so a block holds a BX × (TY·S) tile of every level's
// plane; its inner (BX − 2K) × (TY·S − 2K) points are written.
template <int K_, int BX_, int TY_, int S_>
struct TbShape {
  static constexpr int K = K_, BX = BX_, TY = TY_, S = S_, BY = TY * S;
  static constexpr int IX = BX - 2 * K, IY = BY - 2 * K;
  static constexpr int ROWS = BY + 2;  // a spare row above and below the tile
};

// The march of one block. XYW: with the x and y wall and periodic rules and
// the columns off the grid; otherwise (every column the block touches is an
// ordinary point of the grid in x and y, or on a periodic axis any point)
// without them. The z rules are taken plane by plane: only the planes on a
// wall face (or off the grid) pay for them, a branch the whole block takes alike.
template <bool XYW, class Op, class Sh, class T = typename Op::value_type>
__device__ __forceinline__ void tb_march(const Op& a, const T* __restrict__ in,
                                         T* __restrict__ out, const Layout& l,
                                         T (*tile)[2][Sh::ROWS * Sh::BX], int zchunk) {
  constexpr int K = Sh::K, BX = Sh::BX, S = Sh::S;
  const int nx = int(l.n[0]), ny = int(l.n[1]), nz = int(l.n[2]);
  const bool px = a.bc[0].lo == BcType::Periodic, py = a.bc[1].lo == BcType::Periodic,
             pz = a.bc[2].lo == BcType::Periodic;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int gx = int(blockIdx.x) * Sh::IX - K + tx;
  const int gy0 = int(blockIdx.y) * Sh::IY - K + ty * S;  // the strip's first row
  const int ix = XYW ? tb_axis_index(gx, nx, px) : gx;
  int col[S];          // the strip's points in a plane (−1: off the grid)
  TbWalls wy[S];
  bool writes[S];
  const TbWalls wx = XYW ? tb_walls<T>(ix, nx, px, a.bc[0]) : TbWalls{false, false, false};
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int gy = gy0 + s, ty_s = ty * S + s;
    const int iy = XYW ? tb_axis_index(gy, ny, py) : gy;
    col[s] = (ix >= 0 && iy >= 0) ? l.index_as<int>(ix, iy, 0) : -1;
    wy[s] = XYW ? tb_walls<T>(iy, ny, py, a.bc[1]) : TbWalls{false, false, false};
    writes[s] = tx >= K && tx < BX - K && ty_s >= K && ty_s < Sh::BY - K && gx < nx && gy < ny;
  }
  const int kb = int(blockIdx.z) * zchunk;
  const int ke = min(kb + zchunk, nz);
  const int zs = pz ? kb - K : max(kb - K, 0);
  const int zf = pz ? ke + K : min(ke + K, nz);  // planes read from memory: [zs, zf)
  const int plane = int(l.sz);                   // fewer than 2³¹ values

  T r[K][3][S];  // per level below K: planes p − 1, p, p + 1 of the strip
#pragma unroll
  for (int l = 0; l < K; ++l)
#pragma unroll
    for (int s = 0; s < S; ++s) r[l][0][s] = r[l][1][s] = r[l][2][s] = T(0);

  // Level 0 arrives two planes ahead of its use, so that a block does not
  // wait a whole memory latency at every plane.
  T ahead1[S], ahead2[S];
  const auto fetch = [&](int z, T* dst) {
    const int iz = pz ? tb_axis_index(z, nz, true) : z;
#pragma unroll
    for (int s = 0; s < S; ++s) dst[s] = (col[s] >= 0 && z < zf) ? in[col[s] + plane * iz] : T(0);
  };
  fetch(zs, ahead1);
  fetch(zs + 1, ahead2);
  for (int z = zs; z < ke + K; ++z) {
    // level 0: plane z
#pragma unroll
    for (int s = 0; s < S; ++s) {
      r[0][0][s] = r[0][1][s];
      r[0][1][s] = r[0][2][s];
      r[0][2][s] = ahead1[s];
      ahead1[s] = ahead2[s];
    }
    fetch(z + 2, ahead2);
#pragma unroll
    for (int l = 1; l <= K; ++l) {
      // level l at plane p from level l − 1 at p − 1, p, p + 1
      const int p = z - l;
      T* t = tile[l - 1][z & 1] + BX;  // row 0 of the tile (row −1 is the spare)
#pragma unroll
      for (int s = 0; s < S; ++s) t[(ty * S + s) * BX + tx] = r[l - 1][1][s];
      __syncthreads();
      // plane p's place in z (all alike for the block): off the grid, on a
      // wall face, or an ordinary plane
      const bool in_z = pz || (p >= 0 && p < nz);
      const int iz = pz ? tb_axis_index(p, nz, true) : p;
      const bool zwall = !pz && (p == 0 || p == nz - 1);
      const TbWalls wz = zwall ? tb_walls<T>(iz, nz, false, a.bc[2]) : TbWalls{false, false, false};
      T v[S];
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const T* row = t + (ty * S + s) * BX;
        // Off the tile's edge the value is garbage but never used by a written point.
        const T xl = row[tx > 0 ? tx - 1 : 0], xr = row[tx < BX - 1 ? tx + 1 : BX - 1];
        const T yl = s > 0 ? r[l - 1][1][s - 1] : row[tx - BX];
        const T yr = s < S - 1 ? r[l - 1][1][s + 1] : row[tx + BX];
        const T u = r[l - 1][1][s], zm = r[l - 1][0][s], zp = r[l - 1][2][s];
        const int idx = col[s] + plane * iz;
        v[s] = T(0);
        if (XYW || zwall) {
          if (col[s] >= 0 && in_z)
            v[s] = tb_point<true>(a, wx, wy[s], wz, tb_source(a, idx), u, xl, xr, yl, yr, zm, zp);
        } else if (in_z) {
          v[s] = tb_point<false>(a, wx, wy[s], wz, tb_source(a, idx), u, xl, xr, yl, yr, zm, zp);
        }
      }
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if (l < K) {
          r[l][0][s] = r[l][1][s];
          r[l][1][s] = r[l][2][s];
          r[l][2][s] = v[s];
        } else if (writes[s] && p >= kb && p < ke) {
          out[col[s] + plane * p] = v[s];
        }
      }
    }
  }
}

// True when every column or row a block touches is an ordinary point of its
// axis: inside the grid, and off the wall faces unless the axis is periodic
// (where the wrap is never needed then either).
__device__ __forceinline__ bool tb_plain_range(int lo, int hi, int n, bool periodic) {
  return periodic ? (lo >= 0 && hi <= n) : (lo >= 1 && hi <= n - 1);
}

// K steps from in to out over a grid of fewer than 2³¹ points.
template <class Op, class Sh, class T = typename Op::value_type>
__global__ void __launch_bounds__(Sh::BX * Sh::TY, 512 / (Sh::BX * Sh::TY))
    time_block3d(Op a, const T* __restrict__ in, T* __restrict__ out, Layout l, int zchunk) {
  constexpr int K = Sh::K;
  // two buffers of the tile per level below K (dynamic: float64 needs more
  // than the 48 KiB a static array may have)
  extern __shared__ __align__(16) unsigned char tb_smem[];
  auto tile = reinterpret_cast<T (*)[2][Sh::ROWS * Sh::BX]>(tb_smem);
  const int nx = int(l.n[0]), ny = int(l.n[1]);
  // the spare rows are read only for points that are never written; zero them
  // all the same, so that nothing reads memory that was never written
  for (int q = threadIdx.y * Sh::BX + threadIdx.x; q < K * 2 * 2 * Sh::BX; q += Sh::BX * Sh::TY) {
    const int side = q / (K * 2 * Sh::BX), rest = q % (K * 2 * Sh::BX);
    tile[rest / (2 * Sh::BX)][(rest / Sh::BX) % 2][side * (Sh::ROWS - 1) * Sh::BX + rest % Sh::BX] = T(0);
  }
  const int x0 = int(blockIdx.x) * Sh::IX - K, y0 = int(blockIdx.y) * Sh::IY - K;
  const bool plain = tb_plain_range(x0, x0 + Sh::BX, nx, a.bc[0].lo == BcType::Periodic) &&
                     tb_plain_range(y0, y0 + Sh::BY, ny, a.bc[1].lo == BcType::Periodic);
  if (plain)
    tb_march<false, Op, Sh>(a, in, out, l, tile, zchunk);
  else
    tb_march<true, Op, Sh>(a, in, out, l, tile, zchunk);
}

// ---------------------------------------------------------------------------
// The vectorised pass, for nx a multiple of W = 16/sizeof(T): each thread
// owns W consecutive points of S rows (a W × S patch of every plane) and
// moves them with 16-byte loads and stores. The x neighbours inside the patch
// are the thread's own registers, those of its first and last point come
// from the next thread of the row by a warp shuffle; the y neighbours inside
// the patch are registers too, and only the patch's first and last rows go
// through shared memory (one barrier per level and plane, two buffers taken
// in turn). The tile's columns start on a multiple of W: it reaches PADX ≥ K
// points (a multiple of W) beyond the columns it writes on either side, and
// K rows in y. The z loop is unrolled by three, so that the three planes of
// each level rotate by renaming registers instead of moving them.
//
// Blocks clear of the x and y faces run a kernel without any rules; the
// others run the same march with them, where on an ordinary plane the rules
// are a fix-up of the neighbours the march gathered: the x neighbour beyond
// a wall (the shuffled value of the patch's first or last point) and the y
// neighbours of a row on a wall face are replaced by the mirrored value plus
// the ghost, as tb_point takes them, and a held (Dirichlet) point keeps its
// value; everything else is the middle blocks' code (off the grid: values
// that no written point uses). Planes on a z face or off the grid take the
// rules point by point (tb_point) for the whole block. MINB: blocks per
// SM the registers are fitted to; AHEAD: planes of level 0 fetched ahead.
template <class T, int K_, int TX_, int TY_, int S_, int MINB_ = 1, int AHEAD_ = 2>
struct TbvShape {
  static constexpr int K = K_, TX = TX_, TY = TY_, S = S_, W = Vec16<T>::n, MINB = MINB_;
  static constexpr int AHEAD = AHEAD_;  // planes fetched ahead: 1 or 2

  static constexpr int BX = TX * W, BY = TY * S;
  static constexpr int PADX = (K + W - 1) / W * W;
  static constexpr int IX = BX - 2 * PADX, IY = BY - 2 * K;
  static constexpr int THREADS = TX * TY;
  // one buffer: the first and last row of every patch (one row when S is 1),
  // and a spare patch above and below the tile
  static constexpr int EROWS = S > 1 ? 2 : 1;
  static constexpr int EDGE = (TY + 2) * EROWS * BX;
  static constexpr int SMEM = 2 * EDGE * int(sizeof(T));
  static_assert(32 % TX == 0, "a row of threads is a power-of-two part of a warp");
};

template <bool XYW, class Op, class Sh, bool PART = false, class T = typename Op::value_type>
__device__ __forceinline__ void tbv_march(const Op& a, const T* __restrict__ in,
                                          T* __restrict__ out, const Layout& l,
                                          T* __restrict__ edge, int zchunk, int bx, int by) {
  using V = typename Vec16<T>::type;
  constexpr int K = Sh::K, W = Sh::W, S = Sh::S, TX = Sh::TX, BX = Sh::BX;
  const int nx = int(l.n[0]), ny = int(l.n[1]), nz = int(l.n[2]);
  const bool px = a.bc[0].lo == BcType::Periodic, py = a.bc[1].lo == BcType::Periodic,
             pz = a.bc[2].lo == BcType::Periodic;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int gx = bx * Sh::IX - Sh::PADX + tx * W;  // a multiple of W
  const int gy0 = by * Sh::IY - K + ty * S;
  // nx % W == 0: the thread's W columns are all on the grid or all off it,
  // and wrap together on a periodic axis; else (rows padded to whole
  // vectors, x not periodic: PART) the row's last piece has its last points
  // in its first lanes and padding beyond, whose values no point uses
  const int ix = XYW ? tb_axis_index(gx, nx, px) : gx;
  TbWalls wx[W];
#pragma unroll
  for (int e = 0; e < W; ++e)
    wx[e] = XYW && ix >= 0 ? tb_walls<T>(ix + e, nx, px, a.bc[0]) : TbWalls{false, false, false};
  const bool xwrites = tx * W >= Sh::PADX && tx * W < BX - Sh::PADX && gx < nx;
  // a point of the patch held (Dirichlet) in x or y (blocks at the faces)
  bool held = false;
  int col[S];  // the patch's rows in a plane (−1: off the grid)
  TbWalls wy[S];
  bool writes[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int gy = gy0 + s, ys = ty * S + s;
    const int iy = XYW ? tb_axis_index(gy, ny, py) : gy;
    col[s] = (ix >= 0 && iy >= 0) ? l.index_as<int>(ix, iy, 0) : -1;
    wy[s] = XYW ? tb_walls<T>(iy, ny, py, a.bc[1]) : TbWalls{false, false, false};
#pragma unroll
    for (int e = 0; e < W; ++e)
      if (XYW && col[s] >= 0 && (wx[e].held || wy[s].held)) held = true;
    writes[s] = xwrites && ys >= K && ys < Sh::BY - K && gy < ny;
  }
  const int kb = int(blockIdx.z) * zchunk;
  const int ke = min(kb + zchunk, nz);
  const int zs = pz ? kb - K : max(kb - K, 0);
  const int zf = pz ? ke + K : min(ke + K, nz);  // planes read from memory: [zs, zf)
  const int plane = int(l.sz);                   // fewer than 2³¹ values

  T r[K][3][S][W];  // levels 0..K−1, three planes each, of the patch
#pragma unroll
  for (int l = 0; l < K; ++l)
#pragma unroll
    for (int q = 0; q < 3; ++q)
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int e = 0; e < W; ++e) r[l][q][s][e] = T(0);
  const auto load = [&](const T* p) {
    V v = *reinterpret_cast<const V*>(p);
    return v;
  };
  // Level 0 arrives two planes ahead of its use, in a ring of three: plane
  // zs + i + 2 is fetched at step i into slot (i + 2) % 3 and taken at step
  // i + 2, so a warp waits only for loads issued two steps earlier.
  V ahead[Sh::AHEAD == 2 ? 3 : 1][S];
  const auto fetch = [&](int z, V* dst) {
    const int iz = pz ? tb_axis_index(z, nz, true) : z;
#pragma unroll
    for (int s = 0; s < S; ++s) {
      if (col[s] >= 0 && z < zf) {
        dst[s] = load(in + col[s] + plane * iz);
      } else {
        T* d = reinterpret_cast<T*>(&dst[s]);
#pragma unroll
        for (int e = 0; e < W; ++e) d[e] = T(0);
      }
    }
  };
  fetch(zs, ahead[0]);
  if constexpr (Sh::AHEAD == 2) fetch(zs + 1, ahead[1]);
  // the source term where it is the same at every point (no field; 0 without a source)
  T src_const = T(0);
  if constexpr (Op::kSource) src_const = a.source_term(a.source_const);
  int phase = 0;  // which of the two shared buffers the next level takes
  const auto step = [&](int z, auto rot) {
    constexpr int N = decltype(rot)::value, C = (N + 2) % 3, O = (N + 1) % 3;  // planes z, z − 1, z − 2
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const T* h = reinterpret_cast<const T*>(&ahead[Sh::AHEAD == 2 ? N : 0][s]);
#pragma unroll
      for (int e = 0; e < W; ++e) r[0][N][s][e] = h[e];
    }
    if constexpr (Sh::AHEAD == 2)
      fetch(z + 2, ahead[(N + 2) % 3]);
    else
      fetch(z + 1, ahead[0]);
#pragma unroll
    for (int l = 1; l <= K; ++l) {
      // level l at plane p from level l − 1 at p − 1 (O), p (C), p + 1 (N)
      const int p = z - l;
      T* buf = edge + phase * Sh::EDGE;
      phase ^= 1;
      constexpr int ER = Sh::EROWS;
      V* mine = reinterpret_cast<V*>(buf) + ((ty + 1) * ER) * TX + tx;
      *mine = *reinterpret_cast<const V*>(r[l - 1][C][0]);
      if constexpr (S > 1) mine[TX] = *reinterpret_cast<const V*>(r[l - 1][C][S - 1]);
      __syncthreads();
      // the row above the patch (the last row of the patch above) and below
      V up_v = reinterpret_cast<const V*>(buf)[(ty * ER + ER - 1) * TX + tx];
      V down_v = reinterpret_cast<const V*>(buf)[((ty + 2) * ER) * TX + tx];
      const T* up = reinterpret_cast<const T*>(&up_v);
      const T* down = reinterpret_cast<const T*>(&down_v);
      // the x neighbours beyond the patch, from the next threads of the row
      // (all the warp's threads take part); beyond the tile's first and last
      // thread of a row the shuffle gives the thread's own value, never used
      // by a written point
      T lefts[S], rights[S];
#pragma unroll
      for (int s = 0; s < S; ++s) {
        lefts[s] = __shfl_up_sync(0xffffffffu, r[l - 1][C][s][W - 1], 1, TX);
        rights[s] = __shfl_down_sync(0xffffffffu, r[l - 1][C][s][0], 1, TX);
      }
      // beyond an x wall (the patch's first point on x = 0, or its last on
      // x = nx − 1, nx % W == 0): the mirrored neighbour plus the ghost
      if constexpr (XYW && !PART) {
        if (wx[0].lo) {
#pragma unroll
          for (int s = 0; s < S; ++s) lefts[s] = r[l - 1][C][s][1] + a.bc[0].ghost_lo;
        }
        if (wx[W - 1].hi) {
#pragma unroll
          for (int s = 0; s < S; ++s) rights[s] = r[l - 1][C][s][W - 2] + a.bc[0].ghost_hi;
        }
      }
      T v[S][W];
      // plane p's place in z, alike for the whole block: an ordinary plane
      // (inside the grid and, unless z is periodic, off the wall faces) of a
      // block clear of the x and y faces takes the short way, without rules
      const auto points = [&](auto general) {
        constexpr bool G = decltype(general)::value;
        bool in_z = true, zwall = false;
        int iz = p;
        TbWalls wz{false, false, false};
        if constexpr (G) {
          in_z = pz || (p >= 0 && p < nz);
          iz = pz ? tb_axis_index(p, nz, true) : p;
          zwall = !pz && (p == 0 || p == nz - 1);
          if (zwall) wz = tb_walls<T>(iz, nz, false, a.bc[2]);
        }
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const T(&c)[W] = r[l - 1][C][s];
          const T left = lefts[s], right = rights[s];
          const T* yl0 = s > 0 ? r[l - 1][C][s - 1] : up;
          const T* yr0 = s < S - 1 ? r[l - 1][C][s + 1] : down;
          // a row on a y wall (ordinary planes of blocks at the faces): the
          // mirrored row plus the ghost beyond it
          T ylw[W], yrw[W];
          const T* yl = yl0;
          const T* yr = yr0;
          if constexpr (XYW && !G) {
#pragma unroll
            for (int e = 0; e < W; ++e) ylw[e] = yl0[e], yrw[e] = yr0[e];
            if (wy[s].lo) {
#pragma unroll
              for (int e = 0; e < W; ++e) ylw[e] = yr0[e] + a.bc[1].ghost_lo;
            }
            if (wy[s].hi) {
#pragma unroll
              for (int e = 0; e < W; ++e) yrw[e] = yl0[e] + a.bc[1].ghost_hi;
            }
            yl = ylw;
            yr = yrw;
          }
          const bool here = G ? (col[s] >= 0 && in_z) : (!XYW || col[s] >= 0);
          T src[W];
#pragma unroll
          for (int e = 0; e < W; ++e) src[e] = src_const;
          if constexpr (Op::kSource) {
            if (a.source && here) {
              V sv = load(a.source + col[s] + plane * iz);
              const T* sp = reinterpret_cast<const T*>(&sv);
#pragma unroll
              for (int e = 0; e < W; ++e) src[e] = a.source_term(sp[e]);
            }
          }
#pragma unroll
          for (int e = 0; e < W; ++e) {
            T xl = e > 0 ? c[e - 1] : left, xr = e < W - 1 ? c[e + 1] : right;
            if constexpr (XYW && PART && !G) {
              // PART: beyond an x wall (lane 0 on x = 0; the lane on
              // x = nx − 1, anywhere in the row's partial last piece): the
              // mirrored neighbour plus the ghost (tb_point's rule)
              const T xl0 = xl;
              if (wx[e].lo) xl = xr + a.bc[0].ghost_lo;
              if (wx[e].hi) xr = xl0 + a.bc[0].ghost_hi;
            }
            const T zm = r[l - 1][O][s][e], zp = r[l - 1][N][s][e];
            if constexpr (!G) {
              // (off the grid, in a block at the faces: a value never used)
              v[s][e] = tb_point<false>(a, wx[e], wy[s], wz, src[e], c[e], xl, xr, yl[e], yr[e], zm, zp);
            } else {
              v[s][e] = T(0);
              if (XYW || zwall) {
                if (here)
                  v[s][e] = tb_point<true>(a, wx[e], wy[s], wz, src[e], c[e], xl, xr, yl[e], yr[e], zm, zp);
              } else if (in_z) {
                v[s][e] = tb_point<false>(a, wx[e], wy[s], wz, src[e], c[e], xl, xr, yl[e], yr[e], zm, zp);
              }
            }
          }
        }
        // held points keep their value (the general planes' tb_point did that)
        if constexpr (XYW && !G) {
          if (held) {
#pragma unroll
            for (int s = 0; s < S; ++s)
#pragma unroll
              for (int e = 0; e < W; ++e)
                if (wx[e].held || wy[s].held) v[s][e] = r[l - 1][C][s][e];
          }
        }
      };
      const bool ordinary = pz ? (p >= 0 && p < nz) : (p >= 1 && p < nz - 1);
      if (ordinary)
        points(std::false_type{});
      else
        points(std::true_type{});
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if (l < K) {
#pragma unroll
          for (int e = 0; e < W; ++e) r[l][N][s][e] = v[s][e];
        } else if (writes[s] && p >= kb && p < ke) {
          if constexpr (XYW && PART) {  // a partial piece's padding is written as zeros
#pragma unroll
            for (int e = 0; e < W; ++e)
              if (gx + e >= nx) v[s][e] = T(0);
          }
          *reinterpret_cast<V*>(out + col[s] + plane * p) = *reinterpret_cast<const V*>(v[s]);
        }
      }
    }
  };
  // Whole rounds of three planes: up to two more than [zs, ke + K) are
  // marched through, read as zeros and never written.
  for (int z = zs; z < ke + K; z += 3) {
    step(z, std::integral_constant<int, 0>{});
    step(z + 1, std::integral_constant<int, 1>{});
    step(z + 2, std::integral_constant<int, 2>{});
  }
}

// The blocks clear of the x and y faces ([bx0, bx1) × [by0, by1), XYW
// false: launched over that rectangle alone) and the others (XYW true:
// launched over the whole grid, the rectangle's blocks leave at once), as two
// kernels, so that the blocks in the middle carry no registers for the rules.
template <class Op, class Sh, bool XYW, bool PART = false, class T = typename Op::value_type>
__global__ void __launch_bounds__(Sh::THREADS, Sh::MINB)
    time_block3d_vec(Op a, const T* __restrict__ in, T* __restrict__ out, Layout l, int zchunk,
                     int bx0, int bx1, int by0, int by1) {
  int bx = int(blockIdx.x), by = int(blockIdx.y);
  if constexpr (XYW) {
    if (bx >= bx0 && bx < bx1 && by >= by0 && by < by1) return;
  } else {
    bx += bx0;
    by += by0;
  }
  extern __shared__ __align__(16) unsigned char tbv_smem[];
  T* edge = reinterpret_cast<T*>(tbv_smem);
  // zero the spare patches (read for points that are never written)
  constexpr int SPARE = Sh::EROWS * Sh::BX;  // one spare patch's rows
  for (int q = threadIdx.y * Sh::TX + threadIdx.x; q < 2 * 2 * SPARE; q += Sh::THREADS) {
    const int buf = q / (2 * SPARE), rest = q % (2 * SPARE);
    const int strip = rest < SPARE ? 0 : Sh::TY + 1;
    edge[buf * Sh::EDGE + strip * SPARE + rest % SPARE] = T(0);
  }
  tbv_march<XYW, Op, Sh, PART>(a, in, out, l, edge, zchunk, bx, by);
}

// z chunks for a pass of `columns` blocks in x and y over nz planes, with
// `slots` blocks resident on the whole device at once: the count whose waves
// cost least, a block's time taken as its planes, chunk + 2K.
inline int tb_zchunk(long long columns, int nz, int k, int slots) {
  int best = nz;
  double best_cost = 1e300;
  for (int chunks = 1; chunks <= nz / 8 || chunks == 1; ++chunks) {
    const int chunk = (nz + chunks - 1) / chunks;
    const long long blocks = columns * ((nz + chunk - 1) / chunk);
    const long long waves = (blocks + slots - 1) / slots;
    const double cost = double(waves) * double(chunk + 2 * k + 2);
    if (cost < best_cost * 0.999) best_cost = cost, best = chunk;
  }
  return best;
}

// The blocks clear of the faces along one axis: [lo, hi) of the n blocks.
inline void tb_plain_blocks(int n_blocks, int inner, int pad, int width, int n, bool periodic,
                            int& lo, int& hi) {
  lo = hi = 0;
  for (int b = 0; b < n_blocks; ++b) {
    const int x0 = b * inner - pad;
    const bool plain = periodic ? (x0 >= 0 && x0 + width <= n) : (x0 >= 1 && x0 + width <= n - 1);
    if (plain && hi == lo) lo = b, hi = b + 1;
    else if (plain && b == hi) hi = b + 1;
  }
}

template <class Op, class Sh, bool XYW, bool PART = false>
int tbv_blocks_per_sm() {
  static const int per_sm = [] {
    int blocks = 0;
    GF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, time_block3d_vec<Op, Sh, XYW, PART>, Sh::THREADS, Sh::SMEM));
    return blocks > 0 ? blocks : 1;
  }();
  return per_sm;
}

// One vectorised pass: the middle blocks and the others as two launches,
// each in the z chunks that fill the device best.
template <class Op, class Sh, class T = typename Op::value_type>
void launch_tbv(const Op& a, const FieldView<const T>& in, const FieldView<T>& out,
                cudaStream_t s) {
  static_assert(Sh::SMEM <= 48 * 1024, "no opt-in shared memory needed");
  const int sms = device_sms();
  const int nx = int(in.n[0]), ny = int(in.n[1]), nz = int(in.n[2]);
  const int bx = (nx + Sh::IX - 1) / Sh::IX, by = (ny + Sh::IY - 1) / Sh::IY;
  int bx0, bx1, by0, by1;
  tb_plain_blocks(bx, Sh::IX, Sh::PADX, Sh::BX, nx, a.bc[0].lo == BcType::Periodic, bx0, bx1);
  tb_plain_blocks(by, Sh::IY, Sh::K, Sh::BY, ny, a.bc[1].lo == BcType::Periodic, by0, by1);
  const long long middle = (long long)(bx1 - bx0) * (by1 - by0);
  if (middle > 0) {
    const int zchunk = tb_zchunk(middle, nz, Sh::K, tbv_blocks_per_sm<Op, Sh, false>() * sms);
    const dim3 grid(unsigned(bx1 - bx0), unsigned(by1 - by0), unsigned((nz + zchunk - 1) / zchunk));
    time_block3d_vec<Op, Sh, false><<<grid, dim3(Sh::TX, Sh::TY), Sh::SMEM, s>>>(
        a, in.p, out.p, in, zchunk, bx0, bx1, by0, by1);
  }
  // the blocks at the faces: PART where rows end in a partial piece (the
  // per-lane x rules cost the whole-vector rows 2-8 % at 512³ on an H100)
  const auto faces = [&](auto part) {
    constexpr bool P = decltype(part)::value;
    const int zchunk = tb_zchunk((long long)bx * by - middle, nz, Sh::K,
                                 tbv_blocks_per_sm<Op, Sh, true, P>() * sms);
    const dim3 grid(unsigned(bx), unsigned(by), unsigned((nz + zchunk - 1) / zchunk));
    time_block3d_vec<Op, Sh, true, P><<<grid, dim3(Sh::TX, Sh::TY), Sh::SMEM, s>>>(
        a, in.p, out.p, in, zchunk, bx0, bx1, by0, by1);
  };
  if (middle < (long long)bx * by) {
    if (nx % Sh::W != 0)
      faces(std::true_type{});
    else
      faces(std::false_type{});
  }
}

// The depths launch_time_block takes.
inline bool time_block_supported(int k) { return k >= 2 && k <= 4; }
inline int time_block_deepest() { return 4; }

// The grids the passes run on: 2D and 3D, fields of fewer than 2³¹ values
// (the kernels' indices are 32-bit).
inline bool tb_fits(int ndim, const Layout& l) {
  return tb_has_dims(ndim) && l.span() < (std::int64_t(1) << 31);
}
// The steps a pass takes where the grid has passes (fits): asked when the
// kernels have that depth, else 1; auto (0): the deepest, and the solver
// measures which pays.
inline int tb_passes(bool fits, int asked) {
  if (!fits) return 1;
  if (asked > 0) return time_block_supported(asked) ? asked : 1;
  return time_block_deepest();
}

// K = k steps, in → out (distinct buffers). When rows are whole vectors
// (nx a multiple of W, or rows padded to whole vectors and x not periodic)
// the vectorised pass: patches of W × 2 points, 16 × 16 threads (tiles of 64 × 32
// points in float32, 32 × 32 in float64), two blocks per SM; float32 fetches
// one plane ahead (its registers then fit two blocks), float64 two. Measured
// on an H100 at 512³ (ms per step, k = 2 / 3 / 4): float32 0.351 / 0.311 /
// 0.378 against 0.367 one step at a time, float64 0.556 / 0.559 / 0.649
// against 0.779; larger tiles with fewer threads per SM and strips of one
// row were slower, and so was one launch for all blocks. Otherwise the scalar
// pass below: float32 in tiles of 32 × 32 points (8 × 32 threads, strips of
// 4), float64 in tiles of 64 × 32 (16 × 64 threads, strips of 2), z chunks of
// 128 planes.
template <class Op, class T = typename Op::value_type>
void launch_time_block(const Op& a, int k, const FieldView<const T>& in, const FieldView<T>& out,
                       cudaStream_t s) {
  static_assert(Op::kDim == 3, "the 3D passes (2D: time_block2d_kernels.cuh)");
  const int nx = int(in.n[0]), ny = int(in.n[1]), nz = int(in.n[2]);
  // rows of whole vectors: nx a multiple of W, or padded rows off a periodic x
  constexpr int W = Vec16<T>::n;
  if (in.sy % W == 0 && (nx % W == 0 || a.bc[0].lo != BcType::Periodic)) {
    constexpr int AHEAD = sizeof(T) == 4 ? 1 : 2;
    if (k == 2) launch_tbv<Op, TbvShape<T, 2, 16, 16, 2, 2, AHEAD>>(a, in, out, s);
    else if (k == 3) launch_tbv<Op, TbvShape<T, 3, 16, 16, 2, 2, AHEAD>>(a, in, out, s);
    else launch_tbv<Op, TbvShape<T, 4, 16, 16, 2, 2, AHEAD>>(a, in, out, s);
    return;
  }
  const int zchunk = 128;
  const auto go = [&](auto shape) {
    using Sh = decltype(shape);
    const dim3 grid(unsigned((nx + Sh::IX - 1) / Sh::IX), unsigned((ny + Sh::IY - 1) / Sh::IY),
                    unsigned((nz + zchunk - 1) / zchunk));
    const int smem = int(sizeof(T)) * Sh::K * 2 * Sh::ROWS * Sh::BX;
    GF_CUDA_CHECK(cudaFuncSetAttribute(time_block3d<Op, Sh>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    time_block3d<Op, Sh><<<grid, dim3(Sh::BX, Sh::TY), smem, s>>>(a, in.p, out.p, in, zchunk);
  };
  constexpr bool f32 = sizeof(T) == 4;
  constexpr int BX = f32 ? 32 : 64, TY = f32 ? 8 : 16, S = 32 / TY;
  switch (k) {
    case 2: go(TbShape<2, BX, TY, S>{}); break;
    case 3: go(TbShape<3, BX, TY, S>{}); break;
    default: go(TbShape<4, BX, TY, S>{}); break;
  }
}

}  // namespace gf
