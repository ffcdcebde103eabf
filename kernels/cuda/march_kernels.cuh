// The z-marches (3D) and y-marches (2D) shared by every radius-1 update
// (explicit heat, Jacobi, the star and box stencil presets): what differs
// between them is the point operator, a small struct (`Op`) handed to the
// kernels by value:
//
//   op.bc[3]                         the boundary rules (the marches read
//                                    bc[0] for the x faces)
//   Op::min_blocks                   blocks of 256 threads per SM its registers allow
//   Op::min_blocks_partial           optional: the star march's blocks an SM on rows
//                                    ending in part of a vector (StarMinBlocks)
//   Op::ahead_whole_rows             optional: the star march loads a plane ahead,
//                                    on whole rows only (StarAhead)
//   Op::down_within_l2               optional: the L2 caches a field may span for
//                                    the 3D star march to go down (DownWithinL2)
//   op.interior(c, m, p, idx)        star ops: the point formula, neighbours at
//                                    −1 (m) and +1 (p) on each axis
//   op.group(acc, g, v)              box ops: acc plus the taps of group g (one
//                                    plane in 3D, one row in 2D) from their values
//   op.finish(u, sum)                box ops: the point from its value and the sum
//   op.face(in, i, j, k)             any point of the view `in`, by the
//                                    boundary rules (y and z faces)
//
// Each op calls the workload's formula, so the march is only the machinery
// (indexing, registers, vectors); the arithmetic is the formula's. The
// fields come as views (grid/view.hpp) that the launchers split into their
// pointers, passed as __restrict__ kernel parameters (which lets nvcc load
// through the read-only path), and their common layout `l`: the kernels
// step by its strides and take a point's index from it alone.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "grid/view.hpp"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/vec16.cuh"
#include "kernels/cuda/waves.cuh"
#include "kernels/device.hpp"
#include "kernels/ops/boundary.hpp"

