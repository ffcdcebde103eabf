#include "solvers/heat_var.hpp"

#include <algorithm>
#include <vector>

#include <fmt/core.h>

#include "core/interrupt.hpp"
#include "io/output.hpp"
#include "solvers/expr_fill.hpp"
#include "solvers/heat_time.hpp"
#include "solvers/pde.hpp"

namespace gf {

template <class T>
HeatVarSolver<T>::HeatVarSolver(const Case& c, Backend<T>& backend)
    : case_(c), backend_(backend) {
  const Grid& g = c.grid;
  const HeatSpec& h = c.heat;
  u_ = backend.make_field(g, "the field u");
  u_next_ = backend.make_field(g, "the next step of u");
  alpha_ = backend.make_field(g, "the coefficient alpha");
  if (h.alpha_field.kind == InitialSpec::Kind::Expr) {
    fill_expression(backend, h.alpha_field.expr, c.parameters, alpha_);
  } else {  // the file the case reader checked: its shape, every value > 0 and finite in T
    const std::vector<double> v = io::h5_read_dataset(h.alpha_field.path, h.alpha_field.dataset);
    std::vector<T> a(v.size());
    std::transform(v.begin(), v.end(), a.begin(), [](double d) { return static_cast<T>(d); });
    auto timer = backend.make_timer();
    timer->start();
    backend.upload(a.data(), alpha_);
    upload_ms_ += timer->stop_ms();
  }
  upload_ms_ += set_initial_state(h.boundary_uses_t ? at_time_zero(c) : c, backend, u_);
  args_.l = u_.layout();
  args_.ndim = g.ndim;
  for (int a = 0; a < 3; ++a) {
    args_.origin[a] = g.origin[a];
    args_.h[a] = g.h[a];
    args_.offset[a] = g.offset[a];
    args_.inv_h[a] = T(1.0 / g.h[a]);
    args_.inv_2h[a] = T(1.0 / (2.0 * g.h[a]));
    args_.inv_h2[a] = T(1.0 / (g.h[a] * g.h[a]));
  }
  axis_boundaries(c, args_.bc[0]);
  // every stage is forward Euler's (u + dt·rhs): the kernel is compiled for
  // its terms alone (pde_combine_terms)
  exec_ = make_pde_exec(backend, h.program, g.ndim, pde_terms<T>(PdeIntegrator::Euler));
}

// One forward Euler stage a step, u → u_next_: out = in + dt·rhs(in), the
// source at tⁿ, the Dirichlet values at tⁿ⁺¹; the last step of a t_end run
// shortened as heat's.
template <class T>
void HeatVarSolver<T>::advance(std::int64_t n) {
  const HeatSpec& h = case_.heat;
  const std::int64_t last = h.steps;
  n = std::min(n, last - step_);
  PdeFields<T> f;
  f.in = {&u_};
  f.out = {&u_next_};
  f.u0 = {nullptr};
  f.acc = {nullptr};
  f.coefficients = {&alpha_};
  for (std::int64_t s = 0; s < n && !stop_requested(); ++s) {
    const bool final_short = step_ == last - 1 && h.last_dt != h.dt;
    const double dt = final_short ? h.last_dt : h.dt;
    const double t1 = (step_ + 1 == last && h.use_t_end) ? h.t_end : double(step_ + 1) * h.dt;
    PdeArgs<T> a = args_;
    a.st = PdeStage<T>{};
    a.st.a1 = T(1);
    a.st.c_dt = T(dt);
    a.st.t_in = T(time_);
    a.st.t_out = T(t1);
    f.in[0] = &u_;
    f.out[0] = &u_next_;
    exec_->stage(a, f);
    u_.swap(u_next_);
    ++step_;
    time_ = t1;
  }
}

template <class T>
void HeatVarSolver<T>::add_timing(nlohmann::json& t) const {
  t["time_block"] = 1;
  if (!exec_->setup_note().empty()) t["kernel"] = exec_->setup_note();
  t["compile_s"] = exec_->compile_s();
}

// As HeatSolver's: the step, the time, dt, and u.
template <class T>
void HeatVarSolver<T>::save(io::Checkpoint& ck) {
  ck.step = step_;
  ck.time = time_;
  ck.reals = {{"dt", case_.heat.dt}};
  const bool short_last = step_ == case_.heat.steps && step_ > 0 &&
                          case_.heat.last_dt != case_.heat.dt;
  ck.integers = {{"cg_iterations", 0}, {"short_last_step", short_last ? 1 : 0}};
  ck.fields = {{"u", download_bytes(backend_, u_)}};
}

template <class T>
void HeatVarSolver<T>::restore(const io::Checkpoint& ck) {
  upload_bytes(backend_, ck.field("u"), u_);
  step_ = ck.step;
  time_ = ck.time;
}

template <class T>
MemoryNeed HeatVarSolver<T>::memory_needed(const Case& c) {
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  MemoryNeed m;
  m.fields = 3;  // u, the next step, α
  m.bytes = 3 * field + (1u << 20);
  return m;
}

template class HeatVarSolver<float>;
template class HeatVarSolver<double>;

}  // namespace gf
