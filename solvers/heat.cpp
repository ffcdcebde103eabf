#include "solvers/heat.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/interrupt.hpp"
#include "core/rank_errors.hpp"

#include "io/expression.hpp"
#include "solvers/expr_fill.hpp"
#include "solvers/heat_var.hpp"

namespace gf {

template <class T>
HeatSolver<T>::HeatSolver(const Case& c, Backend<T>& backend)
    : case_(c), backend_(backend), exec_(make_heat_exec(backend)) {
  const Grid& g = c.grid;
  // The implicit schemes' fields go through cuSPARSE's SpMV with
  // heat.solver.operator csr, whose sums depend on the matrix's rows: dense
  // rows then, so that they are the same bits whatever the GPU's row
  // alignment (Backend::make_dense_field). Matrix-free: the backend's rows.
  dense_ = c.heat.implicit() && c.heat.solver_operator == LaplaceOperator::Csr;
  precond_ = heat_preconditioner(c, backend.is_gpu(), shared_by_ranks(backend));
  const auto field = [&](const char* what) {
    return dense_ ? backend.make_dense_field(g, what) : backend.make_field(g, what);
  };
  u_ = field("the field u");
  u_next_ = field("the next step of u");
  if (c.heat.source_uses_t) {  // filled at each step's time
    has_source_field_ = true;
    source_ = field("the source s(x, t)");
    source_in_time_ = std::make_unique<TimeFill<T>>(backend, c.parameters);
    source_in_time_->add(c.heat.source, Box::whole(source_.layout().n));
  } else if (Expression src(c.heat.source, c.parameters); src.is_constant()) {
    source_const_ = src(0, 0, 0);
  } else {
    has_source_field_ = true;
    source_ = field("the source s(x)");
    fill_expression(backend, c.heat.source, c.parameters, source_);
  }
  if (c.heat.boundary_uses_t) {
    upload_ms_ = set_initial_state(at_time_zero(c), backend, u_);
    faces_in_time_ = std::make_unique<TimeFill<T>>(backend, c.parameters);
    add_time_faces(c, *faces_in_time_);
  } else {
    upload_ms_ = set_initial_state(c, backend, u_);
  }
  if (c.heat.implicit()) {
    delta_ = field("the change of u in a step");
    r_ = field("the CG residual r");
    p_ = field("the CG direction p");
    q_ = field("the CG product A·p");
    implicit_ = make_laplace_exec(backend);
    cg_ = std::make_unique<ConjugateGradient<T>>(backend.vec(), *implicit_, delta_, r_, p_, q_);
  }
  // at setup, so that timing auto's candidates is not counted as compute
  time_block_ = pick_time_block(args_for(c.heat.dt));
}

// θ-scheme in correction form, δ = uⁿ⁺¹ − uⁿ (0 at Dirichlet points):
//   (W + θ·α·dt·W·(−L₀)) δ = W·(α·dt·L uⁿ + dt·s)
// (θ = 1 backward Euler, 1/2 Crank–Nicolson), an SPD system solved by CG to
// ‖r‖₂ ≤ tolerance·‖b‖₂; L uⁿ carries the Dirichlet values and Neumann gradients.
template <class T>
void HeatSolver<T>::implicit_step(double dt) {
  const HeatSpec& h = case_.heat;
  LaplaceArgs<T> b = laplace_args<T>(case_, false);
  b.f = has_source_field_ ? source_.data() : nullptr;
  b.f_const = static_cast<T>(source_const_);
  b.f_coef = static_cast<T>(dt);
  b.lap_coef = static_cast<T>(h.alpha * dt);
  if (dt != operator_dt_) {
    LaplaceArgs<T> op = laplace_args<T>(case_, true);
    op.op_scale = static_cast<T>(h.theta() * h.alpha * dt);
    op.op_shift = T(1);
    implicit_->set_operator(op, u_.layout(), operator_form(h.solver_operator));
    set_preconditioner(op);
    operator_dt_ = dt;
  }
  const double bb = implicit_->residual(b, u_, &r_);
  if (!std::isfinite(bb))
    throw SolverError(fmt::format("diverged: field u has NaN/Inf values at step {} (t = {:.6g})",
                                  step_, time_));
  if (!(bb > 0)) return;  // steady: δ = 0
  backend_.vec().axpby(T(0), r_, T(0), delta_);
  cg_->start(bb);
  const double target = h.solver_tolerance * std::sqrt(bb);
  std::int64_t it = 0;
  while (std::sqrt(cg_->rr()) > target) {
    if (it >= h.solver_max_iters)
      throw SolverError(fmt::format(
          "{} heat step {} (t = {:.6g}): CG did not converge in {} iterations: residual {:.3g} "
          "> tolerance {:.3g}; raise heat.solver.max_iters or the tolerance, or take a smaller dt",
          to_string(h.scheme), step_ + 1, time_, it, std::sqrt(cg_->rr() / bb),
          h.solver_tolerance));
    if (!cg_->step()) break;  // nothing left to reduce
    ++it;
  }
  cg_iterations_ += it;
  backend_.vec().axpby(T(1), delta_, T(1), u_);
}

// The source at the scheme's time (explicit: tⁿ; backward Euler: tⁿ⁺¹;
// Crank–Nicolson: the midpoint), and the Dirichlet values: the new state
// holds them at tⁿ⁺¹. The implicit step's right-hand side reads its base's
// faces as (1 − θ)·g(tⁿ) + θ·g(tⁿ⁺¹) (L is affine in them: backward Euler
// reads g(tⁿ⁺¹), Crank–Nicolson the mean of the two), δ is 0 on the faces,
// and the faces are set to g(tⁿ⁺¹) after.
template <class T>
void HeatSolver<T>::step_in_time(double dt, double t1, const HeatArgs<T>& args) {
  const double t0 = time_, theta = case_.heat.theta();
  if (source_in_time_)
    source_in_time_->fill(source_, !cg_ ? t0 : theta == 1 ? t1 : t0 + 0.5 * (t1 - t0));
  if (!cg_) {
    exec_->step(args, u_, u_next_);
    u_.swap(u_next_);
    if (faces_in_time_) faces_in_time_->fill(u_, t1);
    return;
  }
  if (faces_in_time_ && theta == 1) {
    faces_in_time_->fill(u_, t1);
  } else if (faces_in_time_) {
    // u_next_ = u with its faces at tⁿ⁺¹; u = ½u + ½u_next_: the same inside,
    // bit for bit (halving is exact), the mean of the two on the faces.
    backend_.vec().axpby(T(1), u_, T(0), u_next_);
    faces_in_time_->fill(u_next_, t1);
    backend_.vec().axpby(T(0.5), u_next_, T(0.5), u_);
  }
  implicit_step(dt);
  if (faces_in_time_ && theta != 1) faces_in_time_->fill(u_, t1);
}

LaplacePrecond heat_preconditioner(const Case& c, bool gpu, bool ranks) {
  const LaplacePrecond p = c.heat.solver_preconditioner;
  if (p != LaplacePrecond::Auto) return p;
  if (ranks) return LaplacePrecond::Jacobi;
  return gpu && c.grid.size() >= kHeatMultigridPoints ? LaplacePrecond::Multigrid
                                                      : LaplacePrecond::Jacobi;
}

// heat.solver.preconditioner: Jacobi, z = r over A's diagonal
// W·(θ·α·dt·diag + 1); or one symmetric multigrid V-cycle on
// (L₀ − I/(θ·α·dt)) z = −r/(θ·α·dt·W) (Multigrid::precondition), its
// hierarchy made again when dt changes (a shortened last step).
template <class T>
void HeatSolver<T>::set_preconditioner(const LaplaceArgs<T>& op) {
  const LaplacePrecond kind = precond_;
  if (kind == LaplacePrecond::None) return;
  const Grid& g = case_.grid;
  if (!z_.data()) {
    const char* what = "the CG preconditioned residual z";
    z_ = dense_ ? backend_.make_dense_field(g, what) : backend_.make_field(g, what);
  }
  if (kind == LaplacePrecond::Jacobi) {
    if (!pre_exec_) pre_exec_ = make_multigrid_exec(backend_);
    const T s = static_cast<T>(1.0 / (double(op.op_scale) * double(op.diag) + double(op.op_shift)));
    cg_->set_preconditioner(
        [this, op, s](const Field<T>& r, Field<T>& z) { pre_exec_->unweight(op, s, r, z); }, z_);
    return;
  }
  MgOptions opt;
  opt.pre = opt.post = 2;
  opt.symmetric = true;
  opt.dense = dense_;
  pre_mg_.reset();  // the old hierarchy's memory first
  pre_mg_ = std::make_unique<Multigrid<T>>(backend_, g, op, false, opt, true);
  cg_->set_preconditioner([this](const Field<T>& r, Field<T>& z) { pre_mg_->precondition(r, z); },
                          z_);
}

template <class T>
HeatArgs<T> HeatSolver<T>::args_for(double dt) const {
  const Grid& g = case_.grid;
  HeatArgs<T> a;
  a.ndim = g.ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.c[ax] = ax < g.ndim ? static_cast<T>(case_.heat.alpha * dt / (g.h[ax] * g.h[ax])) : T(0);
  }
  axis_boundaries(case_, a.bc);
  a.dt = static_cast<T>(dt);
  a.source = has_source_field_ ? source_.data() : nullptr;
  a.source_const = static_cast<T>(source_const_);
  return a;
}