namespace gf {

// The points a ranged march covers (the core of a step split for the
// overlapped halo exchange, part_kernels.cuh): x from i_lo (a multiple of
// W) below i_hi, y from j_lo below j_hi (2D: the rows), z from k_lo below
// k_hi, inside the march's own reach (1 ≤ j < ny − 1, 1 ≤ k < nz − 1). A
// march that is not RANGED ignores it and covers its whole reach.
struct MarchRange {
  int i_lo = 0, i_hi = 0, j_lo = 0, j_hi = 0, k_lo = 0, k_hi = 0;
};

// The pieces at a row's end that a 3D march makes apart (run_march3d, the
// tail): a row of 65 pieces (257 float32 points) in blocks 32 pieces across
// left the third block of each row one busy thread, whose warps ran the
// whole march for one lane. With a tail, the march's blocks cover pieces 0
// to first − 1, and the blocks from `my` along y (past the march's, in
// each z chunk: the same planes, while they are in L2) make pieces first to
// first + pieces − 1 of every row, consecutive threads on consecutive
// pieces and then rows. pad: the row's last piece writes its 32-byte
// sector whole (XSides::store); in a tail, by one more piece past the row
// (all padding: its thread reads padding and the row's own points, and
// writes zeros), so that two neighbouring threads write the sector in one
// instruction.
struct MarchTail {
  int first = 0, pieces = 0, my = 1 << 30;
  bool pad = true;
};

// Whether a march launch makes the faces too (face blocks, below): yes
// unless the op says faces_apart. The box preset's face point is the
// general stencil formula, out of line (in the march kernel its call took
// the star march from 44 to 60 registers in float32, when the star's faces
// took it too), so its faces keep a kernel of their own; the star's take
// star_point_bc, inline (46 registers).
template <class Op, class = void>
struct FacesInMarch : std::true_type {};
template <class Op>
struct FacesInMarch<Op, std::void_t<decltype(Op::faces_apart)>>
    : std::bool_constant<!Op::faces_apart> {};
template <class Op>
inline constexpr bool faces_in_march = FacesInMarch<Op>::value;

// Whether a 3D march takes tail blocks (MarchTail): yes unless the op says
// no_tail (the wave step, which reads the previous field point by point:
// its tail blocks read 5-8 % more from DRAM, and the step ran slower).
template <class Op, class = void>
struct TailInMarch : std::true_type {};
template <class Op>
struct TailInMarch<Op, std::void_t<decltype(Op::no_tail)>> : std::bool_constant<!Op::no_tail> {};

// The star march's shape by the kind of rows (PARTIAL: rows that end in part
// of a vector): blocks of 256 threads an SM (__launch_bounds__), the op's
// min_blocks, or its min_blocks_partial on such rows; and whether a thread
// loads the plane after the next one an iteration early (march3d_star's
// AHEAD), where the op says ahead_whole_rows, on whole rows only. Measured
// on an H100, fraction of copy bandwidth (docs/performance.md, session 20):
// float32 heat at 5 blocks rather than 6 on rows that end in part of a
// vector, 129³ 0.84 → 0.97, 257³ 0.80 → 0.86, 513³ 0.90 → 0.95,
// 509 × 263 × 391 0.92 → 0.95, but 0.01-0.03 lower on whole rows
// (320 × 200 × 100, 384³, 512³); float64 Jacobi with the plane ahead,
// 320 × 200 × 100 0.88 → 0.90, 384³ 0.94 → 0.96, 512³ 0.93 → 0.95, but
// 0.01-0.02 lower at 257³ and 513³. Jacobi and star7 in float32 ran best as
// they were.
template <class Op, bool PARTIAL, class = void>
struct StarMinBlocks : std::integral_constant<int, Op::min_blocks> {};
template <class Op>
struct StarMinBlocks<Op, true, std::void_t<decltype(Op::min_blocks_partial)>>
    : std::integral_constant<int, Op::min_blocks_partial> {};
template <class Op, bool PARTIAL, class = void>
struct StarAhead : std::false_type {};
template <class Op>
struct StarAhead<Op, false, std::void_t<decltype(Op::ahead_whole_rows)>>
    : std::bool_constant<Op::ahead_whole_rows> {};

// Whether the 3D star march of a step over fields of `bytes` goes down
// (march_block, march_down): on fields of at most n L2 caches, n = 8 (400
// MiB on an H100's 50 MiB) or the op's down_within_l2 (0: never). Beyond
// that the planes a step starts on are a small part of the field, and going down
// lost up to 0.01 of copy bandwidth on an H100 (0.04 on an H200) for
// float64 heat at 384³ and 512³, where float32 gained up to 0.04 (up to
// 509 × 263 × 391) and 0.00-0.02 at 513³. Float64 Jacobi: n = 2 (on an
// H100 going down lost 0.01-0.04 at 257³, 512³ and 513³ and gained 0.04 at
// 320 × 200 × 100). CG's operator: never (it maps the same pair of fields
// every iteration, so it would go one way always, and no step before it
// wrote its input last).
template <class Op, class = void>
struct DownWithinL2 : std::integral_constant<int, 8> {};
template <class Op>
struct DownWithinL2<Op, std::void_t<decltype(Op::down_within_l2)>>
    : std::integral_constant<int, Op::down_within_l2> {};
template <class Op>
bool star_goes_down(const void* in, const void* out, std::int64_t bytes) {
  return march_down(in, out) && bytes <= DownWithinL2<Op>::value * device_l2_bytes();
}

// What every march shares: a thread owns W = 16/sizeof(T) consecutive
// points of a row, from i0, moved as one 16-byte vector, and loads the
// values left and right of them (the x neighbours of its first and last
// point) as single loads. At a row's end (i = 0 or nx − 1) that value is the
// one beyond the face by the x rule (neighbour()'s: periodic wraps, Neumann
// mirrors with the ghost gradient), and the point takes the interior
// formula, or holds its value on a Dirichlet face: what the boundary-rules
// formula computes there, operation for operation, without its registers in
// every thread (inlined, the x-face point made the float64 star7 march spill:
// 0.85 of copy bandwidth at 512³ on an H100, 0.97 since). Where the
// neighbours lie is worked out once a thread.
//
// PARTIAL (rows whose nx is not a multiple of W, in a layout whose padded
// rows are whole vectors: Layout::aligned_rows): a row's last piece holds
// its last points in lanes 0..last and padding beyond; the right neighbour
// of lane `last` is the one the x rule gives, and the padding lanes are
// written as zeros. Without PARTIAL, last is W − 1 and folds away.
template <class T, bool PARTIAL = false>
struct XSides {
  static constexpr int W = Vec16<T>::n;
  int i0;
  int last;                // the piece's last point on the grid (a lane)
  int off_l, off_r;        // from the first point to its left neighbour, from the last to its right
  bool ghost_l, ghost_r;   // a Neumann face: add its ghost gradient
  __device__ __forceinline__ XSides(int i0_, int nx, const AxisBc<T>& bc) : i0(i0_) {
    last = PARTIAL ? min(W - 1, nx - 1 - i0) : W - 1;
    off_l = i0 > 0 ? -1 : bc.lo == BcType::Periodic ? nx - 1 : 1;
    off_r = i0 + last + 1 < nx ? 1 : bc.hi == BcType::Periodic ? -(nx - 1) : -1;
    ghost_l = i0 == 0 && bc.lo == BcType::Neumann;
    ghost_r = i0 + last + 1 == nx && bc.hi == BcType::Neumann;
  }
  // The value right of lane e inside the piece cs (lane e + 1), or beyond
  // the piece's last point the neighbour `right`.
  __device__ __forceinline__ T next(const T* cs, int e, T right) const {
    return e < W - 1 && e != last ? cs[e + 1] : right;
  }
  // The neighbours of the piece whose first point is at index at.
  __device__ __forceinline__ T left(const T* in, int at, const AxisBc<T>& bc) const {
    const T v = in[at + off_l];
    return ghost_l ? v + bc.ghost_lo : v;
  }
  __device__ __forceinline__ T right(const T* in, int at, const AxisBc<T>& bc) const {
    const T v = in[at + last + off_r];
    return ghost_r ? v + bc.ghost_hi : v;
  }
  // Stores the piece's values r at out (its first point). A row's last
  // piece that begins a 32-byte sector also writes the padding vector after
  // it (zeros, within the row's pitch sy), so that the sector is written
  // whole: a sector written in part is merged in L2 and DRAM (H100, float32
  // heat 300 × 200 × 100, rows of 37.5 sectors: 0.81 of copy bandwidth, 296
  // and 304 points a row 0.92-0.94). GRIDFORGE_PAD_STORE=0: not (pad false).
  template <class V>
  __device__ __forceinline__ void store(T* out, const V& r, int nx, int sy, bool pad) const {
    *reinterpret_cast<V*>(out) = r;
    if (pad && i0 < nx && i0 + last + 1 == nx &&
        (reinterpret_cast<std::uintptr_t>(out) & 16) == 0 && i0 + 2 * W <= sy)
      *reinterpret_cast<V*>(out + W) = V{};
  }
  // Points at a row's end on a Dirichlet face hold their value u; padding
  // lanes (PARTIAL) are zeros.
  __device__ __forceinline__ void hold(T* rs, const T* u, int nx, const AxisBc<T>& bc) const {
    if (i0 == 0 && bc.lo == BcType::Dirichlet) rs[0] = u[0];
    if (!PARTIAL) {
      if (i0 + W == nx && bc.hi == BcType::Dirichlet) rs[W - 1] = u[W - 1];
      return;
    }
    const bool held = i0 + last + 1 == nx && bc.hi == BcType::Dirichlet;
#pragma unroll
    for (int e = 0; e < W; ++e) {
      if (e == last && held) rs[e] = u[e];
      if (e > last) rs[e] = T(0);
    }
  }
};

// A row piece and its x neighbours.
template <class T>
struct RowPiece {
  typename Vec16<T>::type v;
  T l, r;
};

template <class T, bool PARTIAL>
__device__ __forceinline__ void load_piece(RowPiece<T>& p, const XSides<T, PARTIAL>& xs,
                                           const T* in, int at, const AxisBc<T>& bc) {
  p.v = *reinterpret_cast<const typename Vec16<T>::type*>(in + at);
  p.l = xs.left(in, at, bc);
  p.r = xs.right(in, at, bc);
}

// L2 prefetch of the 16 bytes at p (PTX prefetch.global.L2: no register
// waits for it).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// Point t of the y and z faces of a 3D grid (the marches do the x faces):
// rows of nx points, consecutive t along x so rows are read whole, y faces
// (both, every k) first, then z faces (interior j); through op.face (the
// boundary rules). t past the faces does nothing. 32-bit index arithmetic
// where the grid allows: the divisions dominate.
template <class Op, class I>
__device__ __forceinline__ void face3d_point(const Op& op,
                                             const typename Op::value_type* __restrict__ in,
                                             typename Op::value_type* __restrict__ out,
                                             const Layout& l, I t) {
  using T = typename Op::value_type;
  const I nx = I(l.n[0]), ny = I(l.n[1]), nz = I(l.n[2]);
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
  out[l.index_as<I>(i, j, k)] =
      op.face(FieldView<const T>(in, l), std::int64_t(i), std::int64_t(j), std::int64_t(k));
}

// Point t of rows 0 and ny − 1 of a 2D grid, through op.face.
template <class Op>
__device__ __forceinline__ void row2d_point(const Op& op,
                                            const typename Op::value_type* __restrict__ in,
                                            typename Op::value_type* __restrict__ out,
                                            const Layout& l, int t) {
  using T = typename Op::value_type;
  const int nx = int(l.n[0]), ny = int(l.n[1]);
  if (t >= 2 * nx) return;
  const int i = t % nx, j = t < nx ? 0 : ny - 1;
  out[l.index_as<int>(i, j, 0)] = op.face(FieldView<const T>(in, l), i, j, 0);
}

// A march launch also makes the faces (3D) or end rows (2D) the march leaves
// out, in blocks past its own: those whose last grid coordinate is at least
// `mb` (the march's blocks along it). One launch a step instead of two: the
// second kernel and the gap before it cost 10-15 % of a step at 256³ and
// 4097² on an H100 (ncu: march 44.4 µs, faces 4.3 µs, step 53.5 µs at 256³).
// The face blocks come last, into the march's tail. Their thread t counts
// blocks x first, then y, then the face slices.
__device__ __forceinline__ int face_thread(int mb_dim_index, int mb) {
  const int slice = mb_dim_index - mb;
  return ((slice * int(gridDim.y) + int(blockIdx.y)) * int(gridDim.x) + int(blockIdx.x)) *
             int(blockDim.x * blockDim.y) +
         int(threadIdx.y * blockDim.x + threadIdx.x);
}

// The block along the march (its z chunk in 3D, its group of rows in 2D)
// that a march block makes: its own index b of the n there, or, going
// `down`, the mirror one (n − 1 − b). Blocks are dispatched about in the
// order of their index, so a step that goes down starts on the planes that
// the step before it (going up) wrote last, and a good part of them is
// still in L2 (march_down, kernels/device.hpp). The 2D marches (the core
// of a split step too) mirror only their row groups: a thread walks its
// 2-4 rows up either way.
__device__ __forceinline__ int march_block(int b, int n, bool down) {
  return down ? n - 1 - b : b;
}

// Where a thread of a 3D march starts (first point i0 of its piece, row j)
// and the end of the pieces its kind of block covers (i_end): a march
// block's thread by its block and thread index (pieces below tl.first when
// there is a tail), a tail block's (blockIdx.y ≥ tl.my) by its place among
// the tail's threads, RY rows a thread.
struct MarchSpot {
  int i0, j, i_end;
  bool pad;  // XSides::store's: a march block's thread (a tail's pad has a thread of its own)
};
template <bool RANGED, int W, int RY>
__device__ __forceinline__ MarchSpot march_spot(const MarchRange& rg, const MarchTail& tl, int nx) {
  if constexpr (!RANGED)
    if (int(blockIdx.y) >= tl.my) {
      const int t = ((int(blockIdx.y) - tl.my) * int(gridDim.x) + int(blockIdx.x)) *
                        int(blockDim.x * blockDim.y) +
                    int(threadIdx.y * blockDim.x + threadIdx.x);
      return {W * (tl.first + t % tl.pieces), 1 + RY * (t / tl.pieces), 1 << 30, false};
    }
  return {(RANGED ? rg.i_lo : 0) + W * int(blockIdx.x * blockDim.x + threadIdx.x),
          (RANGED ? rg.j_lo : 1) + RY * int(blockIdx.y * blockDim.y + threadIdx.y),
          RANGED ? rg.i_hi : tl.pieces ? W * tl.first : nx, tl.pad};
}

// Off the y and z faces, vectorised in x: each thread owns W = 16/sizeof(T)
// consecutive points of a row and moves them with 16-byte loads and stores;
// it marches along z over kchunk planes (up, or DOWN: star_goes_down) with
// the z − 1, z, z + 1 vectors in registers, so each value comes from memory
// about once (the y neighbours come through L1); x neighbours and x faces
// as XSides says. Needs rows of whole 16-byte vectors (nx % W == 0, or
// PARTIAL in padded rows), 16-byte aligned fields and fewer than 2³¹ values.
template <class Op, class T, int MINB, bool RANGED = false, bool PARTIAL = false, bool AHEAD = false,
          bool DOWN = false>
__global__ void __launch_bounds__(256, MINB) march3d_star(Op op, const T* __restrict__ in,
                                                          T* __restrict__ out, Layout l,
                                                          int kchunk, MarchRange rg = {},
                                                          int mz = 1 << 30, bool late = false,
                                                          MarchTail tl = {}) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  pdl_begin(late);
  if constexpr (!RANGED && faces_in_march<Op>)
    if (int(blockIdx.z) >= mz) {  // a face block
      face3d_point<Op, int>(op, in, out, l, face_thread(int(blockIdx.z), mz));
      return;
    }
  const int nx = int(l.n[0]), ny = int(l.n[1]), nz = int(l.n[2]);
  const int sy = int(l.sy), plane = int(l.sz);
  const MarchSpot at = march_spot<RANGED, W, 1>(rg, tl, nx);
  const int i0 = at.i0, j = at.j;
  if (i0 >= at.i_end || j >= (RANGED ? rg.j_hi : ny - 1)) return;
  const XSides<T, PARTIAL> xs(i0, nx, op.bc[0]);
  const int kb = (RANGED ? rg.k_lo : 1) +
                 march_block(int(blockIdx.z), min(mz, int(gridDim.z)), DOWN) * kchunk;
  const int kend = RANGED ? rg.k_hi : nz - 1;
  const int ke = kb + kchunk < kend ? kb + kchunk : kend;
  // Up from kb, or DOWN from ke − 1 (march_block), `step` to the plane
  // ahead: zb is the plane behind (z − 1 going up, z + 1 going down), za the
  // one ahead. (DOWN is a template parameter: as a kernel argument, its
  // selects took the float32 heat march past its 40 registers at 6 blocks
  // an SM, and it spilled; so did float32 Jacobi's with the index sums
  // written in + (idx ± step) rather than as here.)
  const int step = DOWN ? -plane : plane;
  int idx = l.index_as<int>(i0, j, DOWN ? ke - 1 : kb);
  V zb = *reinterpret_cast<const V*>(in + idx - step);
  V c = *reinterpret_cast<const V*>(in + idx);
  V zq;  // AHEAD (StarAhead): the plane ahead, loaded an iteration early
  if constexpr (AHEAD) zq = *reinterpret_cast<const V*>(in + (idx + step));
  for (int k = DOWN ? ke - 1 : kb; DOWN ? k >= kb : k < ke; k += DOWN ? -1 : 1, idx += step) {
    V za;
    if constexpr (AHEAD) {
      za = zq;
      if (DOWN ? k > kb : k + 1 < ke) zq = *reinterpret_cast<const V*>(in + (idx + 2 * step));
    } else {
      za = *reinterpret_cast<const V*>(in + idx + step);
    }
    const V ym = *reinterpret_cast<const V*>(in + idx - sy);
    const V yp = *reinterpret_cast<const V*>(in + idx + sy);
    const T left = xs.left(in, idx, op.bc[0]), right = xs.right(in, idx, op.bc[0]);
    const T* cs = reinterpret_cast<const T*>(&c);
    const T* zms = reinterpret_cast<const T*>(DOWN ? &za : &zb);
    const T* zps = reinterpret_cast<const T*>(DOWN ? &zb : &za);
    const T* yms = reinterpret_cast<const T*>(&ym);
    const T* yps = reinterpret_cast<const T*>(&yp);
    V r;
    T* rs = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const T m[3] = {e > 0 ? cs[e - 1] : left, yms[e], zms[e]};
      const T p[3] = {xs.next(cs, e, right), yps[e], zps[e]};
      rs[e] = op.interior(cs[e], m, p, idx + e);
    }
    xs.hold(rs, cs, nx, op.bc[0]);
    xs.store(out + idx, r, nx, sy, at.pad);
    zb = c;
    c = za;
  }
  pdl_end(late);
}

