// Explicit heat step kernels. Every point goes through ftcs_point (the shared
// formula): interior points gather their neighbours directly; points on a face
// go through heat_point_bc, which applies the boundary rules. In 3D the faces
// have a kernel of their own, so that the interior kernels carry no boundary
// branch (registers, and so occupancy, are what a memory-latency-bound
// stencil lives on).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/vec16.cuh"
#include "kernels/ops/heat.hpp"

namespace gf {

// A point on an x face (i = 0 or nx − 1) whose j and k are interior: the x
// neighbours follow the boundary rule (the shared neighbour() formula), the y
// and z ones are ordinary. Computed inside the interior kernels, where the
// point's row already is, rather than by a kernel that would read whole rows
// for one value each.
template <class T, class I>
__device__ __forceinline__ T x_face_point(const HeatArgs<T>& a, const T* in, I idx, I i, T u,
                                          T ym, T yp, T zm, T zp) {
  const std::int64_t nx = a.n[0];
  if (on_dirichlet<T>(i, nx, a.bc[0])) return u;
  const T m[3] = {neighbour(in, std::int64_t(idx), std::int64_t(i), nx, 1, -1, a.bc[0]), ym, zm};
  const T p[3] = {neighbour(in, std::int64_t(idx), std::int64_t(i), nx, 1, +1, a.bc[0]), yp, zp};
  return ftcs_point<3>(u, m, p, a.c, heat_source(a, std::int64_t(idx)));
}

// 3D off the y and z faces, scalar (rows that are not a whole number of
// 16-byte vectors, or grids of 2³¹ points and more): one thread per (x, y) column,
// marching along z over a chunk of planes with the z−1, z, z+1 values in
// registers, so each value comes from memory about once; x and y neighbours
// come through L1/L2; the x-face points at the row ends go through
// x_face_point. 32-bit indices where the grid allows keep the registers, and
// so the warps in flight that hide memory latency, up. (Measured on an H200,
// 512³ float32: with the whole boundary path inlined and 64-bit indices the
// kernel took 64 registers, ran at half occupancy and reached 0.37 of copy
// bandwidth; this one about 0.55. The vectorised kernel below does better.)
template <class T, class I>
__global__ void __launch_bounds__(256, 6) heat3d_interior(HeatArgs<T> a, const T* __restrict__ in,
                                                       T* __restrict__ out, int kchunk) {
  const I nx = I(a.n[0]), ny = I(a.n[1]), nz = I(a.n[2]);
  const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I j = 1 + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y);
  if (i >= nx || j >= ny - 1) return;
  const I kb = 1 + I(blockIdx.z) * I(kchunk);
  const I ke = kb + kchunk < nz - 1 ? kb + kchunk : nz - 1;
  const I plane = nx * ny;
  const bool x_face = i == 0 || i == nx - 1;
  I idx = i + nx * j + kb * plane;
  T uzm = in[idx - plane];
  T uc = in[idx];
#pragma unroll 4
  for (I k = kb; k < ke; ++k, idx += plane) {
    const T uzp = in[idx + plane];
    if (x_face) {
      out[idx] = x_face_point(a, in, idx, i, uc, in[idx - nx], in[idx + nx], uzm, uzp);
    } else {
      const T m[3] = {in[idx - 1], in[idx - nx], uzm};
      const T p[3] = {in[idx + 1], in[idx + nx], uzp};
      out[idx] = ftcs_point<3>(uc, m, p, a.c, heat_source(a, idx));
    }
    uzm = uc;
    uc = uzp;
  }
}

