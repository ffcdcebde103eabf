// Generic stencil kernels. The taps live in constant memory in a layout of
// the GPU's own (DeviceTap): every thread of a block reads the same tap at
// the same time, which the constant cache broadcasts.
//
// 2D and 3D grids of fewer than 2³¹ points go through the tiled kernels,
// which cover every point of the grid: a block copies its tile with a halo of
// R points into shared memory, halo values beyond a face coming from the
// boundary rules (value_at, the formula stencil_point_bc uses), so points
// near a face need no kernel of their own. 1D grids and larger ones take
// one thread per point: interior points by linear offsets, the points within
// the radius of a face (the shell) through stencil_point_bc.
#pragma once
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/march_kernels.cuh"
#include "kernels/stencil/stencil_ops.hpp"

namespace gf {

// The shape of a tiled kernel's block. A block owns TX × OY points of an x-y
// plane (in 3D, over a run of z planes); each of its TX × TY threads sums
// the taps for PPT points of one column, so a tap's weight and offset, read
// once, serve PPT points.
template <class T, int R, int D>
struct StencilTile {
  static constexpr int TX = 32, TY = 4;                   // threads per block: TX × TY
  static constexpr int PPT = (D == 2 || R <= 2) ? 8 : 4;  // points per thread, along y
  static constexpr int OY = TY * PPT;                     // tile rows
  static constexpr int L = 16 / sizeof(T);                // values per 16-byte copy
  // Tile rows start XL ≥ R points left of the block's first point, rounded
  // to whole 16-byte pieces, so that pieces of a row are aligned when rows are.
  static constexpr int XL = (R + L - 1) / L * L;
  static constexpr int W = XL + TX + XL, H = OY + 2 * R;  // a plane of the tile, halo included
  static constexpr int PS = W * H;
  static constexpr int DEPTH = 2;                           // planes loaded ahead (3D)
  static constexpr int P = D == 3 ? 2 * R + 1 + DEPTH : 1;  // planes held: a ring
  static constexpr std::size_t smem_bytes = std::size_t(P) * PS * sizeof(T);
  // blocks per SM to size registers for: what shared memory allows, at most 8
  static constexpr int MIN_BLOCKS =
      std::min<int>(8, std::max<int>(1, int(227 * 1024 / (smem_bytes + 1024))));
};
constexpr int kMaxRingPlanes = 2 * 4 + 1 + 2;

// One tap as the GPU reads it: the weight, the offset, and its offset in a
// tile of the radius' tiled kernels: off2 in 2D, off3[ph] in 3D when the
// block's march is at phase ph of its ring (so that a tap costs two
// block-uniform constant loads, then one shared load and one FMA per point).
template <class T>
struct DeviceTap {
  T w;
  std::int16_t off2;
  std::int16_t off3[kMaxRingPlanes];
  std::int8_t d[3];
};

__constant__ DeviceTap<float> c_taps_f[kMaxStencilTaps];
__constant__ DeviceTap<double> c_taps_d[kMaxStencilTaps];

// Tap t, read from the constant bank itself (a pointer to it would turn the
// reads into generic loads, one pair per tap per thread).
template <class T>
__device__ __forceinline__ const DeviceTap<T>& tap(int t) {
  if constexpr (sizeof(T) == 4) return c_taps_f[t];
  else return c_taps_d[t];
}
template <class T>
__device__ __forceinline__ const DeviceTap<T>* const_taps() {
  if constexpr (sizeof(T) == 4) return c_taps_f;
  else return c_taps_d;
}

template <class T, int R>
void tile_offsets(DeviceTap<T>& t) {
  using S2 = StencilTile<T, R, 2>;
  using S3 = StencilTile<T, R, 3>;
  static_assert(S2::W == S3::W && S3::P <= kMaxRingPlanes && S3::P * S3::PS < 32768);
  t.off2 = static_cast<std::int16_t>(t.d[1] * S2::W + t.d[0]);
  for (int ph = 0; ph < kMaxRingPlanes; ++ph)
    t.off3[ph] = static_cast<std::int16_t>(((ph + R + t.d[2]) % S3::P) * S3::PS +
                                           t.d[1] * S3::W + t.d[0]);
}

// Uploads the taps; returns the radius the tiled kernels are to run with
// (the largest offset, at least 1), for which their offsets were computed.
template <class T>
int upload_stencil_taps(const std::vector<StencilTap<T>>& taps, cudaStream_t s) {
  if (taps.size() > std::size_t(kMaxStencilTaps))
    throw DeviceError("a stencil of " + std::to_string(taps.size()) + " points is more than " +
                      std::to_string(kMaxStencilTaps));
  int r = 1;
  for (const auto& t : taps)
    for (int ax = 0; ax < 3; ++ax) r = std::max(r, std::abs(t.d[ax]));
  if (r > 4) throw DeviceError("a stencil of radius " + std::to_string(r) + " is wider than 4");
  std::vector<DeviceTap<T>> dev(taps.size());
  for (std::size_t k = 0; k < taps.size(); ++k) {
    DeviceTap<T>& t = dev[k];
    t = DeviceTap<T>{};
    t.w = taps[k].w;
    for (int ax = 0; ax < 3; ++ax) t.d[ax] = static_cast<std::int8_t>(taps[k].d[ax]);
    switch (r) {
      case 1: tile_offsets<T, 1>(t); break;
      case 2: tile_offsets<T, 2>(t); break;
      case 3: tile_offsets<T, 3>(t); break;
      default: tile_offsets<T, 4>(t); break;
    }
  }
  const void* sym = nullptr;
  if constexpr (sizeof(T) == 4) sym = static_cast<const void*>(&c_taps_f);
  else sym = static_cast<const void*>(&c_taps_d);
  GF_CUDA_CHECK(cudaMemcpyToSymbolAsync(sym, dev.data(), dev.size() * sizeof(DeviceTap<T>), 0,
                                        cudaMemcpyHostToDevice, s));
  // the staging vector goes out of scope: wait for the copy to read it
  GF_CUDA_CHECK(cudaStreamSynchronize(s));
  return r;
}

// A halo value through the boundary rules: out of line, as only tiles at a
// face need it and it would cost every tile registers; the grid is passed by
// value, so that the call needs no copy of the kernel's arguments in local
// memory.
template <int D, class T>
__device__ __noinline__ T stencil_halo_value(const T* __restrict__ in, Layout l, AxisBc<T> bx,
                                             AxisBc<T> by, AxisBc<T> bz, int x, int y, int z) {
  const AxisBc<T> bc[3] = {bx, by, bz};
  return value_at<0, D>(FieldView<const T>(in, l), bc, x, y, z);
}

// Starts the copy of plane z (in 3D; 0 in 2D) of a tile whose rows start at
// x = xs and whose first point row is y0, halo included, into `dst`: 16-byte
// cp.async pieces where VEC (rows of whole pieces, aligned), single values
// otherwise; values beyond a face come from the boundary rules (and values
// no point of the grid reaches, in partial tiles, are 0).
template <class T, int R, int D, bool VEC>
__device__ __forceinline__ void stencil_load_plane(T* dst, const StencilArgs<T>& a,
                                                   const T* __restrict__ in, const Layout& l,
                                                   int xs, int y0, int z) {
  using S = StencilTile<T, R, D>;
  constexpr int NT = S::TX * S::TY;
  constexpr int G = VEC ? S::L : 1;  // values per copy
  constexpr int PIECES = S::PS / G, ROW = S::W / G;
  const int nx = int(l.n[0]), ny = int(l.n[1]), nz = int(l.n[2]);
  const int tid = threadIdx.x + S::TX * threadIdx.y;
  const bool z_in = z >= 0 && z < nz;
  const bool z_reached = z >= -R && z < nz + R;
  const T* src = in + l.index(0, 0, z_in ? z : 0);
#pragma unroll
  for (int e0 = 0; e0 < PIECES; e0 += NT) {
    const int e = e0 + tid;
    if (e < PIECES) {
      const int row = e / ROW, col = (e - row * ROW) * G;
      const int gx = xs + col, gy = y0 - R + row;
      T* d = dst + row * S::W + col;
      if (z_in && gy >= 0 && gy < ny && gx >= 0 && gx + G <= nx) {
        __pipeline_memcpy_async(d, src + l.index(gx, gy), G * sizeof(T));
      } else {
#pragma unroll
        for (int q = 0; q < G; ++q) {
          const int x = gx + q;
          const bool reached = z_reached && x >= -R && x < nx + R && gy >= -R && gy < ny + R;
          d[q] = reached ? stencil_halo_value<D>(in, l, a.bc[0], a.bc[1], a.bc[2], x, gy, z)
                        : T(0);
        }
      }
    }
  }
}

// The taps' sums for the PPT points of this thread, `c` its first point in
// the tile; ph: the ring phase (3D) or -1 (2D).
template <class T, int R, int D>
__device__ __forceinline__ void stencil_sum_taps(const StencilArgs<T>& a, const T* ring, int c,
                                                 int ph, T (&acc)[StencilTile<T, R, D>::PPT]) {
  using S = StencilTile<T, R, D>;
#pragma unroll
  for (int k = 0; k < S::PPT; ++k) acc[k] = 0;
  for (int t = 0; t < a.ntaps; ++t) {
    const T w = tap<T>(t).w;
    const T* p = ring + c + (D == 2 ? tap<T>(t).off2 : tap<T>(t).off3[ph]);
#pragma unroll
    for (int k = 0; k < S::PPT; ++k) acc[k] += w * p[k * S::TY * S::W];
  }
}

// Writes this thread's points of plane z: Dirichlet face points keep their
// value, the others get the combined sum (stencil_point_bc's order).
template <class T, int R, int D>
__device__ __forceinline__ void stencil_store(const StencilArgs<T>& a, T* __restrict__ out,
                                              const Layout& l, const T* centre,
                                              const T (&acc)[StencilTile<T, R, D>::PPT], int i,
                                              int y0, int z) {
  using S = StencilTile<T, R, D>;
  const int nx = int(l.n[0]), ny = int(l.n[1]);
  if (i >= nx) return;
  const bool held_xz =
      on_dirichlet(i, nx, a.bc[0]) || (D == 3 && on_dirichlet(z, l.n[2], a.bc[2]));
#pragma unroll
  for (int k = 0; k < S::PPT; ++k) {
    const int j = y0 + int(threadIdx.y) + k * S::TY;
    if (j < ny) {
      const T u = centre[k * S::TY * S::W];
      const bool held = held_xz || on_dirichlet(j, ny, a.bc[1]);
      out[l.index(i, j, z)] = held ? u : stencil_combine(a, u, acc[k]);
    }
  }
}

template <class T, int R, bool VEC>
__global__ void __launch_bounds__(128) stencil2d_tiled(StencilArgs<T> a, const T* __restrict__ in,
                                                       T* __restrict__ out, Layout l) {
  using S = StencilTile<T, R, 2>;
  extern __shared__ __align__(16) unsigned char stencil_smem[];
  T* tile = reinterpret_cast<T*>(stencil_smem);
  const int x0 = int(blockIdx.x) * S::TX, y0 = int(blockIdx.y) * S::OY;
  stencil_load_plane<T, R, 2, VEC>(tile, a, in, l, x0 - S::XL, y0, 0);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  const int c = (threadIdx.y + R) * S::W + S::XL + threadIdx.x;
  T acc[S::PPT];
  stencil_sum_taps<T, R, 2>(a, tile, c, -1, acc);
  stencil_store<T, R, 2>(a, out, l, tile + c, acc, x0 + int(threadIdx.x), y0, 0);
}

// 3D: the block marches along z over kc planes from z0. Plane z0 − R + q
// lives in ring slot q mod P; a tap's offset for each slot phase is in its
// DeviceTap (off3), so the phase costs nothing per tap. Each plane's copy is one commit group, so
// waiting for all but the newest DEPTH − 1 groups means that the planes the
// next step needs have landed.
template <class T, int R, bool VEC>
__global__ void __launch_bounds__(128, (StencilTile<T, R, 3>::MIN_BLOCKS))
    stencil3d_tiled(StencilArgs<T> a, const T* __restrict__ in, T* __restrict__ out, Layout l,
                    int kc) {
  using S = StencilTile<T, R, 3>;
  extern __shared__ __align__(16) unsigned char stencil_smem[];
  T* ring = reinterpret_cast<T*>(stencil_smem);
  const int x0 = int(blockIdx.x) * S::TX, y0 = int(blockIdx.y) * S::OY;
  const int z0 = int(blockIdx.z) * kc;
  const int nzi = min(kc, int(l.n[2]) - z0);  // planes of output
  const int planes = nzi + 2 * R;             // planes to load
#pragma unroll 1
  for (int q = 0; q < 2 * R + S::DEPTH; ++q) {
    if (q < planes)
      stencil_load_plane<T, R, 3, VEC>(ring + q * S::PS, a, in, l, x0 - S::XL, y0, z0 - R + q);
    __pipeline_commit();
  }
  __pipeline_wait_prior(S::DEPTH - 1);
  __syncthreads();
  const int c = (threadIdx.y + R) * S::W + S::XL + threadIdx.x;
  const int i = x0 + int(threadIdx.x);
  int ph = 0;                       // zi mod P: the ring slot of plane z − R
  int fill = (2 * R + S::DEPTH) % S::P;  // the slot the next plane goes to
#pragma unroll 1
  for (int zi = 0; zi < nzi; ++zi) {
    // the slot being filled held plane z − R − 1, which no tap of z reaches
    // and which the previous step finished reading before its barrier
    const int q = zi + 2 * R + S::DEPTH;
    if (q < planes)
      stencil_load_plane<T, R, 3, VEC>(ring + fill * S::PS, a, in, l, x0 - S::XL, y0, z0 - R + q);
    __pipeline_commit();
    T acc[S::PPT];
    stencil_sum_taps<T, R, 3>(a, ring, c, ph, acc);
    const int centre = ph + R < S::P ? ph + R : ph + R - S::P;
    stencil_store<T, R, 3>(a, out, l, ring + centre * S::PS + c, acc, i, y0, z0 + zi);
    __pipeline_wait_prior(S::DEPTH - 1);
    __syncthreads();
    ph = ph + 1 == S::P ? 0 : ph + 1;
    fill = fill + 1 == S::P ? 0 : fill + 1;
  }
}

template <class T, int R, bool VEC>
void launch_tiled(const StencilArgs<T>& a, const FieldView<const T>& in, const FieldView<T>& out,
                  cudaStream_t s) {
  if (a.ndim == 2) {
    using S = StencilTile<T, R, 2>;
    const dim3 grid(unsigned((in.n[0] + S::TX - 1) / S::TX), unsigned((in.n[1] + S::OY - 1) / S::OY));
    stencil2d_tiled<T, R, VEC><<<grid, dim3(S::TX, S::TY), S::smem_bytes, s>>>(a, in.p, out.p, in);
    GF_CUDA_CHECK_LAUNCH();
    return;
  }
  using S = StencilTile<T, R, 3>;
  auto kernel = stencil3d_tiled<T, R, VEC>;
  if (S::smem_bytes > 48 * 1024)
    GF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(S::smem_bytes)));
  // Planes per block: long runs load the 2R extra planes of a run less
  // often, short ones leave fewer SMs idle at the end of the step (seen on an
  // H200 at 512³: runs of 128 planes, one wave of blocks, ran at half the
  // speed of runs of 32).
  const int kc = 32;
  const std::int64_t bx = (in.n[0] + S::TX - 1) / S::TX, by = (in.n[1] + S::OY - 1) / S::OY;
  const dim3 grid(unsigned(bx), unsigned(by), unsigned((in.n[2] + kc - 1) / kc));
  kernel<<<grid, dim3(S::TX, S::TY), S::smem_bytes, s>>>(a, in.p, out.p, in, kc);
  GF_CUDA_CHECK_LAUNCH();
}

