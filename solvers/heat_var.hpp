// Heat with a variable alpha (heat.alpha an expression of x, y, z or an HDF5
// dataset): ∂u/∂t = ∇·(α∇u) + source, the conservative form, by forward
// Euler (heat's explicit scheme). The case reader compiled it into the pde
// program of one field u (HeatSpec::program: div(α·grad(u)) + source, its
// Dirichlet values, which may read t); each step is one stage of the pde
// executor (kernels/pde/: the bytecode interpreted on the CPU, a kernel
// compiled at run time on the GPU). Heat's dt, steps and t_end (the last
// step shortened), checkpoints and log columns are kept.
#pragma once
#include <cstdint>
#include <memory>

#include "kernels/pde/pde_exec.hpp"
#include "solvers/stepper.hpp"

namespace gf {

template <class T>
class HeatVarSolver final : public Stepper<T> {
 public:
  HeatVarSolver(const Case& c, Backend<T>& backend);

  void advance(std::int64_t n) override;
  std::int64_t step() const override { return step_; }
  double time() const override { return time_; }
  std::int64_t total_steps() const override { return case_.heat.steps; }
  const Field<T>& field() const override { return u_; }
  double upload_ms() const override { return upload_ms_; }
  // u read and written once, α read once.
  std::size_t bytes_per_step() const override { return 3 * u_.point_bytes(); }
  void add_timing(nlohmann::json& t) const override;
  void save(io::Checkpoint& ck) override;
  void restore(const io::Checkpoint& ck) override;
  static MemoryNeed memory_needed(const Case& c);

 private:
  const Case& case_;
  Backend<T>& backend_;
  std::unique_ptr<PdeExec<T>> exec_;
  PdeArgs<T> args_;
  Field<T> u_, u_next_, alpha_;
  std::int64_t step_ = 0;
  double time_ = 0;
  double upload_ms_ = 0;
};

}  // namespace gf