// Vectorised in x: each thread owns V = 16/sizeof(T) consecutive
// points of a row and moves them with 16-byte loads and stores, which cuts the
// load/store instructions per point by V. Needs nx % V == 0 (rows aligned).
// It computes whole rows; the x-face points at a row's ends go through
// x_face_point. At most 40 registers (6 blocks of 256 per SM): on an
// H200, 512³, this ran float32 at 0.79 and float64 at 0.87 of copy bandwidth
// (the scalar march below: 0.55 and 0.75; streaming stores or 8 blocks per SM,
// which spills, were slower).
template <class T, int MINB>
__global__ void __launch_bounds__(256, MINB) heat3d_interior_vec(HeatArgs<T> a, const T* __restrict__ in,
                                                           T* __restrict__ out, int kchunk) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  const int nx = int(a.n[0]), ny = int(a.n[1]), nz = int(a.n[2]);
  const int i0 = W * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i0 >= nx || j >= ny - 1) return;
  const int kb = 1 + int(blockIdx.z) * kchunk;
  const int ke = kb + kchunk < nz - 1 ? kb + kchunk : nz - 1;
  const int plane = nx * ny;
  int idx = i0 + nx * j + kb * plane;
  V zm = *reinterpret_cast<const V*>(in + idx - plane);
  V c = *reinterpret_cast<const V*>(in + idx);
  for (int k = kb; k < ke; ++k, idx += plane) {
    const V zp = *reinterpret_cast<const V*>(in + idx + plane);
    const V ym = *reinterpret_cast<const V*>(in + idx - nx);
    const V yp = *reinterpret_cast<const V*>(in + idx + nx);
    // x neighbours of the first and last point; idx − 1 and idx + W stay in
    // the array since 1 ≤ j ≤ ny − 2 (at a row's ends they are not used).
    const T left = in[idx - 1], right = in[idx + W];
    const T* cs = reinterpret_cast<const T*>(&c);
    const T* zms = reinterpret_cast<const T*>(&zm);
    const T* zps = reinterpret_cast<const T*>(&zp);
    const T* yms = reinterpret_cast<const T*>(&ym);
    const T* yps = reinterpret_cast<const T*>(&yp);
    V r;
    T* rs = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T m[3] = {e > 0 ? cs[e - 1] : left, yms[e], zms[e]};
      const T p[3] = {e < W - 1 ? cs[e + 1] : right, yps[e], zps[e]};
      rs[e] = ftcs_point<3>(cs[e], m, p, a.c, heat_source(a, idx + e));
    }
    if (i0 == 0) rs[0] = x_face_point(a, in, idx, 0, cs[0], yms[0], yps[0], zms[0], zps[0]);
    if (i0 + W == nx)
      rs[W - 1] = x_face_point(a, in, idx + W - 1, nx - 1, cs[W - 1], yms[W - 1], yps[W - 1],
                               zms[W - 1], zps[W - 1]);
    *reinterpret_cast<V*>(out + idx) = r;
    zm = c;
    c = zp;
  }
}

// 3D y and z faces (x faces are done by the interior kernels), one thread a
// point, consecutive threads along x so rows are read whole, through
// heat_point_bc (the boundary rules). 32-bit index arithmetic where the grid
// allows: the divisions dominate.
template <class T, class I>
__global__ void __launch_bounds__(256) heat3d_faces(HeatArgs<T> a, const T* __restrict__ in,
                                                    T* __restrict__ out) {
  const I nx = I(a.n[0]), ny = I(a.n[1]), nz = I(a.n[2]);
  I t = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I i = t % nx;
  I r = t / nx;  // the row: (face, k) for y faces, then (face, j) for z faces
  I j, k;
  if (r < 2 * nz) {  // y faces: all k
    j = (r % 2) ? ny - 1 : 0;
    k = r / 2;
  } else if ((r -= 2 * nz) < 2 * (ny - 2)) {  // z faces: interior j
    k = (r % 2) ? nz - 1 : 0;
    j = 1 + r / 2;
  } else {
    return;
  }
  out[i + nx * (j + ny * k)] = heat_point_bc<3>(a, in, std::int64_t(i), std::int64_t(j),
                                                 std::int64_t(k));
}

// 2D, vectorised in x and marching along y (rows 1 to ny − 2), as the 2D
// Jacobi sweep does: each thread owns W = 16/sizeof(T) points of a row, keeps
// rows j − 1 and j in registers, loads row j + 1 as one 16-byte vector; the x
// neighbours of its first and last point are single loads (L1). The points at
// a row's ends go through heat_point_bc, rows 0 and ny − 1 through
// heat2d_rows. Needs nx % W == 0 and fewer than 2³¹ points. (The plain kernel
// below ran 16384² float32 at 0.51 of copy bandwidth on an H200.)
template <class T>
__global__ void __launch_bounds__(256) heat2d_vec(HeatArgs<T> a, const T* __restrict__ in,
                                                  T* __restrict__ out, int kc) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  const int nx = int(a.n[0]), ny = int(a.n[1]);
  const int i0 = W * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int jb = 1 + int(blockIdx.y * blockDim.y + threadIdx.y) * kc;
  if (i0 >= nx || jb >= ny - 1) return;
  const int je = min(jb + kc, ny - 1);
  int idx = i0 + nx * jb;
  V ym = *reinterpret_cast<const V*>(in + idx - nx);
  V c = *reinterpret_cast<const V*>(in + idx);
  for (int j = jb; j < je; ++j, idx += nx) {
    const V yp = *reinterpret_cast<const V*>(in + idx + nx);
    // idx − 1 and idx + W stay in the array since 1 ≤ j ≤ ny − 2
    const T left = in[idx - 1], right = in[idx + W];
    const T* cs = reinterpret_cast<const T*>(&c);
    const T* yms = reinterpret_cast<const T*>(&ym);
    const T* yps = reinterpret_cast<const T*>(&yp);
    V r;
    T* rs = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T m[2] = {e > 0 ? cs[e - 1] : left, yms[e]};
      const T p[2] = {e < W - 1 ? cs[e + 1] : right, yps[e]};
      rs[e] = ftcs_point<2>(cs[e], m, p, a.c, heat_source(a, std::int64_t(idx + e)));
    }
    if (i0 == 0) rs[0] = heat_point_bc<2>(a, in, 0, j, 0);
    if (i0 + W == nx) rs[W - 1] = heat_point_bc<2>(a, in, nx - 1, j, 0);
    *reinterpret_cast<V*>(out + idx) = r;
    ym = c;
    c = yp;
  }
}

