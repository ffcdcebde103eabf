#include "solvers/laplace.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "core/interrupt.hpp"
#include "io/expression.hpp"
#include "solvers/expr_fill.hpp"
#include "solvers/laplace_setup.hpp"
#include "solvers/stepper.hpp"

namespace gf {

const char* to_string(LaplaceStatus s) {
  switch (s) {
    case LaplaceStatus::Running: return "running";
    case LaplaceStatus::Converged: return "converged";
    case LaplaceStatus::MaxIters: return "max_iters";
    case LaplaceStatus::Direct: return "direct";
    case LaplaceStatus::Stalled: return "stalled";
  }
  return "?";
}

template <class T>
LaplaceArgs<T> laplace_args(const Case& c, bool zero_ghosts) {
  const Grid& g = c.grid;
  LaplaceArgs<T> a;
  a.ndim = g.ndim;
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    const double ih2 = ax < g.ndim ? 1.0 / (g.h[ax] * g.h[ax]) : 0.0;
    a.ih2[ax] = static_cast<T>(ih2);
    diag += 2 * ih2;
  }
  a.diag = static_cast<T>(diag);
  a.inv_diag = static_cast<T>(1.0 / diag);
  axis_boundaries(c, a.bc);
  if (zero_ghosts)
    for (auto& b : a.bc) b.ghost_lo = b.ghost_hi = T(0);
  return a;
}

