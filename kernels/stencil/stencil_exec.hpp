// The generic stencil's executor: one formula, stencil_point_bc and, for the
// radius-1 presets' shapes, star_point / the box's grouped sum
// (stencil_ops.hpp), run by the CPU reference (stencil_cpu.cpp), the CUDA
// kernels (stencil_cuda.cu: the marches for the presets' shapes, tiled
// kernels for any other) and, over MPI ranks, stencil_dist.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/stencil/stencil_ops.hpp"

namespace gf {

template <class T>
class StencilExec {
 public:
  virtual ~StencilExec() = default;
  // The stencil's taps (at most kMaxStencilTaps), kept by the executor (in
  // constant memory on the GPU) for the steps that follow.
  virtual void set_taps(const std::vector<StencilTap<T>>& taps) = 0;
  // One stencil step: out = stencil(in) at every point (Dirichlet points copied).
  virtual void step(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) = 0;
  // Temporal blocking, as HeatExec::time_block: for a star of radius 1 with
  // its taps in the presets' order (star5 in 2D, star7 in 3D, whatever the
  // weights, update or replace) the CPU and CUDA executors have passes of
  // k = 2 to 4; 1 for any other stencil. Asked after set_taps.
  virtual int time_block(const StencilArgs<T>& a, const Layout& l, int asked) const {
    (void)a, (void)l, (void)asked;
    return 1;
  }
  virtual void steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) {
    (void)a, (void)in, (void)out;
    throw DeviceError("no temporally blocked stencil pass of " + std::to_string(k) +
                      " steps here");
  }
  // n steps as HeatExec::run takes heat steps.
  virtual void run(const StencilArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) {
    for (int s = 0; s < n; ++s) {
      step(a, u, tmp);
      u.swap(tmp);
    }
  }
  // One step in two parts, as HeatExec::step_part (the GPU: the radius-1
  // presets' shapes only).
  virtual bool step_part(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out,
                         const Box& core, StepPart part) {
    (void)a, (void)in, (void)out, (void)core, (void)part;
    return false;
  }
};

template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_exec(Backend<T>& be);

template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_cuda(Backend<T>& be);

}  // namespace gf