template <class T, int R>
void launch_tiled_r(const StencilArgs<T>& a, const FieldView<const T>& in, const FieldView<T>& out,
                    cudaStream_t s) {
  // 16-byte copies need rows of whole 16-byte pieces from an aligned base
  constexpr std::int64_t L = 16 / sizeof(T);
  const bool vec = in.n[0] % L == 0 && in.sy % L == 0 && in.sz % L == 0 &&
                   reinterpret_cast<std::uintptr_t>(in.p) % 16 == 0;
  if (vec) launch_tiled<T, R, true>(a, in, out, s);
  else launch_tiled<T, R, false>(a, in, out, s);
}

// Interior points (every tap inside the grid), one thread each, taps straight
// from global memory (L1/L2 serve the reuse): for 1D grids and for grids of
// 2³¹ points and more, which the tiled kernels' 32-bit indices can't reach.
template <class T, class I>
__global__ void __launch_bounds__(256) stencil_interior_kernel(StencilArgs<T> a,
                                                               const T* __restrict__ in,
                                                               T* __restrict__ out, Layout l) {
  const I r = a.radius > 0 ? a.radius : 1;
  const I nx = I(l.n[0]), ny = I(l.n[1]);
  const I i = r + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I j = (a.ndim > 1 ? r : 0) + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y);
  const I k = (a.ndim > 2 ? r : 0) + I(blockIdx.z);
  if (i >= nx - r || (a.ndim > 1 && j >= ny - r)) return;
  const I idx = l.index_as<I>(i, j, k);
  // Taps in batches of 8 whose loads are all issued before the first is
  // used: a loop that waits on each load in turn is bound by memory latency.
  // The sum keeps the taps' order, as stencil_point_bc does.
  constexpr int B = 8;
  T acc = 0;
  for (int t = 0; t < a.ntaps; t += B) {
    T v[B];
#pragma unroll
    for (int q = 0; q < B; ++q) {
      if (t + q < a.ntaps) {
        const DeviceTap<T>& tp = tap<T>(t + q);
        v[q] = in[idx + l.index_as<I>(I(tp.d[0]), I(tp.d[1]), I(tp.d[2]))];
      } else {
        v[q] = T(0);
      }
    }
#pragma unroll
    for (int q = 0; q < B; ++q)
      if (t + q < a.ntaps) acc += tap<T>(t + q).w * v[q];
  }
  out[idx] = stencil_combine(a, in[idx], acc);
}

