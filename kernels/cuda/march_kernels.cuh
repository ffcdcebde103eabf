// The 3D z-marches shared by every radius-1 update (explicit heat, Jacobi,
// the star7 and box27 stencil presets): what differs between them is the
// point operator, a small struct (`Op`) handed to the kernels by value:
//
//   op.n[3]                          the grid
//   Op::min_blocks                   blocks of 256 threads per SM its registers allow
//   op.interior(c, m, p, idx)        star ops: the point formula, neighbours at
//                                    −1 (m) and +1 (p) on each axis, none off the grid
//   op.interior(nb, e, idx)          box ops: the formula from the 3×3×3 neighbourhood
//   op.x_face(...)                   a point at a row's end (i = 0 or nx − 1) whose
//                                    j and k are interior, by the boundary rules
//                                    (star: from the march's neighbours, box: from
//                                    the neighbourhood)
//   op.face(in, i, j, k)             any point, by the boundary rules (y and z faces)
//
// Each op calls the workload's formula from kernels/ops, so the march is only
// the machinery (indexing, registers, vectors); the arithmetic is the formula's.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/vec16.cuh"

namespace gf {

// The points a ranged march covers (the core of a step split for the
// overlapped halo exchange, part_kernels.cuh): x from i_lo (a multiple of
// W) below i_hi, y from j_lo below j_hi (2D: the rows), z from k_lo below
// k_hi, inside the march's own reach (1 ≤ j < ny − 1, 1 ≤ k < nz − 1). A
// march that is not RANGED ignores it and covers its whole reach.
struct MarchRange {
  int i_lo = 0, i_hi = 0, j_lo = 0, j_hi = 0, k_lo = 0, k_hi = 0;
};

// Off the y and z faces, vectorised in x: each thread owns W = 16/sizeof(T)
// consecutive points of a row and moves them with 16-byte loads and stores;
// it marches along z over kchunk planes with the z − 1, z, z + 1 vectors in
// registers, so each value comes from memory about once (the y neighbours
// come through L1). The x neighbours of its first and last point are single
// loads. Needs nx % W == 0, 16-byte aligned fields and fewer than 2³¹ points.
// (Heat on an H100 at 512³: 0.97 of copy bandwidth in float32, 0.92 in
// float64; at most 40 registers for float32 at 6 blocks of 256 per SM.)
template <class Op, class T, int MINB, bool RANGED = false>
__global__ void __launch_bounds__(256, MINB) march3d_star(Op op, const T* __restrict__ in,
                                                          T* __restrict__ out, int kchunk,
                                                          MarchRange rg = {}) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  const int nx = int(op.n[0]), ny = int(op.n[1]), nz = int(op.n[2]);
  const int i0 = (RANGED ? rg.i_lo : 0) + W * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = (RANGED ? rg.j_lo : 1) + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i0 >= (RANGED ? rg.i_hi : nx) || j >= (RANGED ? rg.j_hi : ny - 1)) return;
  const int kb = (RANGED ? rg.k_lo : 1) + int(blockIdx.z) * kchunk;
  const int kend = RANGED ? rg.k_hi : nz - 1;
  const int ke = kb + kchunk < kend ? kb + kchunk : kend;
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
      rs[e] = op.interior(cs[e], m, p, idx + e);
    }
    if (i0 == 0) rs[0] = op.x_face(in, idx, 0, j, k, cs[0], yms[0], yps[0], zms[0], zps[0]);
    if (i0 + W == nx)
      rs[W - 1] = op.x_face(in, idx + W - 1, nx - 1, j, k, cs[W - 1], yms[W - 1], yps[W - 1],
                            zms[W - 1], zps[W - 1]);
    *reinterpret_cast<V*>(out + idx) = r;
    zm = c;
    c = zp;
  }
}

// Three rows (y − 1, y, y + 1) of one plane around a thread's W points, each
// with the values left and right of them: what a box march keeps per plane.
template <class T>
struct BoxPlane {
  typename Vec16<T>::type row[3];
  T left[3], right[3];
};