// Steps per pass: heat.time_block when the case sets it (1 where the backend
// has no such pass); auto: the depth that runs fastest here, timed on the
// run's own grid and fields, from u into u_next_, which the next step
// overwrites anyway (fastest_time_block; blocked passes are bit for bit the
// single steps, so the choice changes only the speed). Done once, at setup.
template <class T>
int HeatSolver<T>::pick_time_block(const HeatArgs<T>& regular) {
  if (cg_ || case_.heat.uses_t()) return 1;  // t: evaluated between steps
  const Layout& l = u_.layout();
  if (case_.heat.time_block > 0) return exec_->time_block(regular, l, case_.heat.time_block);
  tb_auto_ = fastest_time_block<T>(backend_, exec_->time_block(regular, l, 0), case_.heat.steps,
                                   l.size(), "heat: {} explicit step{} per pass over memory",
                                   [&](int k) {
                                     if (k == 1) exec_->step(regular, u_, u_next_);
                                     else exec_->steps(regular, k, u_, u_next_);
                                   });
  return tb_auto_->k;
}

template <class T>
void HeatSolver<T>::advance(std::int64_t n) {
  const std::int64_t last = case_.heat.steps;
  n = std::min(n, last - step_);
  const HeatArgs<T> regular = args_for(case_.heat.dt);
  // Temporal blocking: k steps of the regular dt per pass (never across the
  // shortened last step of a t_end run), the rest one at a time.
  const int k = time_block_;
  const std::int64_t regular_last = case_.heat.last_dt != case_.heat.dt ? last - 1 : last;
  std::int64_t s = 0;
  // A Ctrl-C ends the advance after the pass in progress (the driver then
  // writes the state reached).
  for (; k > 1 && s + k <= n && step_ + k <= regular_last && !stop_requested(); s += k) {
    exec_->steps(regular, k, u_, u_next_);
    u_.swap(u_next_);
    step_ += k;
    time_ = (step_ == last && case_.heat.use_t_end) ? case_.heat.t_end
                                                    : double(step_) * case_.heat.dt;
  }
  // Small grids on the GPU: chunks of regular steps replayed as one graph
  // (never the shortened last step, whose dt differs).
  const int chunk = (cg_ || k > 1 || case_.heat.uses_t()) ? 1 : backend_.steps_per_call(case_.grid);
  while (chunk > 1 && s < n && step_ < regular_last && !stop_requested()) {
    const int m = int(std::min<std::int64_t>({chunk, n - s, regular_last - step_}));
    exec_->run(regular, m, u_, u_next_);
    s += m;
    step_ += m;
    time_ = (step_ == last && case_.heat.use_t_end) ? case_.heat.t_end
                                                    : double(step_) * case_.heat.dt;
  }
  for (; s < n && !stop_requested(); ++s) {
    const bool final_short = step_ == last - 1 && case_.heat.last_dt != case_.heat.dt;
    const double dt = final_short ? case_.heat.last_dt : case_.heat.dt;
    if (case_.heat.uses_t()) {
      const double t1 = (step_ + 1 == last && case_.heat.use_t_end) ? case_.heat.t_end
                                                                    : double(step_ + 1) * case_.heat.dt;
      step_in_time(dt, t1, final_short ? args_for(dt) : regular);
    } else if (cg_) {
      implicit_step(dt);
    } else {
      exec_->step(final_short ? args_for(dt) : regular, u_, u_next_);
      u_.swap(u_next_);
    }
    ++step_;
    // Times are step·dt, not a running sum; a t_end run ends at t_end exactly.
    time_ = (step_ == last && case_.heat.use_t_end) ? case_.heat.t_end
                                                    : double(step_) * case_.heat.dt;
  }
}

