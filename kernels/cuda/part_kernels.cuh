// Steps split in two for the overlapped halo exchange (the executors'
// step_part, kernels/dist/): part Shell, every point outside a core
// box, one thread a point through the operator's boundary-rules formula
// (op.face: the formula the faces kernels use, so the same values); part
// Core, the march over the core's whole 16-byte vectors off the grid's y and
// z faces (march_kernels.cuh, ranged), and op.face at the few core points it
// does not reach (x ends that are not whole vectors, the grid's own faces).
// The Core kernels go on the compute stream while the halo exchange runs on
// a stream of its own (CudaBackend::halo_fork).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "grid/grid.hpp"
#include "kernels/backend.hpp"
#include "kernels/cuda/march_kernels.cuh"

namespace gf {

// Up to six boxes (shell_boxes' most) as one kernel's argument.
struct BoxSet {
  static constexpr int kMax = 6;
  int n = 0;
  std::int64_t lo[kMax][3] = {}, cnt[kMax][2] = {};  // x and y counts (z follows)
  std::int64_t first[kMax + 1] = {};                 // points before each box
};

// Every point of the boxes, through op.face; consecutive threads along x.
// I: the index type, 32-bit where the grid allows (the divisions dominate,
// as in faces3d).
template <class Op, class I>
__global__ void __launch_bounds__(256) box_points(Op op,
                                                  const typename Op::value_type* __restrict__ in,
                                                  typename Op::value_type* __restrict__ out,
                                                  Layout l, BoxSet set) {
  using T = typename Op::value_type;
  const I total = I(set.first[set.n]);
  const I stride = I(gridDim.x) * I(blockDim.x);
  for (I t = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); t < total; t += stride) {
    int b = 0;
    while (t >= I(set.first[b + 1])) ++b;
    const I q = t - I(set.first[b]), c0 = I(set.cnt[b][0]), c1 = I(set.cnt[b][1]);
    const I r = q / c0;
    const I i = I(set.lo[b][0]) + q % c0;
    const I j = I(set.lo[b][1]) + r % c1;
    const I k = I(set.lo[b][2]) + r / c1;
    out[l.index_as<I>(i, j, k)] =
        op.face(FieldView<const T>(in, l), std::int64_t(i), std::int64_t(j), std::int64_t(k));
  }
}

template <class Op>
void launch_box_points(const Op& op, const FieldView<const typename Op::value_type>& in,
                       const FieldView<typename Op::value_type>& out,
                       const std::vector<Box>& boxes, cudaStream_t s) {
  BoxSet set;
  for (const Box& b : boxes) {
    if (b.empty()) continue;
    const int k = set.n++;
    for (int a = 0; a < 3; ++a) set.lo[k][a] = b.lo[a];
    set.cnt[k][0] = b.hi[0] - b.lo[0];
    set.cnt[k][1] = b.hi[1] - b.lo[1];
    set.first[k + 1] = set.first[k] + b.size();
  }
  const std::int64_t total = set.first[set.n];
  if (total == 0) return;
  const unsigned blocks = unsigned(std::min<std::int64_t>((total + 255) / 256, 65535 * 8));
  if (in.span() < (std::int64_t(1) << 31) - 256 * std::int64_t(blocks))
    box_points<Op, int><<<blocks, 256, 0, s>>>(op, in.p, out.p, in, set);
  else
    box_points<Op, std::int64_t><<<blocks, 256, 0, s>>>(op, in.p, out.p, in, set);
}

// Part `part` of one step of op (a march operator, D = 2 or 3 dimensions)
// split around `core`; the caller has checked that the march fits the grid.
template <bool BOX, int D, class Op>
void launch_part(const Op& op, const FieldView<const typename Op::value_type>& in,
                 const FieldView<typename Op::value_type>& out, const Box& core, StepPart part,
                 cudaStream_t s) {
  using T = typename Op::value_type;
  constexpr int W = Vec16<T>::n;
  const std::int64_t* n = in.n;
  if (part == StepPart::Shell) {
    launch_box_points(op, in, out, shell_boxes(Box::whole(n), core), s);
    return;
  }
  // The march's share of the core: whole vectors in x, off the y (3D: and z) faces.
  Box m = core;
  m.lo[0] = (core.lo[0] + W - 1) / W * W;
  m.hi[0] = core.hi[0] / W * W;
  m.lo[1] = std::max<std::int64_t>(core.lo[1], 1);
  m.hi[1] = std::min<std::int64_t>(core.hi[1], n[1] - 1);
  if (D == 3) {
    m.lo[2] = std::max<std::int64_t>(core.lo[2], 1);
    m.hi[2] = std::min<std::int64_t>(core.hi[2], n[2] - 1);
  }
  if (m.empty()) {
    launch_box_points(op, in, out, {core}, s);
    return;
  }
  MarchRange r;
  r.i_lo = int(m.lo[0]), r.i_hi = int(m.hi[0]);
  r.j_lo = int(m.lo[1]), r.j_hi = int(m.hi[1]);
  r.k_lo = int(m.lo[2]), r.k_hi = int(m.hi[2]);
  if constexpr (D == 3) launch_march3d_range<BOX>(op, in, out, r, s);
  else launch_march2d_range<BOX>(op, in, out, r, s);
  launch_box_points(op, in, out, shell_boxes(core, m), s);
}

// Part `part` of a step split around `core` where the step's march runs on
// this grid (2D or 3D, march*_fits): make(std::integral_constant<int, D>)
// makes the step's operator in D dimensions. False, nothing launched, where
// the march does not run (1D grids, rows not whole 16-byte vectors, 2³¹
// points and more): the caller then takes the whole step.
template <bool BOX, class T, class Make>
bool launch_split(int ndim, const FieldView<const T>& in, const FieldView<T>& out,
                  const Box& core, StepPart part, cudaStream_t s, Make&& make) {
  if (ndim == 3 && march3d_fits(in, out)) {
    launch_part<BOX, 3>(make(std::integral_constant<int, 3>{}), in, out, core, part, s);
    return true;
  }
  if (ndim == 2 && march2d_fits(in, out)) {
    launch_part<BOX, 2>(make(std::integral_constant<int, 2>{}), in, out, core, part, s);
    return true;
  }
  return false;
}

}  // namespace gf