// The 3×3×3 neighbourhood of a thread's W points: planes z − 1, z, z + 1.
// at(dx, dy, dz, e) is the value at offset (dx, dy, dz) from point e.
template <class T>
struct BoxNbhd {
  const BoxPlane<T>* pl[3];
  __device__ __forceinline__ T at(int dx, int dy, int dz, int e) const {
    constexpr int W = Vec16<T>::n;
    const BoxPlane<T>& p = *pl[dz + 1];
    const int x = e + dx;
    if (x < 0) return p.left[dy + 1];
    if (x >= W) return p.right[dy + 1];
    return reinterpret_cast<const T*>(&p.row[dy + 1])[x];
  }
};

// The values left and right of a row piece are read only where the row goes
// on: at a row's ends the x-face path takes the boundary rules instead (and
// at the grid's first and last rows they would lie outside the array).
template <class T>
__device__ __forceinline__ void load_box_plane(BoxPlane<T>& p, const T* in, int idx, int nx,
                                               bool has_left, bool has_right) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
#pragma unroll
  for (int dy = 0; dy < 3; ++dy) {
    const int r = idx + (dy - 1) * nx;
    p.row[dy] = *reinterpret_cast<const V*>(in + r);
    p.left[dy] = has_left ? in[r - 1] : T(0);
    p.right[dy] = has_right ? in[r + W] : T(0);
  }
}

// The box march: as march3d_star, with the whole 3×3×3 neighbourhood of the
// thread's points in registers (three rows of three planes), for operators
// with diagonal taps. Same requirements.
// PF: each plane is loaded one plane ahead of its use (in float32, where the
// registers allow it: see box_prefetch).
template <class Op, class T, int MINB, bool RANGED = false, bool PF = false>
__global__ void __launch_bounds__(256, MINB) march3d_box(Op op, const T* __restrict__ in,
                                                         T* __restrict__ out, int kchunk,
                                                         MarchRange rg = {}) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  const int nx = int(op.n[0]), ny = int(op.n[1]), nz = int(op.n[2]);
  const int i0 = (RANGED ? rg.i_lo : 0) + W * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = (RANGED ? rg.j_lo : 1) + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i0 >= (RANGED ? rg.i_hi : nx) || j >= (RANGED ? rg.j_hi : ny - 1)) return;
  const int kb = (RANGED ? rg.k_lo : 1) + int(blockIdx.z) * kchunk;
  const int kend = RANGED ? rg.k_hi : nz - 1;
  const int ke = kb + kchunk < kend ? kb + kchunk : kend;
  const int plane = nx * ny;
  int idx = i0 + nx * j + kb * plane;
  const bool has_left = i0 > 0, has_right = i0 + W < nx;
  BoxPlane<T> zm, zc, zp, zn;
  load_box_plane(zm, in, idx - plane, nx, has_left, has_right);
  load_box_plane(zc, in, idx, nx, has_left, has_right);
  if constexpr (PF)
    if (kb < ke) load_box_plane(zn, in, idx + plane, nx, has_left, has_right);
  for (int k = kb; k < ke; ++k, idx += plane) {
    if constexpr (PF) {
      zp = zn;  // loaded a plane ago; the next one is asked for now
      if (k + 1 < ke) load_box_plane(zn, in, idx + 2 * plane, nx, has_left, has_right);
    } else {
      load_box_plane(zp, in, idx + plane, nx, has_left, has_right);
    }
    const BoxNbhd<T> nb{{&zm, &zc, &zp}};
    V r;
    T* rs = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int e = 0; e < W; ++e) rs[e] = op.interior(nb, e, idx + e);
    if (i0 == 0) rs[0] = op.x_face(nb, 0, in, 0, j, k, -1);
    if (i0 + W == nx) rs[W - 1] = op.x_face(nb, W - 1, in, nx - 1, j, k, +1);
    *reinterpret_cast<V*>(out + idx) = r;
    zm = zc;
    zc = zp;
  }
}

// The y and z faces (the marches do the x faces), one thread a point,
// consecutive threads along x so rows are read whole, through op.face (the
// boundary rules). 32-bit index arithmetic where the grid allows: the
// divisions dominate.
template <class Op, class I>
__global__ void __launch_bounds__(256) faces3d(Op op, const typename Op::value_type* __restrict__ in,
                                               typename Op::value_type* __restrict__ out) {
  const I nx = I(op.n[0]), ny = I(op.n[1]), nz = I(op.n[2]);
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
  out[i + nx * (j + ny * k)] = op.face(in, std::int64_t(i), std::int64_t(j), std::int64_t(k));
}

