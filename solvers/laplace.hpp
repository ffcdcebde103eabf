// ∇²u = f (workload laplace): Jacobi, red-black SOR, CG and the spectral FFT
// solve, written once against Backend<T>; and the CG iteration that the
// implicit heat schemes share.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "io/checkpoint.hpp"
#include "kernels/backend.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "solvers/mixed.hpp"
#include "solvers/multigrid.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// The method and its stopping rule in one line (the log, --dry-run).
std::string laplace_setup_line(const Case& c);

// Conjugate gradients on an operator (LaplaceExec::set_operator), for
// A x = b in residual form: r holds b − A x at start(). x, r, p, q are the
// caller's; the vector operations are the backend's.
template <class T>
class ConjugateGradient {
 public:
  ConjugateGradient(VectorOps<T>& vec, LaplaceExec<T>& op, Field<T>& x, Field<T>& r, Field<T>& p,
                    Field<T>& q)
      : vec_(vec), op_(op), x_(x), r_(r), p_(p), q_(q) {}
  // Preconditioned CG: z = M r (M ≈ A⁻¹, symmetric positive) into z.
  using Preconditioner = std::function<void(const Field<T>& r, Field<T>& z)>;
  void set_preconditioner(Preconditioner m, Field<T>& z) {
    m_ = std::move(m);
    z_ = &z;
  }
  // p = r (p = M r preconditioned); rr = r·r (given: the caller has it from computing r).
  void start(double rr) {
    rr_ = rr;
    if (m_) {
      m_(r_, *z_);
      rz_ = vec_.dot(r_, *z_);
      vec_.axpby(T(1), *z_, T(0), p_);
      return;
    }
    vec_.axpby(T(1), r_, T(0), p_);
  }
  // One iteration; false on a breakdown (p·Ap ≤ 0: nothing left to reduce).
  bool step() {
    op_.apply(p_, q_);
    const double pq = vec_.dot(p_, q_);
    if (!(pq > 0)) return false;
    const double rho = m_ ? rz_ : rr_;
    const double rr_new = vec_.cg_update(static_cast<T>(rho / pq), p_, q_, x_, r_);
    rr_ = rr_new;
    if (m_) {
      m_(r_, *z_);
      const double rz_new = vec_.dot(r_, *z_);
      const double beta = rz_new / rz_;
      rz_ = rz_new;
      vec_.axpby(T(1), *z_, static_cast<T>(beta), p_);
      return true;
    }
    vec_.axpby(T(1), r_, static_cast<T>(rr_new / rho), p_);
    return true;
  }
  double rr() const { return rr_; }  // ‖r‖₂² by the recurrence
  double rz() const { return rz_; }  // r·M r (preconditioned)
  bool preconditioned() const { return bool(m_); }
  // Restart: r and p were restored by the caller; rr (and rz) the checkpointed ones.
  void resume(double rr, double rz = 0) {
    rr_ = rr;
    rz_ = rz;
  }

 private:
  VectorOps<T>& vec_;
  LaplaceExec<T>& op_;
  Field<T>&x_, &r_, &p_, &q_;
  Field<T>* z_ = nullptr;
  Preconditioner m_;
  double rr_ = 0, rz_ = 0;
};

// LaplaceExec's form of the case's operator choice.
inline OperatorForm operator_form(LaplaceOperator o) {
  return o == LaplaceOperator::Csr ? OperatorForm::Csr : OperatorForm::MatrixFree;
}
// Device bytes of the CSR matrix of the operator on grid g (32-bit indices
// where they fit, else 64-bit), the count scan's buffer included.
std::size_t csr_bytes(const Grid& g, std::size_t value_bytes);

// The operator's args of the Laplacian on the case's grid: ih2, diag,
// boundaries (Neumann ghosts 2h·g; zero_ghosts for the homogeneous operator).
template <class T>
LaplaceArgs<T> laplace_args(const Case& c, bool zero_ghosts);

// Stalled: the residual stopped falling above the tolerance (the rounding
// floor of the precision; LaplaceSolver::stall_message says so).
enum class LaplaceStatus { Running, Converged, MaxIters, Direct, Stalled };
const char* to_string(LaplaceStatus s);