// Points within the radius r of a face (the shell), through the boundary
// rules, one thread each: first the 2r end planes in z, then the 2r end rows
// in y of the planes between, then the 2r end points in x of the rows between
// (r counts only on the grid's axes). Consecutive threads run along x.
template <int D, class T>
__global__ void __launch_bounds__(256) stencil_shell_kernel(StencilArgs<T> a,
                                                            const T* __restrict__ in,
                                                            T* __restrict__ out, Layout l) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  const std::int64_t r = a.radius > 0 ? a.radius : 1;
  const std::int64_t rz = D > 2 ? r : 0, ry = D > 1 ? r : 0;
  const std::int64_t mz = nz - 2 * rz, my = ny - 2 * ry;  // planes, rows between
  // the three kinds of shell point as boxes, enumerated x fastest: the end
  // planes (x, y, which plane), the end rows of the planes between (x, which
  // row, plane; 1D: none), the end points of the rows between (which point, row, plane)
  const std::int64_t planes_n[3] = {nx, ny, 2 * rz}, rows_n[3] = {nx, D > 1 ? 2 * ry : 1, mz},
                     ends_n[3] = {2 * r, my, mz};
  const Layout planes = Layout::dense(planes_n), rows = Layout::dense(rows_n),
               ends = Layout::dense(ends_n);
  std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  std::int64_t i, j, k, q;
  if (t < planes.size()) {
    planes.position(t, i, j, q);
    k = q < rz ? q : nz - 2 * rz + q;
  } else if ((t -= planes.size()) < (D > 1 ? rows.size() : 0)) {
    rows.position(t, i, q, k);
    k += rz;
    j = q < ry ? q : ny - 2 * ry + q;
  } else if ((t -= D > 1 ? rows.size() : 0) < ends.size()) {
    ends.position(t, q, j, k);
    i = q < r ? q : nx - 2 * r + q;
    j += ry;
    k += rz;
  } else {
    return;
  }
  out[l.index(i, j, k)] =
      stencil_point_bc<D>(a, const_taps<T>(), FieldView<const T>(in, l), i, j, k);
}