template <class T>
LaplaceSolver<T>::LaplaceSolver(const Case& c, Backend<T>& backend)
    : case_(c), spec_(c.laplace), be_(backend), exec_(make_laplace_exec(backend)) {
  const Grid& g = c.grid;
  const LaplaceMethod method = spec_.method;
  if (method == LaplaceMethod::Sor && !(spec_.omega > 0))
    throw std::logic_error("LaplaceSolver: laplace.omega auto is unresolved: the case was not "
                           "prepared (solvers/prepare.hpp)");
  // cuFFT transforms dense arrays, cuSPARSE's SpMV sums depend on the
  // matrix's rows (cg with operator csr), and a singular solve takes the
  // field's mean out (a sum whose order differs on padded rows): those keep
  // dense rows, the same bits whatever the GPU's row alignment
  // (Backend::make_dense_field). Matrix-free cg takes the backend's rows.
  dense_ = method == LaplaceMethod::Fft ||
           (method == LaplaceMethod::Cg && spec_.op == LaplaceOperator::Csr) || spec_.singular;
  const auto field = [&](const char* what) {
    return dense_ ? be_.make_dense_field(g, what) : be_.make_field(g, what);
  };
  u_ = field("the solution u");
  upload_ms_ = set_initial_state(c, be_, u_);
  args_ = laplace_args<T>(c, false);
  args_.omega = static_cast<T>(spec_.omega);

  // The right-hand side: a field unless constant; the part of it that the
  // boundaries cannot balance (no Dirichlet face) is taken out: prepare_case
  // refused a real one unless remove_mean, so what goes here is that or rounding.
  const Expression rhs(spec_.rhs, c.parameters);
  if (!rhs.is_constant() || spec_.singular || method == LaplaceMethod::Fft) {
    f_ = field("the right-hand side f");
    fill_expression(be_, spec_.rhs, c.parameters, f_);
    if (spec_.singular) {
      // The mismatch of f as stored in T, summed on the host as before
      // (a one-rank case: laplace_check_ranks), then taken out where f lives.
      std::vector<T> f(static_cast<std::size_t>(g.size()));
      be_.download(f_, f.data());
      mean_removed_ = incompatible_mean(g, c.boundary, f.data());
      be_.vec().add_constant(f_, -static_cast<T>(mean_removed_));
    }
    args_.f = f_.data();
    has_f_field_ = true;
  } else {
    args_.f_const = static_cast<T>(rhs(0, 0, 0));
  }
  if (method == LaplaceMethod::Jacobi) {
    v_ = field("the next iterate of u");
    // Sweeps per pass, as heat picks its steps (HeatSolver::pick_time_block),
    // timed from u into v, which the first sweep overwrites anyway.
    if (spec_.time_block > 0) {
      time_block_ = exec_->jacobi_time_block(args_, u_.layout(), spec_.time_block);
    } else {
      tb_auto_ = fastest_time_block<T>(be_, exec_->jacobi_time_block(args_, u_.layout(), 0),
                                       spec_.max_iters, u_.layout().size(),
                                       "laplace: {} Jacobi sweep{} per pass over memory",
                                       [&](int k) {
                                         if (k == 1) exec_->jacobi_sweep(args_, u_, v_);
                                         else exec_->jacobi_steps(args_, k, u_, v_);
                                       });
      time_block_ = tb_auto_->k;
    }
  }

  if (method == LaplaceMethod::Fft) {
    residual_ = 1;  // nothing solved yet; the solve reports its spectral residual
    exec_->prepare_fft(args_, u_.layout());
    return;
  }
  LaplaceArgs<T> fa = args_;  // ‖W·f‖₂: the residual of u with L left out
  fa.lap_coef = 0;
  const double ff = exec_->residual(fa, u_, nullptr);
  double rr0 = 0;
  if (method == LaplaceMethod::Cg) {
    // CG solves A u = b with A = W·(−L) (SPD) and b = −W·f: its residual
    // b − A u is W·(L u − f), the negative of the one jacobi and sor measure.
    args_.f_coef = -1;
    args_.lap_coef = 1;
    r_ = field("the CG residual r");
    p_ = field("the CG direction p");
    q_ = field("the CG product A·p");
    rr0 = exec_->residual(args_, u_, &r_);
    if (spec_.singular) {  // keep r in the range of A (orthogonal to constants)
      be_.vec().add_constant(r_, static_cast<T>(-be_.vec().stats(r_).mean));
      rr0 = be_.vec().dot(r_, r_);
    }
    const LaplaceArgs<T> op = laplace_args<T>(c, true);
    exec_->set_operator(op, u_.layout(), operator_form(spec_.op));
    cg_ = std::make_unique<ConjugateGradient<T>>(be_.vec(), *exec_, u_, r_, p_, q_);
    set_preconditioner(op);
    cg_->start(rr0);
  } else {
    rr0 = exec_->residual(args_, u_, nullptr);
  }
  if (method == LaplaceMethod::Multigrid && spec_.mixed) {
    if constexpr (std::is_same_v<T, double>) {
      mixed_ = std::make_unique<MixedRefinement>(c, be_, args_);
      rr0 = mixed_->start(u_);
    } else {
      throw std::logic_error("laplace.precision: mixed in float32 (the case check refuses it)");
    }
  } else if (method == LaplaceMethod::Multigrid) {
    MgOptions opt;
    opt.cycle = spec_.cycle;
    mg_ = std::make_unique<Multigrid<T>>(be_, g, args_, spec_.singular, opt);
  }
  base_ = ff > 0 ? std::sqrt(ff) : std::sqrt(rr0);
  residual_ = base_ > 0 ? std::sqrt(rr0) / base_ : 0.0;
  if (converged_now()) status_ = LaplaceStatus::Converged;
}

