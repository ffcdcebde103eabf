// The explicit heat step's executor (the implicit schemes solve with the
// Laplace executor's operator, kernels/laplace/): one formula, ftcs_point
// (heat_ops.hpp), run by the CPU reference (heat_cpu.cpp), the CUDA kernels
// (heat_cuda.cu) and, over MPI ranks, the wrapper that keeps the halos
// filled (heat_dist.cpp).
#pragma once
#include <memory>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/heat/heat_ops.hpp"

namespace gf {

template <class T>
class HeatExec {
 public:
  virtual ~HeatExec() = default;
  // One explicit heat step: out = FTCS(in) at every point (Dirichlet points copied).
  virtual void step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) = 0;
  // Temporal blocking: how many explicit heat steps this executor takes in
  // one pass over memory for these args on fields of layout l. asked = k
  // forces k where the executor has such a pass, else 1; asked = 0 (auto)
  // returns the deepest pass it has (1: none), and the solver times the
  // depths up to it and keeps the fastest. The CPU and CUDA executors have
  // passes for 2D and 3D grids (k = 2 to 4).
  virtual int time_block(const HeatArgs<T>& a, const Layout& l, int asked) const {
    (void)a, (void)l, (void)asked;
    return 1;
  }
  // k = time_block(a, ·) > 1 steps in one pass, in → out: bit for bit the
  // result of k step() calls.
  virtual void steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) {
    (void)a, (void)in, (void)out;
    throw DeviceError("no temporally blocked heat pass of " + std::to_string(k) + " steps here");
  }
  // n steps with the same args, u → tmp → u ...: the result is in u (the
  // fields are swapped when n is odd), tmp is overwritten. Bit for bit n
  // step() calls; the GPU replays small grids' chunks as CUDA graphs
  // (Backend::steps_per_call says how many are worth handing over).
  virtual void run(const HeatArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) {
    for (int s = 0; s < n; ++s) {
      step(a, u, tmp);
      u.swap(tmp);
    }
  }
  // One step in two parts, for the overlapped halo exchange: part Shell
  // writes out at every point outside box `core`, part Core at every point
  // inside it (the same formula at every point as the whole step: together
  // bit for bit the whole step). Core reads only `in`, writes only the core,
  // and may run while the shell's faces travel. False, having done nothing,
  // where the executor does not split this step (the caller then takes the
  // whole step): the CPU always splits; the GPU where its marches run.
  virtual bool step_part(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                         StepPart part) {
    (void)a, (void)in, (void)out, (void)core, (void)part;
    return false;
  }
};

// The executor for the backend's kind (kernels/exec.hpp).
template <class T>
std::unique_ptr<HeatExec<T>> make_heat_exec(Backend<T>& be);

template <class T>
std::unique_ptr<HeatExec<T>> make_heat_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<HeatExec<T>> make_heat_cuda(Backend<T>& be);

}  // namespace gf