// 2D, vectorised in x and marching along y over kc rows (rows 1 to ny − 2):
// each thread owns W = 16/sizeof(T) points of a row, keeps rows j − 1 and j
// in registers and loads row j + 1 as one 16-byte vector; the x neighbours of
// its first and last point are single loads (L1). Points at a row's ends go
// through op.face. BOX: the op takes the 3×3 neighbourhood (op.interior(nb,
// e, idx) with nb's planes z − 1 and z + 1 unused), else the star's m and p.
// Needs nx % W == 0, aligned fields and fewer than 2³¹ points. (The first
// one-thread-per-point kernels ran a 16384² float32 Jacobi sweep at 0.27 of
// copy bandwidth on an H200, this march 0.84.)
template <bool BOX, class Op, class T, bool RANGED = false>
__global__ void __launch_bounds__(256) march2d(Op op, const T* __restrict__ in,
                                               T* __restrict__ out, int kc, MarchRange rg = {}) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  const int nx = int(op.n[0]), ny = int(op.n[1]);
  const int i0 = (RANGED ? rg.i_lo : 0) + W * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int jb = (RANGED ? rg.j_lo : 1) + int(blockIdx.y * blockDim.y + threadIdx.y) * kc;
  const int jend = RANGED ? rg.j_hi : ny - 1;
  if (i0 >= (RANGED ? rg.i_hi : nx) || jb >= jend) return;
  const int je = min(jb + kc, jend);
  int idx = i0 + nx * jb;
  // Each row is loaded one row ahead of its use (nrow, nl, nr: row j + 2 of
  // the step that computes row j), so that its latency is spent on the row
  // before: 2-5 % on an H100 at 16384² for every 2D march (heat, Jacobi,
  // star5, box9), float32 and float64.
  // rows j − 1, j, j + 1 with their left and right values: one plane of a box
  // (left and right of the piece only where the row goes on: at a row's ends
  // op.x_face takes the boundary rules, and at the grid's first and last rows
  // they would lie outside the array)
  const bool has_left = i0 > 0, has_right = i0 + W < nx;
  BoxPlane<T> pl;
  pl.row[0] = *reinterpret_cast<const V*>(in + idx - nx);
  pl.row[1] = *reinterpret_cast<const V*>(in + idx);
  if constexpr (BOX) {
    pl.left[0] = has_left ? in[idx - nx - 1] : T(0);
    pl.right[0] = has_right ? in[idx - nx + W] : T(0);
    pl.left[1] = has_left ? in[idx - 1] : T(0);
    pl.right[1] = has_right ? in[idx + W] : T(0);
  }
  // the row below a row's step (BOX: row j + 1 with its ends; a star: row
  // j + 1 and the ends of row j); idx − 1 and idx + W stay in the array
  // since 1 ≤ j ≤ ny − 2
  V nrow{};
  T nl{}, nr{};
  const auto ahead = [&](int at) {
    nrow = *reinterpret_cast<const V*>(in + at + nx);
    if constexpr (BOX) {
      nl = has_left ? in[at + nx - 1] : T(0);
      nr = has_right ? in[at + nx + W] : T(0);
    } else {
      nl = in[at - 1];
      nr = in[at + W];
    }
  };
  if (jb < je) ahead(idx);
  for (int j = jb; j < je; ++j, idx += nx) {
    pl.row[2] = nrow;
    if constexpr (BOX) {
      pl.left[2] = nl;
      pl.right[2] = nr;
    } else {
      pl.left[1] = nl;
      pl.right[1] = nr;
    }
    if (j + 1 < je) ahead(idx + nx);
    const T* cs = reinterpret_cast<const T*>(&pl.row[1]);
    const T* yms = reinterpret_cast<const T*>(&pl.row[0]);
    const T* yps = reinterpret_cast<const T*>(&pl.row[2]);
    V r;
    T* rs = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      if constexpr (BOX) {
        const BoxNbhd<T> nb{{&pl, &pl, &pl}};
        rs[e] = op.interior(nb, e, idx + e);
      } else {
        const T m[2] = {e > 0 ? cs[e - 1] : pl.left[1], yms[e]};
        const T p[2] = {e < W - 1 ? cs[e + 1] : pl.right[1], yps[e]};
        rs[e] = op.interior(cs[e], m, p, idx + e);
      }
    }
    if constexpr (BOX) {
      if (i0 == 0) rs[0] = op.face(in, 0, j, 0);
      if (i0 + W == nx) rs[W - 1] = op.face(in, nx - 1, j, 0);
    } else {
      if (i0 == 0) rs[0] = op.x_face(in, idx, 0, j, 0, cs[0], yms[0], yps[0], T(0), T(0));
      if (i0 + W == nx)
        rs[W - 1] = op.x_face(in, idx + W - 1, nx - 1, j, 0, cs[W - 1], yms[W - 1], yps[W - 1],
                              T(0), T(0));
    }
    *reinterpret_cast<V*>(out + idx) = r;
    pl.row[0] = pl.row[1];
    pl.row[1] = pl.row[2];
    if constexpr (BOX) {
      pl.left[0] = pl.left[1];
      pl.right[0] = pl.right[1];
      pl.left[1] = pl.left[2];
      pl.right[1] = pl.right[2];
    }
  }
}