// cg's preconditioner (laplace.preconditioner): Jacobi, z = r over A's
// diagonal W·diag; or one symmetric multigrid V-cycle (2 sweeps each way,
// the colours reversed after the coarse correction) on L₀ z = −r/W.
template <class T>
void LaplaceSolver<T>::set_preconditioner(const LaplaceArgs<T>& op) {
  const LaplacePrecond kind = spec_.preconditioner;
  if (kind == LaplacePrecond::None) return;
  const char* what = "the CG preconditioned residual z";  // r's layout: z·r is a dot
  z_ = dense_ ? be_.make_dense_field(case_.grid, what) : be_.make_field(case_.grid, what);
  if (kind == LaplacePrecond::Jacobi) {
    pre_exec_ = make_multigrid_exec(be_);
    cg_->set_preconditioner(
        [this, op](const Field<T>& r, Field<T>& z) {
          pre_exec_->unweight(op, T(1) / op.diag, r, z);
        },
        z_);
    return;
  }
  MgOptions opt;
  opt.pre = opt.post = 2;
  opt.symmetric = true;
  opt.dense = dense_;
  pre_mg_ = std::make_unique<Multigrid<T>>(be_, case_.grid, op, spec_.singular, opt, true);
  cg_->set_preconditioner([this](const Field<T>& r, Field<T>& z) { pre_mg_->precondition(r, z); },
                          z_);
}

template <class T>
void LaplaceSolver<T>::check_residual() {
  take_residual(exec_->residual(args_, u_, nullptr));
}

template <class T>
void LaplaceSolver<T>::take_residual(double rr) {
  residual_ = base_ > 0 ? std::sqrt(rr) / base_ : 0.0;
  if (!std::isfinite(residual_))
    throw SolverError(fmt::format("{} diverged: the residual is {} at iteration {}",
                                  to_string(spec_.method), residual_, iters_));
  if (converged_now())
    status_ = LaplaceStatus::Converged;
  else if (iters_ >= spec_.max_iters)
    status_ = LaplaceStatus::MaxIters;
  else
    record_check(residual_);
}

// Stalled when, over the second half of the iterations so far (at least 5
// checks, and 50 iterations but for multigrid's cycles), the residual rose
// at some check and its lowest value there is not 0.9 of the lowest before.
// A converging method gains over any such stretch (jacobi slowly but at
// every check: it never rises; cg and sor may rise early, hence the 50
// iterations, over which even a 1024³ cg gains 14 %); one at its rounding
// floor wanders up and down or sits still. So a solve whose residual stops
// falling at iteration N (past those minimums) stops by about 2N.
template <class T>
void LaplaceSolver<T>::record_check(double residual) {
  checks_.push_back({iters_, residual});
  const std::int64_t half = iters_ / 2;
  double before = INFINITY, within = INFINITY;
  int in_window = 0;
  bool rose = false;
  for (std::size_t i = 0; i < checks_.size(); ++i) {
    const Check& c = checks_[i];
    if (c.iteration <= half) {
      before = std::min(before, c.residual);
      continue;
    }
    ++in_window;
    within = std::min(within, c.residual);
    if (i > 0 && c.residual >= checks_[i - 1].residual) rose = true;
  }
  const std::int64_t least = spec_.method == LaplaceMethod::Multigrid ? 0 : 50;
  if (in_window >= 5 && iters_ - half >= least && rose && std::isfinite(before) &&
      within > 0.9 * before)
    status_ = LaplaceStatus::Stalled;
}

template <class T>
std::string LaplaceSolver<T>::stall_message() const {
  Check best{0, INFINITY};
  for (const Check& c : checks_)
    if (c.residual < best.residual) best = c;
  const bool f32 = sizeof(T) == 4;
  return fmt::format(
      "{} stopped making progress: the relative residual has not fallen below {:.3g} (reached "
      "at iteration {}) in the {} iterations since, short of the tolerance {:.3g}. This is the "
      "rounding floor of {} on this problem: {}",
      to_string(spec_.method), best.residual, best.iteration, iters_ - best.iteration,
      spec_.tolerance, f32 ? "float32" : "float64",
      f32 ? fmt::format("run it in float64 (precision: float64), or ask for no less than "
                        "laplace.tolerance: {:.2g}",
                        2 * best.residual)
          : fmt::format("ask for no less than laplace.tolerance: {:.2g}", 2 * best.residual));
}