// ---- fixed shapes: the radius-1 presets through the marches ---------------------
// (FixedStencil, fixed_stencil: ops/stencil.hpp)

// A face point of a fixed-shape stencil, out of line: a march reaches it only
// at a row's ends, and inlined it would cost every thread of the march the
// registers of the boundary rules.
template <int D, class T>
__device__ __noinline__ T fixed_face_point(StencilArgs<T> a, const T* __restrict__ in, Layout l,
                                           std::int64_t i, std::int64_t j, std::int64_t k) {
  return stencil_point_bc<D>(a, const_taps<T>(), FieldView<const T>(in, l), i, j, k);
}

// Star, radius 1, as an operator of the marches: the tap values gathered
// from the march's neighbours; faces through star_point_bc (stencil_point_bc's
// value), inline, so that the march's launch makes them (FacesInMarch).
template <class T, int D>
struct StarStencilOp : StencilArgs<T> {
  using value_type = T;
  static constexpr int min_blocks = 4;
  T w[2 * D + 1];
  __device__ __forceinline__ T interior(T u, const T* m, const T* p, int) const {
    return star_point<D>(*this, w, u, m, p);
  }
  __device__ __forceinline__ T face(const FieldView<const T>& in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return star_point_bc<D>(*this, w, in, i, j, k);
  }
};

