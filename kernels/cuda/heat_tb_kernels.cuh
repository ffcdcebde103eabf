// Temporal blocking for the 3D explicit heat step: K steps in one pass over
// memory, bit for bit the K steps of launch_heat_step (every point goes
// through ftcs_point with the same neighbours in the same order, and the
// boundary rules of heat_point_bc).
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
// mirrored neighbour plus 2h·g (Neumann), as heat_point_bc does.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/ops/heat.hpp"

namespace gf {

// Index of grid position g on an axis of n points: wrapped on a periodic
// axis, −1 off the ends of a wall axis.
__device__ __forceinline__ int tb_axis_index(int g, int n, bool periodic) {
  if (g >= 0 && g < n) return g;
  if (!periodic) return -1;
  g %= n;
  return g < 0 ? g + n : g;
}

// Where a column or a plane sits against the walls, worked out once: held
// (a Dirichlet point), and which faces take the mirrored neighbour.
struct TbWalls {
  bool held, lo, hi;
};

template <class T>
__device__ __forceinline__ TbWalls tb_walls(int i, int n, bool periodic, const AxisBc<T>& bc) {
  if (periodic) return {false, false, false};
  return {on_dirichlet<T>(i, n, bc), i == 0, i == n - 1};
}

// One point of a time level from the level below: u its value, xl, xr, yl,
// yr its x and y neighbours (from the tile or the thread's own strip), zm and
// zp from registers; with WALLS, the wall rules of heat_point_bc where the
// point sits on a wall face. The neighbours go into ftcs_point in the order
// heat_point_bc gives them.
template <bool WALLS, class T>
__device__ __forceinline__ T tb_point(const HeatArgs<T>& a, TbWalls wx, TbWalls wy, TbWalls wz,
                                      int idx, T u, T xl, T xr, T yl, T yr, T zm, T zp) {
  T m[3], p[3];
  if constexpr (WALLS) {
    if (wx.held || wy.held || wz.held) return u;
    m[0] = wx.lo ? xr + a.bc[0].ghost_lo : xl;
    p[0] = wx.hi ? xl + a.bc[0].ghost_hi : xr;
    m[1] = wy.lo ? yr + a.bc[1].ghost_lo : yl;
    p[1] = wy.hi ? yl + a.bc[1].ghost_hi : yr;
    m[2] = wz.lo ? zp + a.bc[2].ghost_lo : zm;
    p[2] = wz.hi ? zm + a.bc[2].ghost_hi : zp;
  } else {
    m[0] = xl, p[0] = xr, m[1] = yl, p[1] = yr, m[2] = zm, p[2] = zp;
  }
  return ftcs_point<3>(u, m, p, a.c, heat_source(a, idx));
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
template <bool XYW, class T, class Sh>
__device__ __forceinline__ void tb_march(const HeatArgs<T>& a, const T* __restrict__ in,
                                         T* __restrict__ out, T (*tile)[2][Sh::ROWS * Sh::BX],
                                         int zchunk) {
  constexpr int K = Sh::K, BX = Sh::BX, S = Sh::S;
  const int nx = int(a.n[0]), ny = int(a.n[1]), nz = int(a.n[2]);
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
    col[s] = (ix >= 0 && iy >= 0) ? ix + nx * iy : -1;
    wy[s] = XYW ? tb_walls<T>(iy, ny, py, a.bc[1]) : TbWalls{false, false, false};
    writes[s] = tx >= K && tx < BX - K && ty_s >= K && ty_s < Sh::BY - K && gx < nx && gy < ny;
  }
  const int kb = int(blockIdx.z) * zchunk;
  const int ke = min(kb + zchunk, nz);
  const int zs = pz ? kb - K : max(kb - K, 0);
  const int zf = pz ? ke + K : min(ke + K, nz);  // planes read from memory: [zs, zf)
  const int plane = nx * ny;                     // fewer than 2³¹ points

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
            v[s] = tb_point<true>(a, wx, wy[s], wz, idx, u, xl, xr, yl, yr, zm, zp);
        } else if (in_z) {
          v[s] = tb_point<false>(a, wx, wy[s], wz, idx, u, xl, xr, yl, yr, zm, zp);
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
template <class T, class Sh>
__global__ void __launch_bounds__(Sh::BX * Sh::TY, 512 / (Sh::BX * Sh::TY)) heat3d_time_block(HeatArgs<T> a,
                                                                         const T* __restrict__ in,
                                                                         T* __restrict__ out,
                                                                         int zchunk) {
  constexpr int K = Sh::K;
  // two buffers of the tile per level below K (dynamic: float64 needs more
  // than the 48 KiB a static array may have)
  extern __shared__ __align__(16) unsigned char tb_smem[];
  auto tile = reinterpret_cast<T (*)[2][Sh::ROWS * Sh::BX]>(tb_smem);
  const int nx = int(a.n[0]), ny = int(a.n[1]);
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
    tb_march<false, T, Sh>(a, in, out, tile, zchunk);
  else
    tb_march<true, T, Sh>(a, in, out, tile, zchunk);
}

// The depths launch_heat_time_block takes.
inline bool heat_time_block_supported(int k) { return k >= 2 && k <= 4; }
inline int heat_time_block_deepest() { return 4; }

// K = k steps, in → out (distinct buffers), in z chunks of 128 planes:
// float32 in tiles of 32 × 32 points (8 × 32 threads, strips of 4), float64
// in tiles of 64 × 32 (16 × 64 threads, strips of 2). Measured on an H100 at
// 512³ against 32 × 32 tiles with strips of 2 (float32 and float64) and whole
// z columns per block (zchunk = nz, slower: fewer blocks).
template <class T>
void launch_heat_time_block(const HeatArgs<T>& a, int k, const T* in, T* out, cudaStream_t s) {
  const int nx = int(a.n[0]), ny = int(a.n[1]), nz = int(a.n[2]);
  const int zchunk = 128;
  const auto go = [&](auto shape) {
    using Sh = decltype(shape);
    const dim3 grid(unsigned((nx + Sh::IX - 1) / Sh::IX), unsigned((ny + Sh::IY - 1) / Sh::IY),
                    unsigned((nz + zchunk - 1) / zchunk));
    const int smem = int(sizeof(T)) * Sh::K * 2 * Sh::ROWS * Sh::BX;
    GF_CUDA_CHECK(cudaFuncSetAttribute(heat3d_time_block<T, Sh>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    heat3d_time_block<T, Sh><<<grid, dim3(Sh::BX, Sh::TY), smem, s>>>(a, in, out, zchunk);
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