// Rows 0 and ny − 1 of a 2D grid, through op.face (the boundary rules).
template <class Op>
__global__ void __launch_bounds__(256) rows2d(Op op, const typename Op::value_type* __restrict__ in,
                                              typename Op::value_type* __restrict__ out) {
  const std::int64_t nx = op.n[0], ny = op.n[1];
  const std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (t >= 2 * nx) return;
  const std::int64_t i = t % nx, j = t < nx ? 0 : ny - 1;
  out[i + nx * j] = op.face(in, i, j, 0);
}

inline unsigned march_blocks(std::int64_t n, unsigned b) { return unsigned((n + b - 1) / b); }

// True when a 3D field can take the vectorised marches.
template <class T>
bool march3d_fits(const std::int64_t* n, const T* in, const T* out) {
  return n[0] % Vec16<T>::n == 0 && n[1] >= 3 && n[2] >= 3 &&
         n[0] * n[1] * n[2] < (std::int64_t(1) << 31) &&
         reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
}

// True when a 2D field can take the vectorised march.
template <class T>
bool march2d_fits(const std::int64_t* n, const T* in, const T* out) {
  return n[0] % Vec16<T>::n == 0 && n[1] >= 2 && n[0] * n[1] < (std::int64_t(1) << 31) &&
         reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
}

// One 2D step: the march over rows 1 to ny − 2, then rows 0 and ny − 1.
template <bool BOX, class Op>
void launch_march2d(const Op& op, const typename Op::value_type* in,
                    typename Op::value_type* out, cudaStream_t s) {
  using T = typename Op::value_type;
  const std::int64_t nx = op.n[0], ny = op.n[1];
  // rows a thread marches over: on an H100 at 16384², 8 rows ran at 0.94 of
  // copy bandwidth, 16, 32 and 64 at 0.89–0.91
  const int kc = 8;
  const dim3 block(32, 8);
  const dim3 grid(march_blocks(nx / Vec16<T>::n, 32), march_blocks((ny - 2 + kc - 1) / kc, 8));
  if (ny > 2) march2d<BOX, Op, T><<<grid, block, 0, s>>>(op, in, out, kc);
  rows2d<Op><<<march_blocks(2 * nx, 256), 256, 0, s>>>(op, in, out);
}

// The y and z faces of a 3D grid.
template <class Op>
void launch_faces3d(const Op& op, const typename Op::value_type* in,
                    typename Op::value_type* out, cudaStream_t s) {
  const std::int64_t nx = op.n[0], ny = op.n[1], nz = op.n[2];
  const std::int64_t faces = 2 * nx * (nz + std::max<std::int64_t>(0, ny - 2));
  if (faces == 0) return;
  if (nx * ny * nz < (std::int64_t(1) << 31))
    faces3d<Op, int><<<march_blocks(faces, 256), 256, 0, s>>>(op, in, out);
  else
    faces3d<Op, std::int64_t><<<march_blocks(faces, 256), 256, 0, s>>>(op, in, out);
}