// Box, radius 1 (the 3^D box in z, y, x order), its sum added a plane (3D)
// or row (2D) at a time as the march brings them; faces through stencil_point_bc.
template <class T, int D>
struct BoxStencilOp : StencilArgs<T> {
  using value_type = T;
  static constexpr int min_blocks = 4;  // the box march: 64 registers, no spills
  static constexpr bool faces_apart = true;
  static constexpr int N = D == 3 ? 27 : 9;
  static constexpr int G = N / 3;  // taps a group: one plane (3D) or row (2D)
  T w[N];
  // acc plus the taps of group g (dz = g − 1 in 3D, dy = g − 1 in 2D) from
  // their values v in tap order: the marches add a box's sum group by group.
  __device__ __forceinline__ T group(T acc, int g, const T* v) const {
    return stencil_sum_from<G>(acc, w + G * g, v);
  }
  __device__ __forceinline__ T finish(T u, T sum) const {
    return stencil_combine<T>(*this, u, sum);
  }
  __device__ __forceinline__ T face(const FieldView<const T>& in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return fixed_face_point<D, T>(*this, in.p, in, i, j, k);
  }
};

template <class Op>
Op fixed_op(const StencilArgs<typename Op::value_type>& a,
            const FixedStencil<typename Op::value_type>& f) {
  Op op{a};
  for (int t = 0; t < int(sizeof(op.w) / sizeof(op.w[0])); ++t) op.w[t] = f.w[t];
  return op;
}