template <class T>
class LaplaceSolver {
 public:
  LaplaceSolver(const Case& c, Backend<T>& backend);

  // Runs up to n more iterations (never past max_iters; jacobi and sor then
  // measure the residual, cg checks it every iteration and multigrid after
  // every cycle, and may stop early; fft solves at once). No effect once finished.
  void iterate(std::int64_t n);
  // Ends the run: the true residual for cg, the mean made 0 when u is only
  // fixed up to a constant. Called once, after the last iterate().
  void finish();
  // n jacobi or sor sweeps and nothing else: no residual check, no status,
  // no max_iters (what `gridforge bench` times, one sweep a step). Throws
  // std::logic_error for cg and fft.
  void sweep(std::int64_t n);

  bool finished() const { return status_ != LaplaceStatus::Running; }
  // Why a stalled solve stopped and what to do (status Stalled).
  std::string stall_message() const;
  LaplaceStatus status() const { return status_; }
  std::int64_t iterations() const { return iters_; }
  // Mixed precision: the float32 cycles its refinements ran (0 otherwise).
  std::int64_t mixed_cycles() const { return mixed_ ? mixed_->cycles() : 0; }
  double residual() const { return residual_; }  // relative, at the last check
  double mean_removed() const { return mean_removed_; }
  const Field<T>& field() const { return u_; }
  double upload_ms() const { return upload_ms_; }
  // Jacobi sweeps per pass over memory (temporal blocking; 1 for the other methods).
  int time_block() const { return time_block_; }
  // What time_block auto did (empty when the case set time_block).
  const std::optional<TimeBlockPick>& time_block_auto() const { return tb_auto_; }
  // Bytes one iteration must move (each field read or written once).
  std::size_t bytes_per_iteration() const;
  static MemoryNeed memory_needed(const Case& c);

  // Checkpoint/restart of the iteration (before finish()): u, the iteration
  // count, the residual and its base; for cg also r, p and r·r, so that the
  // restarted CG continues the same recurrence rather than starting again.
  void save(io::Checkpoint& ck);
  void restore(const io::Checkpoint& ck);

 private:
  void check_residual();
  // The status from Σ r² of the current iterate (check_residual's second half).
  void take_residual(double rr);
  // Stall detection: the relative residual at each check (the true one for
  // cg), and whether the last half of the run has stopped gaining.
  void record_check(double residual);
  void iterate_cg(std::int64_t n);
  void set_preconditioner(const LaplaceArgs<T>& op);
  bool converged_now() const { return residual_ <= case_.laplace.tolerance; }

  const Case& case_;
  const LaplaceSpec& spec_;
  Backend<T>& be_;
  std::unique_ptr<LaplaceExec<T>> exec_;
  LaplaceArgs<T> args_;
  Field<T> u_, v_, f_, r_, p_, q_;
  std::unique_ptr<ConjugateGradient<T>> cg_;
  std::unique_ptr<Multigrid<T>> mg_;
  std::unique_ptr<MixedRefinement> mixed_;  // multigrid, laplace.precision: mixed (float64)
  // cg's preconditioner: a multigrid V-cycle, or Jacobi through mg_exec_
  std::unique_ptr<Multigrid<T>> pre_mg_;
  std::unique_ptr<MultigridExec<T>> pre_exec_;
  Field<T> z_;
  bool has_f_field_ = false;
  bool dense_ = false;  // the fields' rows are dense (else the backend's)
  double base_ = 1;  // ‖W·f‖₂, or ‖r₀‖₂ when f = 0
  double residual_ = 1;
  double mean_removed_ = 0;
  std::int64_t iters_ = 0;
  LaplaceStatus status_ = LaplaceStatus::Running;
  struct Check {
    std::int64_t iteration;
    double residual;
  };
  std::vector<Check> checks_;
  double upload_ms_ = 0;
  int time_block_ = 1;
  std::optional<TimeBlockPick> tb_auto_;
};

}  // namespace gf