// The values of one row's 3 taps for point e of a thread's piece (dx = −1,
// 0, 1), from the row piece and its x neighbours.
template <class T, bool PARTIAL>
__device__ __forceinline__ void row_taps(const RowPiece<T>& row, const XSides<T, PARTIAL>& xs,
                                         int e, T* v) {
  const T* rs = reinterpret_cast<const T*>(&row.v);
  v[0] = e > 0 ? rs[e - 1] : row.l;
  v[1] = rs[e];
  v[2] = xs.next(rs, e, row.r);
}

// One plane's (3D) or row's (2D) taps v added to the running sums of a box
// point: group 0 to acc_n (from zero); with ng ≥ 2, group 1 to acc_c (from
// acc_n); with ng = 3, group 2 to res (from acc_c), which is then whole.
template <class Op, class T>
__device__ __forceinline__ void roll_box_sums(const Op& op, const T* v, int ng, T& acc_c,
                                              T& acc_n, T* res) {
  if (ng == 3) *res = op.group(acc_c, 2, v);
  if (ng >= 2) acc_c = op.group(acc_n, 1, v);
  acc_n = op.group(T(0), 0, v);
}

// The box march (the 3^3 box, for operators with diagonal taps): as
// march3d_star, but a plane's taps are added as the plane arrives. The sum
// of the 27 taps of point z runs over plane z − 1, then z, then z + 1 (tap
// order), so plane z' adds its taps of group 0 (dz = −1) to point z' + 1's
// sum, group 1 to point z''s and group 2 to point z' − 1's, which is then
// whole: a thread holds one plane's rows and two running sums a point (not
// three planes: the march ran at 2 blocks of 256 per SM then, 0.60 of copy
// bandwidth at 512³ on an H100). op.group(acc, g, v) adds the 9 taps of
// group g, op.finish(u, sum) makes the point. A thread makes RY rows (1 or
// 2) of its x piece and loads RY + 2 rows a plane. PFD > 0: each thread asks
// L2 for its rows of the plane PFD planes ahead.
template <class Op, class T, int MINB, bool RANGED = false, int RY = 1, int PFD = 0,
          bool PARTIAL = false>