// Runs one step of a fixed-shape stencil through a march when the grid
// allows; false when it does not (the generic kernels then run it).
template <class T>
bool launch_fixed_stencil(const StencilArgs<T>& a, const FixedStencil<T>& f,
                          const FieldView<const T>& in, const FieldView<T>& out, cudaStream_t s) {
  if (f.shape == FixedShape::None || f.ndim != a.ndim) return false;
  const bool box = f.shape == FixedShape::Box;
  if (a.ndim == 3 && march3d_fits(in, out)) {
    if (box) launch_march3d<true>(fixed_op<BoxStencilOp<T, 3>>(a, f), in, out, s);
    else launch_march3d<false>(fixed_op<StarStencilOp<T, 3>>(a, f), in, out, s);
  } else if (a.ndim == 2 && march2d_fits(in, out)) {
    if (box) launch_march2d<true>(fixed_op<BoxStencilOp<T, 2>>(a, f), in, out, s);
    else launch_march2d<false>(fixed_op<StarStencilOp<T, 2>>(a, f), in, out, s);
  } else {
    return false;
  }
  GF_CUDA_CHECK_LAUNCH();
  return true;
}

// One stencil step; `tile_radius` is what upload_stencil_taps returned.
template <class T>
void launch_stencil(const StencilArgs<T>& a, int tile_radius, const FieldView<const T>& in,
                    const FieldView<T>& out, cudaStream_t s) {
  const bool small = in.span() < (std::int64_t(1) << 31);
  if (a.ndim > 1 && small) {
    switch (tile_radius) {
      case 1: launch_tiled_r<T, 1>(a, in, out, s); break;
      case 2: launch_tiled_r<T, 2>(a, in, out, s); break;
      case 3: launch_tiled_r<T, 3>(a, in, out, s); break;
      default: launch_tiled_r<T, 4>(a, in, out, s); break;
    }
    return;
  }
  const std::int64_t r = a.radius > 0 ? a.radius : 1;
  std::int64_t m[3];  // interior extent per axis
  for (int ax = 0; ax < 3; ++ax) m[ax] = ax < a.ndim ? in.n[ax] - 2 * r : 1;
  if (m[0] > 0 && m[1] > 0 && m[2] > 0) {
    const dim3 block(32, a.ndim > 1 ? 8 : 1);
    const dim3 grid(unsigned((m[0] + 31) / 32), unsigned((m[1] + block.y - 1) / block.y),
                    unsigned(m[2]));
    if (small)
      stencil_interior_kernel<T, int><<<grid, block, 0, s>>>(a, in.p, out.p, in);
    else
      stencil_interior_kernel<T, std::int64_t><<<grid, block, 0, s>>>(a, in.p, out.p, in);
    GF_CUDA_CHECK_LAUNCH();
  }
  std::int64_t inner[3];
  for (int ax = 0; ax < 3; ++ax) inner[ax] = std::max<std::int64_t>(0, m[ax]);
  const std::int64_t shell = in.size() - Layout::dense(inner).size();
  if (shell == 0) return;
  const unsigned grid = unsigned((shell + 255) / 256);
  switch (a.ndim) {
    case 1: stencil_shell_kernel<1, T><<<grid, 256, 0, s>>>(a, in.p, out.p, in); break;
    case 2: stencil_shell_kernel<2, T><<<grid, 256, 0, s>>>(a, in.p, out.p, in); break;
    default: stencil_shell_kernel<3, T><<<grid, 256, 0, s>>>(a, in.p, out.p, in); break;
  }
  GF_CUDA_CHECK_LAUNCH();
}

}  // namespace gf