// Rows 0 and ny − 1 of a 2D grid, through heat_point_bc (the boundary rules).
template <class T>
__global__ void __launch_bounds__(256) heat2d_rows(HeatArgs<T> a, const T* __restrict__ in,
                                                   T* __restrict__ out) {
  const std::int64_t nx = a.n[0], ny = a.n[1];
  const std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (t >= 2 * nx) return;
  const std::int64_t i = t % nx, j = t < nx ? 0 : ny - 1;
  out[i + nx * j] = heat_point_bc<2>(a, in, i, j, 0);
}

template <class T>
__global__ void __launch_bounds__(256) heat2d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out) {
  const std::int64_t nx = a.n[0], ny = a.n[1];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const std::int64_t idx = i + nx * j;
  if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {
    const T m[2] = {in[idx - 1], in[idx - nx]};
    const T p[2] = {in[idx + 1], in[idx + nx]};
    out[idx] = ftcs_point<2>(in[idx], m, p, a.c, heat_source(a, idx));
  } else {
    out[idx] = heat_point_bc<2>(a, in, i, j, 0);
  }
}

template <class T>
__global__ void __launch_bounds__(256) heat1d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out) {
  const std::int64_t nx = a.n[0];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  if (i > 0 && i < nx - 1) {
    const T m[1] = {in[i - 1]};
    const T p[1] = {in[i + 1]};
    out[i] = ftcs_point<1>(in[i], m, p, a.c, heat_source(a, i));
  } else {
    out[i] = heat_point_bc<1>(a, in, i, 0, 0);
  }
}

inline unsigned blocks_for(std::int64_t n, unsigned b) { return unsigned((n + b - 1) / b); }

template <class T>
void launch_heat_step(const HeatArgs<T>& a, const T* in, T* out, cudaStream_t s) {
  if (a.ndim == 3) {
    const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
    const std::int64_t faces = 2 * nx * (nz + ny - 2);  // y and z faces
    const bool small = nx * ny * nz < (std::int64_t(1) << 31);
    constexpr int W = Vec16<T>::n;
    // z planes per block: short chunks keep many blocks in flight; measured
    // best on an H200 at 512³ (4 for float32, 8 for float64).
    const std::int64_t kc = std::min<std::int64_t>(sizeof(T) == 4 ? 4 : 8, nz - 2);
    if (small && nx % W == 0) {
      const dim3 g(blocks_for(nx / W, 32), blocks_for(ny - 2, 8), blocks_for(nz - 2, kc));
      // Blocks per SM the register budget must allow: measured best on an H200
      // at 512³ (float32: 6 → 40 registers; float64 needs 64 registers to keep
      // its x-face path out of local memory, and 4 blocks ran fastest).
      constexpr int min_blocks = sizeof(T) == 4 ? 6 : 4;
      heat3d_interior_vec<T, min_blocks><<<g, dim3(32, 8), 0, s>>>(a, in, out, int(kc));
    } else {
      const int kchunk = int(std::min<std::int64_t>(8, nz - 2));
      const dim3 g(blocks_for(nx, 32), blocks_for(ny - 2, 8), blocks_for(nz - 2, kchunk));
      if (small)
        heat3d_interior<T, int><<<g, dim3(32, 8), 0, s>>>(a, in, out, kchunk);
      else
        heat3d_interior<T, std::int64_t><<<g, dim3(32, 8), 0, s>>>(a, in, out, kchunk);
    }
    // The faces kernel writes other points than the interior kernel: the two
    // could overlap; in one stream they simply follow each other.
    if (small)
      heat3d_faces<T, int><<<blocks_for(faces, 256), 256, 0, s>>>(a, in, out);
    else
      heat3d_faces<T, std::int64_t><<<blocks_for(faces, 256), 256, 0, s>>>(a, in, out);
  } else if (a.ndim == 2 && a.n[0] % Vec16<T>::n == 0 && a.n[1] >= 2 &&
             a.n[0] * a.n[1] < (std::int64_t(1) << 31) &&
             reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
             reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
    const std::int64_t nx = a.n[0], ny = a.n[1];
    const int kc = 16;  // rows a thread marches over
    const dim3 block(32, 8);
    const dim3 grid(blocks_for(nx / Vec16<T>::n, 32), blocks_for((ny - 2 + kc - 1) / kc, 8));
    if (ny > 2) heat2d_vec<T><<<grid, block, 0, s>>>(a, in, out, kc);
    heat2d_rows<T><<<blocks_for(2 * nx, 256), 256, 0, s>>>(a, in, out);
  } else if (a.ndim == 2) {
    const dim3 block(64, 4);
    const dim3 grid(blocks_for(a.n[0], 64), blocks_for(a.n[1], 4));
    heat2d_kernel<T><<<grid, block, 0, s>>>(a, in, out);
  } else {
    heat1d_kernel<T><<<blocks_for(a.n[0], 256), 256, 0, s>>>(a, in, out);
  }
}

}  // namespace gf