__global__ void __launch_bounds__(256, MINB) march3d_box(Op op, const T* __restrict__ in,
                                                         T* __restrict__ out, Layout l,
                                                         int kchunk, MarchRange rg = {},
                                                         int mz = 1 << 30, bool late = false,
                                                         MarchTail tl = {}) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  pdl_begin(late);
  if constexpr (!RANGED && faces_in_march<Op>)
    if (int(blockIdx.z) >= mz) {  // a face block
      face3d_point<Op, int>(op, in, out, l, face_thread(int(blockIdx.z), mz));
      return;
    }
  constexpr int NR = RY + 2;  // rows loaded a plane
  const int nx = int(l.n[0]), ny = int(l.n[1]), nz = int(l.n[2]);
  const int sy = int(l.sy), plane = int(l.sz);
  const MarchSpot at = march_spot<RANGED, W, RY>(rg, tl, nx);
  const int i0 = at.i0, j = at.j;
  const int jend = RANGED ? rg.j_hi : ny - 1;
  if (i0 >= at.i_end || j >= jend) return;
  const XSides<T, PARTIAL> xs(i0, nx, op.bc[0]);
  const int kb = (RANGED ? rg.k_lo : 1) + int(blockIdx.z) * kchunk;
  const int kend = RANGED ? rg.k_hi : nz - 1;
  const int ke = kb + kchunk < kend ? kb + kchunk : kend;
  if (kb >= ke) return;
  const int nr = jend - j < RY ? jend - j : RY;  // rows this thread makes
  int idx = l.index_as<int>(i0, j, kb);
  RowPiece<T> p[NR];
  const auto load = [&](int at) {
#pragma unroll
    for (int dy = 0; dy < NR; ++dy)  // rows past the last one made repeat it (in the array)
      load_piece(p[dy], xs, in, at + (dy - 1 < nr ? dy - 1 : nr) * sy, op.bc[0]);
  };
  T acc_c[RY][W], acc_n[RY][W];
  // adds the plane's taps to the sums (roll_box_sums)
  const auto add = [&](int ng, T (*res)[W]) {
#pragma unroll
    for (int y = 0; y < RY; ++y)
#pragma unroll
      for (int e = 0; e < W; ++e) {
        T v[9];  // tap order: dy, then dx
#pragma unroll
        for (int dy = 0; dy < 3; ++dy) row_taps(p[y + dy], xs, e, v + 3 * dy);
        roll_box_sums(op, v, ng, acc_c[y][e], acc_n[y][e], ng == 3 ? &res[y][e] : nullptr);
      }
  };
  load(idx - plane);
  add(1, nullptr);  // plane kb − 1: group 0 of plane kb's points
  load(idx);
  add(2, nullptr);  // plane kb: group 1 of kb, group 0 of kb + 1
  V cprev[RY];
