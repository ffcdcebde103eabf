// The generic stencil workload: uⁿ⁺¹ = uⁿ + coeff·Σ wₖ uⁿ(x+oₖ) or Σ wₖ uⁿ(x+oₖ),
// written once against Backend<T>.
#pragma once
#include "kernels/stencil/stencil_exec.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// The case's stencil as the executors' taps (offsets, weights in T).
template <class T>
std::vector<StencilTap<T>> stencil_taps(const Case& c);
template <class T>
StencilArgs<T> stencil_args(const Case& c);

template <class T>
class StencilSolver final : public Stepper<T> {
 public:
  StencilSolver(const Case& c, Backend<T>& backend);

  void advance(std::int64_t n) override;
  std::int64_t step() const override { return step_; }
  double time() const override { return double(step_); }
  std::int64_t total_steps() const override { return case_.stencil.steps; }
  const Field<T>& field() const override { return u_; }
  double upload_ms() const override { return upload_ms_; }
  std::size_t bytes_per_step() const override { return 2 * u_.point_bytes(); }
  // Steps per pass over memory the run took (stencil.time_block, or what
  // auto measured fastest at setup).
  int time_block() const override { return time_block_; }
  void add_timing(nlohmann::json& t) const override {
    t["time_block"] = time_block_;
    if (tb_auto_) add_time_block_pick(t, *tb_auto_);
  }
  void save(io::Checkpoint& ck) override;
  void restore(const io::Checkpoint& ck) override;
  static MemoryNeed memory_needed(const Case& c);

 private:
  const Case& case_;
  Backend<T>& backend_;
  std::unique_ptr<StencilExec<T>> exec_;
  StencilArgs<T> args_;
  Field<T> u_, u_next_;
  std::int64_t step_ = 0;
  double upload_ms_ = 0;
  int time_block_ = 1;
  std::optional<TimeBlockPick> tb_auto_;  // what time_block auto did
};

}  // namespace gf