// The box march loads a plane ahead in float32 only, in chunks of 16 planes
// a block: box27 at 512³ on an H100 0.538 ms against 0.593 (4 planes, no
// prefetch). In float64 its registers do not allow it (1.38 ms against
// 1.15), nor in the star marches at their 6 (float32) and 4 (float64)
// blocks per SM (star7 0.665 / 1.658 against 0.383 / 0.841, heat 0.548
// against 0.367: the marches spill); longer chunks alone changed nothing
// there (2026-11-23, docs/performance.md).
template <class T>
constexpr bool box_prefetch() {
  return sizeof(T) == 4;
}
template <bool BOX, class T>
constexpr int march3d_chunk() {
  if (BOX && box_prefetch<T>()) return 16;
  return sizeof(T) == 4 ? 4 : 8;
}

// One step through a march (BOX: march3d_box, else march3d_star) and the
// faces kernel; the caller has checked march3d_fits. z planes per block:
// short chunks keep many blocks in flight (measured best on an H200 at 512³
// for heat: 4 for float32, 8 for float64); Op::min_blocks is the blocks per
// SM its register budget must allow (heat, float32: 6, i.e. 40 registers;
// float64 needs 64 registers, 4 blocks, to keep its x-face path out of local
// memory).
template <bool BOX, class Op>
void launch_march3d(const Op& op, const typename Op::value_type* in,
                    typename Op::value_type* out, cudaStream_t s) {
  using T = typename Op::value_type;
  constexpr int W = Vec16<T>::n;
  const std::int64_t nx = op.n[0], ny = op.n[1], nz = op.n[2];
  const std::int64_t kc = std::min<std::int64_t>(march3d_chunk<BOX, T>(), nz - 2);
  const dim3 g(march_blocks(nx / W, 32), march_blocks(ny - 2, 8), march_blocks(nz - 2, kc));
  constexpr int min_blocks = Op::min_blocks;
  if constexpr (BOX)
    march3d_box<Op, T, min_blocks, false, box_prefetch<T>()><<<g, dim3(32, 8), 0, s>>>(
        op, in, out, int(kc));
  else
    march3d_star<Op, T, min_blocks><<<g, dim3(32, 8), 0, s>>>(op, in, out, int(kc));
  // The faces kernel writes other points than the march: the two could
  // overlap; in one stream they simply follow each other.
  launch_faces3d(op, in, out, s);
}

// The march alone over range r (non-empty, inside its reach; no faces
// kernel): the core of a split step (part_kernels.cuh). The same blocks and
// z chunks as launch_march3d.
template <bool BOX, class Op>
void launch_march3d_range(const Op& op, const typename Op::value_type* in,
                          typename Op::value_type* out, const MarchRange& r, cudaStream_t s) {
  using T = typename Op::value_type;
  constexpr int W = Vec16<T>::n;
  const int kc = std::min(march3d_chunk<BOX, T>(), r.k_hi - r.k_lo);
  const dim3 g(march_blocks((r.i_hi - r.i_lo) / W, 32), march_blocks(r.j_hi - r.j_lo, 8),
               march_blocks(r.k_hi - r.k_lo, unsigned(kc)));
  constexpr int min_blocks = Op::min_blocks;
  if constexpr (BOX)
    march3d_box<Op, T, min_blocks, true, box_prefetch<T>()><<<g, dim3(32, 8), 0, s>>>(op, in, out,
                                                                                    kc, r);
  else
    march3d_star<Op, T, min_blocks, true><<<g, dim3(32, 8), 0, s>>>(op, in, out, kc, r);
}

// The 2D march alone over range r (rows j_lo..j_hi − 1; no row kernel).
template <bool BOX, class Op>
void launch_march2d_range(const Op& op, const typename Op::value_type* in,
                          typename Op::value_type* out, const MarchRange& r, cudaStream_t s) {
  using T = typename Op::value_type;
  const int kc = 8;  // as launch_march2d
  const dim3 grid(march_blocks((r.i_hi - r.i_lo) / Vec16<T>::n, 32),
                  march_blocks((r.j_hi - r.j_lo + kc - 1) / kc, 8));
  march2d<BOX, Op, T, true><<<grid, dim3(32, 8), 0, s>>>(op, in, out, kc, r);
}

}  // namespace gf