#pragma unroll
  for (int y = 0; y < RY; ++y) cprev[y] = p[y + 1].v;
  for (int k = kb; k < ke; ++k, idx += plane) {
    if constexpr (PFD > 0)
      if (k + PFD < ke) {
#pragma unroll
        for (int y = 0; y < RY; ++y) prefetch_l2(in + idx + (PFD + 1) * plane + y * sy);
      }
    load(idx + plane);
    T sum[RY][W];
    add(3, sum);
#pragma unroll
    for (int y = 0; y < RY; ++y) {
      V r;
      T* rs = reinterpret_cast<T*>(&r);
      const T* cs = reinterpret_cast<const T*>(&cprev[y]);
#pragma unroll
      for (int e = 0; e < W; ++e) rs[e] = op.finish(cs[e], sum[y][e]);
      xs.hold(rs, cs, nx, op.bc[0]);
      if (y < nr) xs.store(out + idx + y * sy, r, nx, sy, at.pad);
      cprev[y] = p[y + 1].v;
    }
  }
  pdl_end(late);
}

// The y and z faces alone, one thread a point (face3d_point): beside the
// generic interior kernels, and where a march's face blocks would not fit
// the grid's z limit.
template <class Op, class I>
__global__ void __launch_bounds__(256) faces3d(Op op, const typename Op::value_type* __restrict__ in,
                                               typename Op::value_type* __restrict__ out,
                                               Layout l) {
  face3d_point<Op, I>(op, in, out, l, I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x));
  pdl_wait();  // launched after a march that took the dependent launch: done with it
}

// 2D, vectorised in x and marching along y over kc rows (rows 1 to ny − 2),
// x neighbours and x faces as XSides says; each row is loaded one row ahead
// of its use, so that its latency is spent on the row before (2-5 % on an
// H100 at 16384² for every 2D march, float32 and float64). A star keeps rows
// j − 1, j and j + 1; a box (BOX: op.group, op.finish, as the 3D box march
// with rows for planes) adds a row's taps as it arrives, to the sums of rows
// j + 1 (group 0), j (group 1) and j − 1 (group 2). Needs rows of whole
// vectors (nx % W == 0, or PARTIAL), aligned fields and fewer than 2³¹
// values. (The first one-thread-per-point kernels ran a 16384² float32
// Jacobi sweep at 0.27 of copy bandwidth on an H200, the first march 0.84.)
template <bool BOX, class Op, class T, bool RANGED = false, bool PARTIAL = false>
__global__ void __launch_bounds__(256) march2d(Op op, const T* __restrict__ in,
                                               T* __restrict__ out, Layout l, int kc,
                                               MarchRange rg = {}, int my = 1 << 30,
                                               bool late = false, bool pad = true,
                                               bool down = false) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  pdl_begin(late);
  if constexpr (!RANGED && faces_in_march<Op>)
    if (int(blockIdx.y) >= my) {  // an end-row block
      const int t = (int(blockIdx.y) - my) * int(gridDim.x) + int(blockIdx.x);
      row2d_point(op, in, out, l, t * 256 + int(threadIdx.y * blockDim.x + threadIdx.x));
      return;
    }
  const int nx = int(l.n[0]), ny = int(l.n[1]), sy = int(l.sy);
  const int i0 = (RANGED ? rg.i_lo : 0) + W * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int by = march_block(int(blockIdx.y), min(my, int(gridDim.y)), down);
  const int jb = (RANGED ? rg.j_lo : 1) + (by * int(blockDim.y) + int(threadIdx.y)) * kc;
  const int jend = RANGED ? rg.j_hi : ny - 1;
  if (i0 >= (RANGED ? rg.i_hi : nx) || jb >= jend) return;
  const XSides<T, PARTIAL> xs(i0, nx, op.bc[0]);
  const int je = min(jb + kc, jend);
  int idx = l.index_as<int>(i0, jb, 0);
  RowPiece<T> cur, next;  // row j (BOX: the row being added); row j + 1, loaded ahead
  if constexpr (BOX) {
    T acc_c[W], acc_n[W];
    const auto add = [&](const RowPiece<T>& p, int ng, T* res) {
#pragma unroll
      for (int e = 0; e < W; ++e) {
        T v[3];
        row_taps(p, xs, e, v);
        roll_box_sums(op, v, ng, acc_c[e], acc_n[e], ng == 3 ? res + e : nullptr);
      }
    };
    load_piece(cur, xs, in, idx - sy, op.bc[0]);
    add(cur, 1, nullptr);
    load_piece(cur, xs, in, idx, op.bc[0]);
    add(cur, 2, nullptr);
    V cprev = cur.v;
    load_piece(next, xs, in, idx + sy, op.bc[0]);
    for (int j = jb; j < je; ++j, idx += sy) {
      cur = next;
      if (j + 1 < je) load_piece(next, xs, in, idx + 2 * sy, op.bc[0]);
      V r;
      T* rs = reinterpret_cast<T*>(&r);
      T sum[W];
      add(cur, 3, sum);
      const T* cs = reinterpret_cast<const T*>(&cprev);
#pragma unroll
      for (int e = 0; e < W; ++e) rs[e] = op.finish(cs[e], sum[e]);
      xs.hold(rs, cs, nx, op.bc[0]);
      xs.store(out + idx, r, nx, sy, pad);
      cprev = cur.v;
    }
  } else {
    V ym = *reinterpret_cast<const V*>(in + idx - sy);
    load_piece(cur, xs, in, idx, op.bc[0]);
    load_piece(next, xs, in, idx + sy, op.bc[0]);
    for (int j = jb; j < je; ++j, idx += sy) {
      const RowPiece<T> yp = next;
      if (j + 1 < je) load_piece(next, xs, in, idx + 2 * sy, op.bc[0]);
      const T* cs = reinterpret_cast<const T*>(&cur.v);
      const T* yms = reinterpret_cast<const T*>(&ym);
      const T* yps = reinterpret_cast<const T*>(&yp.v);
      V r;
      T* rs = reinterpret_cast<T*>(&r);
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const T m[2] = {e > 0 ? cs[e - 1] : cur.l, yms[e]};
        const T p[2] = {xs.next(cs, e, cur.r), yps[e]};
        rs[e] = op.interior(cs[e], m, p, idx + e);
      }
      xs.hold(rs, cs, nx, op.bc[0]);
      xs.store(out + idx, r, nx, sy, pad);
      ym = cur.v;
      cur = yp;
    }
  }
  pdl_end(late);
}