template <class T>
void LaplaceSolver<T>::iterate(std::int64_t n) {
  if (finished()) return;
  const LaplaceMethod method = spec_.method;
  if (method == LaplaceMethod::Fft) {
    residual_ = exec_->fft_poisson(args_, f_, u_);
    iters_ = 1;
    status_ = LaplaceStatus::Direct;
    return;
  }
  n = std::max<std::int64_t>(0, std::min(n, spec_.max_iters - iters_));
  if (method == LaplaceMethod::Jacobi || method == LaplaceMethod::Sor) {
    sweep(n);
    check_residual();
    return;
  }
  if (method == LaplaceMethod::Multigrid) {
    // a cycle costs several sweeps: the residual after each one decides
    for (std::int64_t s = 0; s < n && !finished(); ++s) {
      if constexpr (std::is_same_v<T, double>) {
        if (mixed_) {  // the refinement's defect pass sums the residual too
          const double rr = mixed_->step(u_, residual_, spec_.tolerance);
          ++iters_;
          take_residual(rr);
          continue;
        }
      }
      mg_->cycle(u_);
      ++iters_;
      check_residual();
    }
    return;
  }
  iterate_cg(n);
}

template <class T>
void LaplaceSolver<T>::iterate_cg(std::int64_t n) {
  // cg: the recurrence residual is known every iteration; when it reaches the
  // tolerance the true residual decides, and CG restarts from it if it has not.
  for (std::int64_t s = 0; s < n && !finished(); ++s) {
    const bool ok = cg_->step();
    if (ok) ++iters_;
    residual_ = base_ > 0 ? std::sqrt(cg_->rr()) / base_ : 0.0;
    if (!std::isfinite(residual_))
      throw SolverError(fmt::format("cg diverged: the residual is {} at iteration {}", residual_,
                                    iters_));
    if (!ok || converged_now()) {
      double rr = exec_->residual(args_, u_, &r_);
      if (spec_.singular) {
        be_.vec().add_constant(r_, static_cast<T>(-be_.vec().stats(r_).mean));
        rr = be_.vec().dot(r_, r_);
      }
      residual_ = base_ > 0 ? std::sqrt(rr) / base_ : 0.0;
      if (converged_now()) {
        status_ = LaplaceStatus::Converged;
        break;
      }
      if (!ok)
        throw SolverError(fmt::format(
            "cg broke down (p·Ap ≤ 0) at iteration {} with the residual at {:.3g}", iters_,
            residual_));
      cg_->start(rr);
    }
    if (iters_ >= spec_.max_iters) status_ = LaplaceStatus::MaxIters;
  }
  // The recurrence residual keeps falling where the true one cannot (float32):
  // the stall check takes the true one, at the end of each chunk.
  if (!finished()) {
    const double rr = exec_->residual(args_, u_, nullptr);
    record_check(base_ > 0 ? std::sqrt(rr) / base_ : 0.0);
  }
}

template <class T>
void LaplaceSolver<T>::sweep(std::int64_t n) {
  const bool jacobi = spec_.method == LaplaceMethod::Jacobi;
  if (!jacobi && spec_.method != LaplaceMethod::Sor)
    throw std::logic_error(std::string("LaplaceSolver::sweep: ") + to_string(spec_.method) +
                           " has no sweeps");
  // Temporal blocking: k Jacobi sweeps a pass while k remain, the rest below.
  const int k = jacobi ? time_block_ : 1;
  std::int64_t s = 0;
  for (; k > 1 && s + k <= n; s += k) {
    exec_->jacobi_steps(args_, k, u_, v_);
    u_.swap(v_);
  }
  // Small grids on the GPU: chunks of sweeps replayed as one graph.
  const std::int64_t chunk = k > 1 ? 1 : be_.steps_per_call(u_.grid());
  while (s < n) {
    const int m = int(std::min<std::int64_t>(chunk, n - s));
    if (jacobi)
      exec_->jacobi_run(args_, m, u_, v_);
    else
      exec_->sor_run(args_, m, u_);
    s += m;
  }
  iters_ += std::max<std::int64_t>(n, 0);
}

