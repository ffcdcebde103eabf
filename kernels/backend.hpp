// The coarse operations a solver calls, one call per step or sweep. A solver
// is written once against Backend<T>; CpuBackend (reference loops, OpenMP)
// and CudaBackend (kernels) implement it with the formulas of kernels/ops.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grid/field.hpp"
#include "kernels/ops/heat.hpp"
#include "kernels/ops/stencil.hpp"

namespace gf {

struct FieldStats {
  double min = 0, max = 0, mean = 0;
  std::int64_t nonfinite = 0;  // NaN and ±Inf values
};

// Times a region of device work (CUDA events on the GPU, a steady clock on the CPU).
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual double stop_ms() = 0;  // waits for the work in the region
};

template <class T>
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;   // "cpu" or e.g. "NVIDIA H200 (GPU 0)"
  virtual bool is_gpu() const = 0;
  virtual MemoryResource& memory() = 0;
  virtual std::unique_ptr<Timer> make_timer() = 0;
  virtual void synchronize() = 0;

  Field<T> make_field(const Grid& g, const std::string& what) { return Field<T>(g, memory(), what); }
  virtual void upload(const T* host, Field<T>& f) = 0;
  virtual void download(const Field<T>& f, T* host) = 0;

  // One explicit heat step: out = FTCS(in) at every point (Dirichlet points copied).
  virtual void heat_step(const HeatArgs<T>& args, const Field<T>& in, Field<T>& out) = 0;
  // The stencil's taps (at most kMaxStencilTaps), kept by the backend (in
  // constant memory on the GPU) for the apply_stencil calls that follow.
  virtual void set_stencil_taps(const std::vector<StencilTap<T>>& taps) = 0;
  // One stencil step: out = stencil(in) at every point (Dirichlet points copied).
  virtual void apply_stencil(const StencilArgs<T>& args, const Field<T>& in, Field<T>& out) = 0;

  // min, max, mean and count of non-finite values, in one pass.
  virtual FieldStats stats(const Field<T>& f) = 0;
};

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend();

}  // namespace gf