inline unsigned march_blocks(std::int64_t n, unsigned b) { return unsigned((n + b - 1) / b); }

// True when rows of a field are whole 16-byte vectors (nx a multiple of W,
// or rows padded to one: the last piece of a row is then PARTIAL) and start
// on 16-byte boundaries, and its values fit 32-bit indices: what the
// vectorised marches need.
template <class T>
bool vector_rows(const FieldView<const T>& in, const FieldView<T>& out) {
  constexpr int W = Vec16<T>::n;
  return in.sy % W == 0 && in.sz % W == 0 && in.same_as(out) &&
         in.span() < (std::int64_t(1) << 31) &&
         reinterpret_cast<std::uintptr_t>(in.p) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out.p) % 16 == 0;
}

// True when a 3D field can take the vectorised marches.
// (The grid's last coordinate holds the march's z chunks, at least 4
// planes each, and the faces' blocks: at most 65535. The face slice counted
// as its smallest, at two rows a thread.)
template <class T>
bool march3d_fits(const FieldView<const T>& in, const FieldView<T>& out) {
  if (!(vector_rows(in, out) && in.n[1] >= 3 && in.n[2] >= 3)) return false;
  constexpr std::int64_t W = Vec16<T>::n;
  const std::int64_t pieces = (in.n[0] + W - 1) / W;
  // threads a slice of the march holds, at least (every piece of every
  // row, two rows a thread at most, whatever the blocks' shape)
  const std::int64_t slice = std::max<std::int64_t>(1, pieces * ((in.n[1] - 2 + 1) / 2));
  const std::int64_t nx = in.n[0], ny = in.n[1], nz = in.n[2];
  const std::int64_t faces = 2 * nx * (nz + ny - 2);
  return (nz - 2 + 3) / 4 + (faces + slice - 1) / slice <= 65535;
}

// True when a 2D field can take the vectorised march.
// (The grid's y holds the march's row chunks, 32 rows each, and the end
// rows' blocks: at most 65535.)
template <class T>
bool march2d_fits(const FieldView<const T>& in, const FieldView<T>& out) {
  return vector_rows(in, out) && in.n[1] >= 2 && (in.n[1] - 2 + 31) / 32 + 2 <= 65535;
}

// One 2D step: the march over rows 1 to ny − 2, then rows 0 and ny − 1.
// Rows a thread marches over: on an H100 at 16384², 4 rows ran every 2D
// march at 0.97–0.99 of copy bandwidth (Jacobi float64 0.92), 8 rows at
// 0.88–0.94 and 16 at 0.88–0.90. Below 2^26 points (8192²) 2 rows were
// ahead (same H100, float32, fraction of copy, 4 rows against 2: heat
// 3001×2999 0.90 / 0.92, 4097² 0.94 / 0.96; star5 0.85 / 0.87, 0.91 / 0.93;
// Jacobi 0.85 / 0.88, 0.91 / 0.92; wave 0.88 / 0.91, 0.92 / 0.94; 8191²
// level), and fewer still where the grid would leave the device idle
// (wave_chunk: 1025², 0.70-0.77 with 4 rows, 0.77-0.84 with 2).
constexpr int kMarch2dRows = 4;
constexpr std::int64_t kMarch2dRowsFrom = std::int64_t(1) << 26;  // points; 2 rows below

// The 2D march over the rows of range r (inside its reach); RANGED: only r,
// else the whole reach.
// Rows 0 and ny − 1 of a 2D grid alone (row2d_point), for ops whose faces
// stay apart.
template <class Op>
__global__ void __launch_bounds__(256) rows2d(Op op, const typename Op::value_type* __restrict__ in,
                                              typename Op::value_type* __restrict__ out,
                                              Layout l) {
  row2d_point(op, in, out, l, int(blockIdx.x * blockDim.x + threadIdx.x));
  pdl_wait();  // as faces3d
}

