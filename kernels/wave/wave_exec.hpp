// The wave equation's executor: one formula, wave_point (wave_ops.hpp), run
// by the CPU reference (wave_cpu.cpp), the CUDA kernels (wave_cuda.cu) and,
// over MPI ranks, the wrapper that keeps the halos filled (wave_dist.cpp).
#pragma once
#include <memory>

#include "kernels/backend.hpp"
#include "kernels/wave/wave_ops.hpp"

namespace gf {

template <class T>
class WaveExec {
 public:
  virtual ~WaveExec() = default;
  // One step: out = wave_point(u, a.w) at every point (Dirichlet points
  // copied). a.w points to a field of u's layout other than out.
  virtual void step(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out) = 0;
  // The step in two parts for the overlapped halo exchange (as
  // HeatExec::step_part): Shell outside box `core`, Core inside it. False,
  // having done nothing, where the executor does not split this step.
  virtual bool step_part(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out, const Box& core,
                         StepPart part) {
    (void)a, (void)u, (void)out, (void)core, (void)part;
    return false;
  }
};

// The executor for the backend's kind (kernels/exec.hpp).
template <class T>
std::unique_ptr<WaveExec<T>> make_wave_exec(Backend<T>& be);

template <class T>
std::unique_ptr<WaveExec<T>> make_wave_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<WaveExec<T>> make_wave_cuda(Backend<T>& be);

}  // namespace gf