// The next step depends on u, the step number (the last step may be short)
// and the case; the implicit schemes start each step's CG from δ = 0, so
// they carry nothing from one step to the next either. dt is kept to check
// that the restarted case steps with the same one.
template <class T>
void HeatSolver<T>::save(io::Checkpoint& ck) {
  ck.step = step_;
  ck.time = time_;
  ck.reals = {{"dt", case_.heat.dt}};
  // A run that ended on a step shortened to land on t_end holds a state that
  // steps of dt cannot continue (its time is not step·dt).
  const bool short_last = step_ == case_.heat.steps && step_ > 0 &&
                          case_.heat.last_dt != case_.heat.dt;
  ck.integers = {{"cg_iterations", cg_iterations_}, {"short_last_step", short_last ? 1 : 0}};
  ck.fields = {{"u", download_bytes(backend_, u_)}};
}

template <class T>
void HeatSolver<T>::restore(const io::Checkpoint& ck) {
  upload_bytes(backend_, ck.field("u"), u_);
  step_ = ck.step;
  time_ = ck.time;
  cg_iterations_ = ck.integer("cg_iterations");
}

template <class T>
std::size_t HeatSolver<T>::bytes_per_step() const {
  const std::size_t explicit_bytes = (2 + (has_source_field_ ? 1 : 0)) * u_.point_bytes();
  if (!cg_) return explicit_bytes;
  // b (read u, s; write r), δ = 0, u += δ, and 13 field passes per CG iteration.
  const double its = step_ > 0 ? double(cg_iterations_) / double(step_) : 0.0;
  return explicit_bytes + 4 * u_.point_bytes() + std::size_t(13.0 * its * double(u_.point_bytes()));
}