template <bool BOX, bool RANGED, class Op>
void run_march2d(const Op& op, const FieldView<const typename Op::value_type>& in,
                 const FieldView<typename Op::value_type>& out, const MarchRange& r,
                 cudaStream_t s) {
  using T = typename Op::value_type;
  constexpr int W = Vec16<T>::n;
  const unsigned gx = march_blocks((r.i_hi - r.i_lo + W - 1) / W, 32);
  const int groups = int(march_blocks(r.j_hi - r.j_lo, 8));  // rows of the blocks' 8 threads
  const Layout& l = in;
  const Pdl dep = pdl_for(in.n[0] * in.n[1] * in.n[2] * std::int64_t(sizeof(T)));
  const auto go = [&](auto kernel) {
    // rows a thread: kMarch2dRows, fewer where that leaves most of the device idle
    int kc = gpu_march_chunk();
    const int most = in.n[0] * in.n[1] >= kMarch2dRowsFrom ? kMarch2dRows : 2;
    if (kc == 0) kc = wave_chunk(gx, groups, most, 2, resident_blocks(kernel, 256));
    kc = std::max(kc, (groups + 65532) / 65533);  // the grid's y limit, the end rows' blocks beside
    dim3 grid(gx, march_blocks(r.j_hi - r.j_lo, 8 * kc));
    int my = 1 << 30;
    if constexpr (!RANGED && faces_in_march<Op>) {  // the end rows' blocks after the march's
      my = int(grid.y);
      grid.y += march_blocks(2 * in.n[0], grid.x * 256);
    }
    if (grid.y == 0) return;
    launch_pdl(kernel, grid, dim3(32, 8), s, dep, op, in.p, out.p, l, kc, r, my,
               dep == Pdl::Late, gpu_pad_store(), march_down(in.p, out.p));
  };
  if (!RANGED && in.n[0] % W != 0)  // rows end in a partial piece
    go(march2d<BOX, Op, T, RANGED, true>);
  else
    go(march2d<BOX, Op, T, RANGED>);
}

// One 2D step: the march over rows 1 to ny − 2 and rows 0 and ny − 1, in one
// launch (the end rows' blocks come last) unless the op's faces stay apart.
template <bool BOX, class Op>
void launch_march2d(const Op& op, const FieldView<const typename Op::value_type>& in,
                    const FieldView<typename Op::value_type>& out, cudaStream_t s) {
  const int nx = int(in.n[0]), ny = int(in.n[1]);
  run_march2d<BOX, false>(op, in, out, MarchRange{0, nx, 1, ny - 1, 0, 1}, s);
  if constexpr (!faces_in_march<Op>)
    launch_pdl(rows2d<Op>, dim3(march_blocks(2 * std::int64_t(nx), 256)), dim3(256), s,
               ny > 2 ? pdl_for(std::int64_t(nx) * ny * std::int64_t(sizeof(typename Op::value_type)))
                      : Pdl::Off,
               op, in.p, out.p, Layout(in));
}

// The y and z faces of a 3D grid.
template <class Op>
void launch_faces3d(const Op& op, const FieldView<const typename Op::value_type>& in,
                    const FieldView<typename Op::value_type>& out, cudaStream_t s,
                    Pdl dependent = Pdl::Off) {
  const std::int64_t nx = in.n[0], ny = in.n[1], nz = in.n[2];
  const std::int64_t faces = 2 * nx * (nz + std::max<std::int64_t>(0, ny - 2));
  if (faces == 0) return;
  const Layout& l = in;
  const dim3 g(march_blocks(faces, 256));
  if (in.span() < (std::int64_t(1) << 31))
    launch_pdl(faces3d<Op, int>, g, dim3(256), s, dependent, op, in.p, out.p, l);
  else
    launch_pdl(faces3d<Op, std::int64_t>, g, dim3(256), s, dependent, op, in.p, out.p, l);
}

// How the 3D marches run, by precision (an H100 at 512³, bench --repeat 3):
// kc planes a thread (z chunk); the box march's rows a thread (RY), L2
// prefetch distance (PFD); blocks an SM from the op (the box ops: 4, 64
// registers without spills). Box float32: RY 2, kc 4, PFD 1 ran at 0.95 of
// copy bandwidth (RY 1 kc 8 PFD 1: 0.92); float64: RY 1, kc 8, PFD 2 at 0.97
// (PFD 1: 0.96). docs/performance.md has the table.
template <bool BOX, class T>
struct March3dShape {
  static constexpr bool f32 = sizeof(T) == 4;
  static constexpr int kc = f32 ? 4 : 8;
  static constexpr int ry = BOX && f32 ? 2 : 1;
  static constexpr int pfd = BOX ? (f32 ? 1 : 2) : 0;
};

// Pieces a block across a row of `pieces`: 32 (blocks of 32 × 8 threads,
// or 32 × 8 × RY rows for the box march), or with GRIDFORGE_MARCH_PIECES=row
// as wide as the row needs (the fewest blocks of at most 32 pieces: 129
// pieces, 513 points, take 5 blocks of 26 pieces by 9 rows, not 5 of 32
// with 31 threads of the last idle; the pde march's float32 rule). Measured
// on an H100 (float32, fraction of copy, 32 against row): heat 257³ 0.83 /
// 0.79, 513³ 0.92 / 0.89, 320×200×100 0.97 / 0.94; Jacobi 257×129×65 0.75 /
// 0.84; float64 513³ 0.94 / 0.90: 32 stays. A block is 256 / P rows of P
// pieces, its warps across rows.
template <class T>
int march_pieces(int pieces) {
  if (gpu_march_pieces() != -1 || pieces <= 0) return 32;
  const int bx = (pieces + 31) / 32;
  return (pieces + bx - 1) / bx;
}