template <class T>
void LaplaceSolver<T>::finish() {
  if (status_ == LaplaceStatus::Running) status_ = LaplaceStatus::MaxIters;  // interrupted
  if (spec_.method == LaplaceMethod::Cg && status_ != LaplaceStatus::Converged) {
    const double rr = exec_->residual(args_, u_, nullptr);  // report the true residual
    residual_ = base_ > 0 ? std::sqrt(rr) / base_ : 0.0;
  }
  // u is fixed up to a constant: return the solution of mean 0 (fft's already is).
  if (spec_.singular && spec_.method != LaplaceMethod::Fft)
    be_.vec().add_constant(u_, static_cast<T>(-be_.vec().stats(u_).mean));
}

template <class T>
void LaplaceSolver<T>::save(io::Checkpoint& ck) {
  ck.step = iters_;
  ck.time = double(iters_);
  ck.reals = {{"residual", residual_}, {"residual_base", base_}};
  ck.integers = {{"converged", status_ == LaplaceStatus::Converged ? 1 : 0},
                 {"direct", status_ == LaplaceStatus::Direct ? 1 : 0}};
  ck.fields = {{"u", download_bytes(be_, u_)}};
  if (cg_) {
    ck.reals.emplace_back("cg_rr", cg_->rr());
    if (cg_->preconditioned()) ck.reals.emplace_back("cg_rz", cg_->rz());
    ck.fields.emplace_back("cg_r", download_bytes(be_, r_));
    ck.fields.emplace_back("cg_p", download_bytes(be_, p_));
  }
}

template <class T>
void LaplaceSolver<T>::restore(const io::Checkpoint& ck) {
  upload_bytes(be_, ck.field("u"), u_);
  if (cg_) {
    upload_bytes(be_, ck.field("cg_r"), r_);
    upload_bytes(be_, ck.field("cg_p"), p_);
    cg_->resume(ck.real("cg_rr"), cg_->preconditioned() ? ck.real("cg_rz") : 0.0);
  }
  if constexpr (std::is_same_v<T, double>) {
    if (mixed_) mixed_->start(u_);  // the defect of the restored u
  }
  iters_ = ck.step;
  residual_ = ck.real("residual");
  base_ = ck.real("residual_base");
  status_ = LaplaceStatus::Running;
  if (ck.integer("direct"))
    status_ = LaplaceStatus::Direct;
  else if (ck.integer("converged"))
    status_ = LaplaceStatus::Converged;
  else if (iters_ >= spec_.max_iters)
    status_ = LaplaceStatus::MaxIters;
}

template <class T>
std::size_t LaplaceSolver<T>::bytes_per_iteration() const {
  const std::size_t fb = u_.point_bytes(), fr = has_f_field_ ? fb : 0;
  const LaplaceMethod m = spec_.method;
  if (m == LaplaceMethod::Jacobi) return 2 * fb + fr;   // read u, write v
  if (m == LaplaceMethod::Sor) return 4 * fb + 2 * fr;  // two half sweeps
  if (m == LaplaceMethod::Cg) return 13 * fb;           // spmv 2, dot 2, update 6, p 3
  if (m == LaplaceMethod::Multigrid && mixed_)
    return MixedRefinement::bytes_per_iteration(fb, has_f_field_);
  if (m == LaplaceMethod::Multigrid)  // per level 4 sweeps (u 2, f 1 each), r 3, R 2, P 3,
    return (4 * (2 * fb + fr) + 3 * fb + fr + 5 * fb) * 8 / 7 + 2 * fb + fr;  // + the check
  return 2 * fb + fr;                                   // fft: f in, u out (transforms not counted)
}