template <class T>
MemoryNeed HeatSolver<T>::memory_needed(const Case& c) {
  if (c.heat.variable_alpha()) return HeatVarSolver<T>::memory_needed(c);
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  int fields = c.heat.source_uses_t || !Expression(c.heat.source, c.parameters).is_constant() ? 3 : 2;
  std::size_t bytes = fields * field + (1u << 20);  // + reduction scratch
  if (c.heat.implicit()) {  // δ, r, p, q, and with operator csr the GPU's CSR matrix
    fields += 4;
    bytes += 4 * field;
    if (c.heat.solver_operator == LaplaceOperator::Csr) bytes += csr_bytes(c.grid, sizeof(T));
    // auto: what a GPU takes (the CPU's Jacobi needs less)
    const LaplacePrecond pre = heat_preconditioner(c, true, c.decomp != nullptr);
    if (pre != LaplacePrecond::None) {
      fields += 1;  // z
      bytes += field;
      if (pre == LaplacePrecond::Multigrid)  // the levels and their f
        bytes += (Multigrid<T>::extra_values(c.grid, c.decomp.get()) + std::size_t(c.grid.size())) *
                 sizeof(T);
    }
  }
  return {fields, bytes, {}, 0};
}

std::string heat_setup_line(const Case& c) {
  if (c.heat.implicit())
    return fmt::format("{} scheme: stable for any dt; dt = {:.6g} is {:.3g} × the explicit limit "
                       "1/(2·α·Σ1/h²) = {:.6g}; each step is a CG solve (tolerance {:.3g}, at most "
                       "{} iterations{})",
                       to_string(c.heat.scheme), c.heat.dt, c.heat.dt / c.heat.dt_limit, c.heat.dt_limit,
                       c.heat.solver_tolerance, c.heat.solver_max_iters,
                       c.heat.solver_preconditioner == LaplacePrecond::None ? std::string()
                       : c.heat.solver_preconditioner == LaplacePrecond::Auto
                           ? (heat_preconditioner(c, true, false) == LaplacePrecond::Multigrid
                                  ? std::string(", preconditioner auto: multigrid on a GPU, "
                                                "jacobi on the CPU")
                                  : fmt::format(", preconditioner auto: jacobi (multigrid on a "
                                                "GPU from {} points)",
                                                kHeatMultigridPoints))
                           : fmt::format(", preconditioner {}",
                                         to_string(c.heat.solver_preconditioner)));
  if (c.heat.variable_alpha())
    return fmt::format("variable alpha from {:.6g} to {:.6g} (div(alpha*grad(u)) on the pde "
                       "executor); explicit stability limit dt_max = 1/(2·max α·Σ1/h²) = {:.6g}; "
                       "dt = {:.6g} ({:.3g} of the limit){}",
                       c.heat.alpha_min, c.heat.alpha, c.heat.dt_limit, c.heat.dt,
                       c.heat.dt / c.heat.dt_limit, c.heat.dt_auto ? ", dt: auto" : "");
  return fmt::format("explicit stability limit dt_max = 1/(2·α·Σ1/h²) = {:.6g}; dt = {:.6g} "
                     "({:.3g} of the limit){}",
                     c.heat.dt_limit, c.heat.dt, c.heat.dt / c.heat.dt_limit,
                     c.heat.dt_auto ? ", dt: auto" : "");
}

template class HeatSolver<float>;
template class HeatSolver<double>;

}  // namespace gf