// The march over the points of range r (inside its reach), with the shape
// above; RANGED: only r (the core of a split step), else the whole reach.
// Planes a thread: S::kc, fewer where a grid of a few MiB would leave most
// of the device idle (wave_chunk), or GRIDFORGE_MARCH_CHUNK. (H100, float32:
// within ±0.01 of S::kc at every size from 256×64×64 to 513³ but the wave
// step at 256×64×64, 0.83 against 0.80; 1 or 2 planes everywhere lost up to
// 0.17, e.g. heat 320×200×100 0.81 / 0.86 against 0.98.)
template <bool BOX, bool RANGED, class Op>
void run_march3d(const Op& op, const FieldView<const typename Op::value_type>& in,
                 const FieldView<typename Op::value_type>& out, const MarchRange& r,
                 cudaStream_t s) {
  using T = typename Op::value_type;
  using S = March3dShape<BOX, T>;
  constexpr int W = Vec16<T>::n;
  const int pieces = (r.i_hi - r.i_lo + W - 1) / W;
  const int P = march_pieces<T>(pieces), R = 256 / P, threads = P * R;
  const int planes = r.k_hi - r.k_lo;
  const int groups = (r.j_hi - r.j_lo + S::ry - 1) / S::ry;  // rows a thread makes: S::ry
  MarchTail tl;
  tl.pad = gpu_pad_store();
  dim3 g(march_blocks(pieces, unsigned(P)), march_blocks(groups, unsigned(R)));
  bool pad_piece = false;  // a tail thread past the row (all padding): a PARTIAL march
  if (!RANGED && TailInMarch<Op>::value && P == 32 && pieces > P &&
      pieces % P <= gpu_march_tail()) {
    const int rem = pieces % P;
    // the padding piece past a last piece that begins a 32-byte sector
    pad_piece = tl.pad && (pieces - 1) % 2 == 0 && (in.sy * std::int64_t(sizeof(T))) % 32 == 0 &&
                std::int64_t(pieces + 1) * W <= in.sy &&
                reinterpret_cast<std::uintptr_t>(out.p) % 32 == 0;
    const int tp = rem + (pad_piece ? 1 : 0);
    const unsigned gx = march_blocks(pieces - rem, unsigned(P));
    const unsigned ty = march_blocks(std::int64_t(tp) * groups, gx * unsigned(threads));
    if (rem > 0 && g.y + ty <= 65535) {
      tl.first = pieces - rem, tl.pieces = tp, tl.my = int(g.y);
      g.x = gx;
      g.y += ty;
    } else {
      pad_piece = false;
    }
  }
  long long face_slices = 0;
  if constexpr (!RANGED && faces_in_march<Op>) {  // the faces' blocks after the march's
    const std::int64_t nx = in.n[0], ny = in.n[1], nz = in.n[2];
    face_slices = march_blocks(2 * nx * (nz + ny - 2), g.x * g.y * unsigned(threads));
  }
  const Pdl dep = pdl_for(in.n[0] * in.n[1] * in.n[2] * std::int64_t(sizeof(T)));
  const Layout& l = in;
  const auto go = [&](auto kernel) {
    int kc = gpu_march_chunk();
    if (kc == 0)
      kc = wave_chunk(std::int64_t(g.x) * g.y, planes, S::kc, 2, resident_blocks(kernel, threads));
    const long long room = 65535 - face_slices;  // the grid's z limit (march3d_fits)
    kc = int(std::max<long long>(std::min(kc, planes), (planes + room - 1) / room));
    dim3 gz = g;
    gz.z = march_blocks(planes, unsigned(kc));
    const int mz = face_slices ? int(gz.z) : 1 << 30;
    gz.z += unsigned(face_slices);
    launch_pdl(kernel, gz, dim3(unsigned(P), unsigned(R)), s, dep, op, in.p, out.p, l, kc, r, mz,
               dep == Pdl::Late, tl);
  };
  const auto pick = [&](auto partial) {
    constexpr bool PT = decltype(partial)::value;
    // The box march always goes up (not measured going down: its planes cannot
    // be walked down, its sums run over them in tap order).
    if constexpr (BOX) {
      go(march3d_box<Op, T, Op::min_blocks, RANGED, S::ry, S::pfd, PT>);
    } else {
      constexpr int MB = StarMinBlocks<Op, PT>::value;
      constexpr bool AH = StarAhead<Op, PT>::value;
      if constexpr (!RANGED)  // (the core of a split step, over MPI ranks, always up in 3D)
        if (star_goes_down<Op>(in.p, out.p, in.span() * std::int64_t(sizeof(T))))
          return go(march3d_star<Op, T, MB, RANGED, PT, AH, true>);
      go(march3d_star<Op, T, MB, RANGED, PT, AH>);
    }
  };
  if (!RANGED && (in.n[0] % W != 0 || pad_piece))  // rows end in a partial piece
    pick(std::true_type{});
  else
    pick(std::false_type{});
}

// One step through a march (BOX: march3d_box, else march3d_star) with the
// faces in the same launch (or, faces_apart, the faces kernel after it); the
// caller has checked march3d_fits.
template <bool BOX, class Op>
void launch_march3d(const Op& op, const FieldView<const typename Op::value_type>& in,
                    const FieldView<typename Op::value_type>& out, cudaStream_t s) {
  const MarchRange all{0, int(in.n[0]), 1, int(in.n[1]) - 1, 1, int(in.n[2]) - 1};
  run_march3d<BOX, false>(op, in, out, all, s);
  if constexpr (!faces_in_march<Op>)
    launch_faces3d(op, in, out, s,
                   pdl_for(in.n[0] * in.n[1] * in.n[2] *
                            std::int64_t(sizeof(typename Op::value_type))));
}

// The march alone over range r (non-empty, inside its reach; no faces
// kernel): the core of a split step (part_kernels.cuh), in the same shape.
template <bool BOX, class Op>
void launch_march3d_range(const Op& op, const FieldView<const typename Op::value_type>& in,
                          const FieldView<typename Op::value_type>& out, const MarchRange& r,
                          cudaStream_t s) {
  run_march3d<BOX, true>(op, in, out, r, s);
}

// The 2D march alone over range r (rows j_lo..j_hi − 1; no row kernel).
template <bool BOX, class Op>
void launch_march2d_range(const Op& op, const FieldView<const typename Op::value_type>& in,
                          const FieldView<typename Op::value_type>& out, const MarchRange& r,
                          cudaStream_t s) {
  run_march2d<BOX, true>(op, in, out, r, s);
}

}  // namespace gf
