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

// One point of a time level from the level below: u its value, the x and y
// neighbours read from the tile, zm and zp from registers, with the wall
// rules of heat_point_bc where the point sits on a wall face.
template <class T, int BX>
__device__ __forceinline__ T tb_point(const HeatArgs<T>& a, const T* tile, int tx, int ty,
                                      TbWalls wx, TbWalls wy, TbWalls wz, int idx, T u,
                                      T zm, T zp) {
  if (wx.held || wy.held || wz.held) return u;
  const T* row = tile + ty * BX;
  T m[3], p[3];
  // Off the tile's edge the value is garbage but never used by a written point.
  const T xl = row[tx > 0 ? tx - 1 : 0], xr = row[tx < BX - 1 ? tx + 1 : BX - 1];
  m[0] = wx.lo ? xr + a.bc[0].ghost_lo : xl;
  p[0] = wx.hi ? xl + a.bc[0].ghost_hi : xr;
  const T yl = ty > 0 ? row[tx - BX] : u, yr = row[tx + BX];
  m[1] = wy.lo ? yr + a.bc[1].ghost_lo : yl;
  p[1] = wy.hi ? yl + a.bc[1].ghost_hi : yr;
  m[2] = wz.lo ? zp + a.bc[2].ghost_lo : zm;
  p[2] = wz.hi ? zm + a.bc[2].ghost_hi : zp;
  return ftcs_point<3>(u, m, p, a.c, heat_source(a, idx));
}

// K steps from in to out over a grid of fewer than 2³¹ points. The tile has
// one spare row (BY + 1 rows) so that the last row's y+ read stays inside.
template <class T, int K, int BX, int BY>
__global__ void __launch_bounds__(BX * BY) heat3d_time_block(HeatArgs<T> a, const T* __restrict__ in,
                                                             T* __restrict__ out, int zchunk) {
  constexpr int IX = BX - 2 * K, IY = BY - 2 * K;  // the points a block writes
  __shared__ T tile[K][2][(BY + 1) * BX];
  const int nx = int(a.n[0]), ny = int(a.n[1]), nz = int(a.n[2]);
  const bool px = a.bc[0].lo == BcType::Periodic, py = a.bc[1].lo == BcType::Periodic,
             pz = a.bc[2].lo == BcType::Periodic;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int gx = int(blockIdx.x) * IX - K + tx, gy = int(blockIdx.y) * IY - K + ty;
  const int ix = tb_axis_index(gx, nx, px), iy = tb_axis_index(gy, ny, py);
  const bool column = ix >= 0 && iy >= 0;  // a point of the grid (or its periodic image)
  const bool writes = tx >= K && tx < BX - K && ty >= K && ty < BY - K && gx < nx && gy < ny;
  const int kb = int(blockIdx.z) * zchunk;
  const int ke = min(kb + zchunk, nz);
  const int zs = pz ? kb - K : max(kb - K, 0);
  const int zf = pz ? ke + K : min(ke + K, nz);  // planes read from memory: [zs, zf)
  const int col = ix + nx * iy, plane = nx * ny;  // fewer than 2³¹ points
  const TbWalls wx = tb_walls<T>(ix, nx, px, a.bc[0]), wy = tb_walls<T>(iy, ny, py, a.bc[1]);

  T r[K][3];  // per level: planes p − 1, p, p + 1
#pragma unroll
  for (int l = 0; l < K; ++l) r[l][0] = r[l][1] = r[l][2] = T(0);

  // Level 0 arrives two planes ahead of its use, so that a block does not
  // wait a whole memory latency at every plane (it has no other work then).
  const auto fetch = [&](int z) {
    const int iz = pz ? tb_axis_index(z, nz, true) : z;
    return (column && z < zf) ? in[col + plane * iz] : T(0);
  };
  T ahead1 = fetch(zs), ahead2 = fetch(zs + 1);
  for (int z = zs; z < ke + K; ++z) {
    // level 0: plane z
    r[0][0] = r[0][1];
    r[0][1] = r[0][2];
    r[0][2] = ahead1;
    ahead1 = ahead2;
    ahead2 = fetch(z + 2);
#pragma unroll
    for (int l = 1; l <= K; ++l) {
      // level l at plane p from level l − 1 at p − 1, p, p + 1
      const int p = z - l;
      T* t = tile[l - 1][z & 1];
      t[ty * BX + tx] = r[l - 1][1];
      __syncthreads();
      T v = T(0);
      const bool in_z = pz || (p >= 0 && p < nz);
      if (column && in_z) {
        const int iz = pz ? tb_axis_index(p, nz, true) : p;
        v = tb_point<T, BX>(a, t, tx, ty, wx, wy, tb_walls<T>(iz, nz, pz, a.bc[2]),
                            col + plane * iz, r[l - 1][1], r[l - 1][0], r[l - 1][2]);
      }
      if (l < K) {
        r[l][0] = r[l][1];
        r[l][1] = r[l][2];
        r[l][2] = v;
      } else if (writes && p >= kb && p < ke) {
        out[col + plane * p] = v;
      }
    }
  }
}

// The depths launch_heat_time_block takes.
inline bool heat_time_block_supported(int k) { return k >= 2 && k <= 4; }

// K = k steps, in → out (distinct buffers). The tile's rows: 16 for two steps,
// 32 beyond (the written fraction (BX − 2K)(BY − 2K)/(BX·BY) falls with K).
template <class T>
void launch_heat_time_block(const HeatArgs<T>& a, int k, const T* in, T* out, cudaStream_t s) {
  const int nx = int(a.n[0]), ny = int(a.n[1]), nz = int(a.n[2]);
  const int zchunk = 64;
  const auto go = [&](auto kernel, int bx, int by, int kk) {
    const dim3 grid(unsigned((nx + bx - 2 * kk - 1) / (bx - 2 * kk)),
                    unsigned((ny + by - 2 * kk - 1) / (by - 2 * kk)), unsigned((nz + zchunk - 1) / zchunk));
    kernel<<<grid, dim3(bx, by), 0, s>>>(a, in, out, zchunk);
  };
  switch (k) {
    case 2: go(heat3d_time_block<T, 2, 32, 16>, 32, 16, 2); break;
    case 3: go(heat3d_time_block<T, 3, 32, 16>, 32, 16, 3); break;
    default: go(heat3d_time_block<T, 4, 32, 16>, 32, 16, 4); break;
  }
}

}  // namespace gf
