// Heat: explicit (FTCS), backward Euler and Crank–Nicolson; the time loop,
// written once against Backend<T>. The implicit schemes solve each step with
// the CG of solvers/laplace.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/heat/heat_exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "solvers/heat_time.hpp"
#include "solvers/laplace.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// The scheme and its stability limit in one line (the log, --dry-run).
std::string heat_setup_line(const Case& c);

// heat.solver.preconditioner auto, chosen by measurement (docs/performance.md,
// "Heat's implicit preconditioner"): one multigrid V-cycle on a GPU from this
// many points, Jacobi's diagonal below it, on the CPU and over MPI ranks (there
// multigrid gathers the fine level on rank 0 every cycle). Other values as they are.
inline constexpr std::int64_t kHeatMultigridPoints = 2'000'000;
LaplacePrecond heat_preconditioner(const Case& c, bool gpu, bool ranks);

template <class T>
class HeatSolver final : public Stepper<T> {
 public:
  HeatSolver(const Case& c, Backend<T>& backend);

  void advance(std::int64_t n) override;
  std::int64_t step() const override { return step_; }
  double time() const override { return time_; }
  std::int64_t total_steps() const override { return case_.heat.steps; }
  const Field<T>& field() const override { return u_; }
  double upload_ms() const override { return upload_ms_; }
  // u read once, u written once, s(x) read if it varies.
  std::size_t bytes_per_step() const override;
  std::int64_t solver_iterations() const override { return cg_iterations_; }
  // Explicit steps per pass over memory the run took (heat.time_block, or
  // what auto measured fastest at setup).
  int time_block() const override { return time_block_; }
  void add_timing(nlohmann::json& t) const override {
    if (cg_) t["solver_iterations"] = cg_iterations_;
    if (cg_) t["solver_preconditioner"] = to_string(precond_);
    else t["time_block"] = time_block_;
    if (tb_auto_) add_time_block_pick(t, *tb_auto_);
  }
  void save(io::Checkpoint& ck) override;
  void restore(const io::Checkpoint& ck) override;
  // Device memory a run of this case needs (fields + reduction scratch).
  static MemoryNeed memory_needed(const Case& c);

 private:
  HeatArgs<T> args_for(double dt) const;
  int pick_time_block(const HeatArgs<T>& regular);
  void implicit_step(double dt);
  // A step from time_ to t1 when the source or a Dirichlet value reads t.
  void step_in_time(double dt, double t1, const HeatArgs<T>& args);
  // CG's preconditioner (heat.solver.preconditioner) for the operator op.
  void set_preconditioner(const LaplaceArgs<T>& op);

  const Case& case_;
  Backend<T>& backend_;
  std::unique_ptr<HeatExec<T>> exec_;
  std::unique_ptr<LaplaceExec<T>> implicit_;  // the implicit schemes' operator
  Field<T> u_, u_next_, source_;
  Field<T> delta_, r_, p_, q_;  // implicit: the change of u in a step, and CG's vectors
  std::unique_ptr<ConjugateGradient<T>> cg_;
  Field<T> z_;  // the preconditioned residual
  std::unique_ptr<Multigrid<T>> pre_mg_;
  std::unique_ptr<MultigridExec<T>> pre_exec_;
  LaplacePrecond precond_ = LaplacePrecond::None;  // heat.solver.preconditioner, auto resolved
  bool dense_ = false;            // the implicit fields' rows are dense (operator csr)
  double operator_dt_ = -1;       // the dt the backend's operator was set for
  std::int64_t cg_iterations_ = 0;
  bool has_source_field_ = false;
  // The source and the Dirichlet faces that read t (heat.source, boundary):
  // evaluated again at each step's time; empty otherwise.
  std::unique_ptr<TimeFill<T>> source_in_time_, faces_in_time_;
  double source_const_ = 0;
  std::int64_t step_ = 0;
  double time_ = 0;
  double upload_ms_ = 0;
  int time_block_ = 0;
  std::optional<TimeBlockPick> tb_auto_;  // what time_block auto did
};

}  // namespace gf