template <class T>
MemoryNeed LaplaceSolver<T>::memory_needed(const Case& c) {
  const std::size_t n = static_cast<std::size_t>(c.grid.size());
  const std::size_t field = n * sizeof(T);
  const LaplaceMethod m = c.laplace.method;
  int fields = 2;  // u and f
  std::size_t bytes = 2 * field;
  if (m == LaplaceMethod::Jacobi) fields += 1, bytes += field;
  // cg: r, p, q, and with operator csr the GPU's CSR matrix
  MemoryNeed need;
  if (m == LaplaceMethod::Cg) {
    fields += 3;
    bytes += 3 * field;
    if (c.laplace.op == LaplaceOperator::Csr) {
      need.other = "the operator's sparse (CSR) matrix";
      need.other_bytes = csr_bytes(c.grid, sizeof(T));
      bytes += need.other_bytes;
    }
  }
  if (m == LaplaceMethod::Cg && c.laplace.preconditioner != LaplacePrecond::None) {
    fields += 1;  // z
    bytes += field;
    if (c.laplace.preconditioner == LaplacePrecond::Multigrid)
      bytes += (Multigrid<T>::extra_values(c.grid, c.decomp.get()) + n) * sizeof(T);  // the levels and their f
  }
  if (m == LaplaceMethod::Multigrid && c.laplace.mixed) {  // float32: d, e and the levels
    need.other = "the float32 defect, correction and multigrid levels";
    need.other_bytes = MixedRefinement::extra_bytes(c.grid);
    bytes += need.other_bytes;
  } else if (m == LaplaceMethod::Multigrid) {  // the fine level's residual and the coarse levels
    need.other = "the multigrid levels";
    need.other_bytes = Multigrid<T>::extra_values(c.grid, c.decomp.get()) * sizeof(T);
    bytes += need.other_bytes;
  }
  if (m == LaplaceMethod::Fft) {  // two half spectra, and about as much again for the FFT library
    const std::size_t half = n / std::size_t(c.grid.n[0]) * std::size_t(c.grid.n[0] / 2 + 1);
    need.other = "the spectra and the FFT library's work space";
    need.other_bytes = 3 * half * 2 * sizeof(T);
    bytes += need.other_bytes;
  }
  need.fields = fields;
  need.bytes = bytes + (1u << 20);  // + reduction scratch
  return need;
}

std::size_t csr_bytes(const Grid& g, std::size_t value_bytes) {
  const std::size_t n = static_cast<std::size_t>(g.size());
  const std::size_t index = n * kMaxRowEntries < (std::size_t(1) << 31) ? 4 : 8;
  // row pointers and the count scan's (n + 1 each), then 7 columns and values a row
  return (n + 1) * 2 * index + kMaxRowEntries * n * (index + value_bytes);
}

template LaplaceArgs<float> laplace_args<float>(const Case&, bool);
template LaplaceArgs<double> laplace_args<double>(const Case&, bool);
std::string laplace_setup_line(const Case& c) {
  return fmt::format("laplace: {}, tolerance {:.3g} on the relative residual, at most {} iterations{}",
                     to_string(c.laplace.method), c.laplace.tolerance, c.laplace.max_iters,
                     c.laplace.method == LaplaceMethod::Sor
                         ? fmt::format(", ω = {:.6g}{}", c.laplace.omega,
                                       c.laplace.omega_auto ? " (auto)" : "")
                     : c.laplace.method == LaplaceMethod::Multigrid
                         ? fmt::format(", {}-cycles over {} levels{}",
                                       c.laplace.cycle == MgCycle::F ? "F" : "V",
                                       Multigrid<double>::hierarchy(c.grid).size(),
                                       c.laplace.mixed ? ", mixed precision (float64 residual, "
                                                         "float32 cycles)"
                                                       : "")
                     : c.laplace.method == LaplaceMethod::Cg &&
                             c.laplace.preconditioner != LaplacePrecond::None
                         ? fmt::format(", preconditioner {}", to_string(c.laplace.preconditioner))
                         : "");
}

template class LaplaceSolver<float>;
template class LaplaceSolver<double>;

}  // namespace gf
