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

#include "kernels/cuda/march_kernels.cuh"
#include "kernels/cuda/vec16.cuh"
#include "kernels/heat/heat_ops.hpp"

namespace gf {

// A point on an x face (i = 0 or nx − 1) whose j and k are interior: the x
// neighbours follow the boundary rule (the shared neighbour() formula), the y
// and z ones are ordinary. Computed inside the interior kernels, where the
// point's row already is, rather than by a kernel that would read whole rows
// for one value each.
template <class T, class I>
__device__ __forceinline__ T x_face_point(const HeatArgs<T>& a, const T* in, I nx, I idx, I i,
                                          T u, T ym, T yp, T zm, T zp) {
  if (on_dirichlet<T>(i, nx, a.bc[0])) return u;
  const T m[3] = {neighbour(in, std::int64_t(idx), std::int64_t(i), std::int64_t(nx), 1, -1, a.bc[0]),
                  ym, zm};
  const T p[3] = {neighbour(in, std::int64_t(idx), std::int64_t(i), std::int64_t(nx), 1, +1, a.bc[0]),
                  yp, zp};
  return ftcs_point<3>(u, m, p, a.c, heat_source(a, std::int64_t(idx)), heat_form<3>(a));
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
                                                       T* __restrict__ out, Layout l, int kchunk) {
  const I nx = I(l.n[0]), ny = I(l.n[1]), nz = I(l.n[2]);
  const I sy = I(l.sy), plane = I(l.sz);
  const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
  const I j = 1 + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y);
  if (i >= nx || j >= ny - 1) return;
  const I kb = 1 + I(blockIdx.z) * I(kchunk);
  const I ke = kb + kchunk < nz - 1 ? kb + kchunk : nz - 1;
  const bool x_face = i == 0 || i == nx - 1;
  I idx = l.index_as<I>(i, j, kb);
  T uzm = in[idx - plane];
  T uc = in[idx];
#pragma unroll 4
  for (I k = kb; k < ke; ++k, idx += plane) {
    const T uzp = in[idx + plane];
    if (x_face) {
      out[idx] = x_face_point(a, in, nx, idx, i, uc, in[idx - sy], in[idx + sy], uzm, uzp);
    } else {
      const T m[3] = {in[idx - 1], in[idx - sy], uzm};
      const T p[3] = {in[idx + 1], in[idx + sy], uzp};
      out[idx] = ftcs_point<3>(uc, m, p, a.c, heat_source(a, idx), heat_form<3>(a));
    }
    uzm = uc;
    uc = uzp;
  }
}

// The explicit step as an operator of the marches (march_kernels.cuh), in
// the run's form (heat_form) or, ISO_NO_SOURCE, in the isotropic form
// without a source compiled in (the form most runs take: the runtime choice
// costs the float32 march spills).
template <class T, int D, bool ISO_NO_SOURCE = false>
struct HeatOp : HeatArgs<T> {
  using value_type = T;
  // (StarMinBlocks, march_kernels.cuh: float64 at 3 rather than 4, H100:
  // 257³ 0.87 → 0.90, 513³ 0.90 → 0.91, level from 384³)
  static constexpr int min_blocks = sizeof(T) == 4 ? 6 : 3;
  static constexpr int min_blocks_partial = sizeof(T) == 4 ? 5 : 3;
  HeatForm form;  // heat_form, worked out once on the host
  explicit HeatOp(const HeatArgs<T>& a) : HeatArgs<T>(a), form(heat_form<D>(a)) {}
  __device__ __forceinline__ T interior(T u, const T* m, const T* p, int idx) const {
    if constexpr (ISO_NO_SOURCE) return ftcs_point_as<D, true, false>(u, m, p, this->c, T(0));
    else return ftcs_point<D>(u, m, p, this->c, heat_source(*this, idx), form);
  }
  __device__ __forceinline__ T face(const FieldView<const T>& in, std::int64_t i, std::int64_t j,
                                    std::int64_t k) const {
    return heat_point_bc<D>(*this, in, i, j, k);
  }
};

template <class T>
__global__ void __launch_bounds__(256) heat2d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out, Layout l) {
  const std::int64_t nx = l.n[0], ny = l.n[1];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const std::int64_t idx = l.index(i, j);
  if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {
    const T m[2] = {in[idx - 1], in[idx - l.sy]};
    const T p[2] = {in[idx + 1], in[idx + l.sy]};
    out[idx] = ftcs_point<2>(in[idx], m, p, a.c, heat_source(a, idx), heat_form<2>(a));
  } else {
    out[idx] = heat_point_bc<2>(a, FieldView<const T>(in, l), i, j, 0);
  }
}

template <class T>
__global__ void __launch_bounds__(256) heat1d_kernel(HeatArgs<T> a, const T* __restrict__ in,
                                                     T* __restrict__ out, Layout l) {
  const std::int64_t nx = l.n[0];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  if (i > 0 && i < nx - 1) {
    const T m[1] = {in[i - 1]};
    const T p[1] = {in[i + 1]};
    out[i] = ftcs_point<1>(in[i], m, p, a.c, heat_source(a, i), heat_form<1>(a));
  } else {
    out[i] = heat_point_bc<1>(a, FieldView<const T>(in, l), i, 0, 0);
  }
}

inline unsigned blocks_for(std::int64_t n, unsigned b) { return unsigned((n + b - 1) / b); }

template <class T>
void launch_heat_step(const HeatArgs<T>& a, const FieldView<const T>& in, const FieldView<T>& out,
                      cudaStream_t s) {
  const bool fast = [&] {
    const HeatForm f = a.ndim == 3 ? heat_form<3>(a) : heat_form<2>(a);
    return f.iso && !f.src;
  }();
  if (a.ndim == 3) {
    const HeatOp<T, 3> op{a};
    if (march3d_fits(in, out)) {
      if (fast) launch_march3d<false>(HeatOp<T, 3, true>{a}, in, out, s);
      else launch_march3d<false>(op, in, out, s);
      return;
    }
    const std::int64_t nx = in.n[0], ny = in.n[1], nz = in.n[2];
    const bool small = in.span() < (std::int64_t(1) << 31);
    const int kchunk = int(std::clamp<std::int64_t>(nz - 2, 1, 8));
    const dim3 g(blocks_for(nx, 32), blocks_for(ny - 2, 8), blocks_for(nz - 2, kchunk));
    if (g.y > 0 && g.z > 0) {
      if (small)
        heat3d_interior<T, int><<<g, dim3(32, 8), 0, s>>>(a, in.p, out.p, in, kchunk);
      else
        heat3d_interior<T, std::int64_t><<<g, dim3(32, 8), 0, s>>>(a, in.p, out.p, in, kchunk);
    }
    launch_faces3d(op, in, out, s);
  } else if (a.ndim == 2 && march2d_fits(in, out)) {
    // (the one-thread-per-point kernel below ran 16384² float32 at 0.51 of
    // copy bandwidth on an H200)
    if (fast) launch_march2d<false>(HeatOp<T, 2, true>{a}, in, out, s);
    else launch_march2d<false>(HeatOp<T, 2>{a}, in, out, s);
  } else if (a.ndim == 2) {
    const dim3 block(64, 4);
    const dim3 grid(blocks_for(in.n[0], 64), blocks_for(in.n[1], 4));
    heat2d_kernel<T><<<grid, block, 0, s>>>(a, in.p, out.p, in);
  } else {
    heat1d_kernel<T><<<blocks_for(in.n[0], 256), 256, 0, s>>>(a, in.p, out.p, in);
  }
}

}  // namespace gf
