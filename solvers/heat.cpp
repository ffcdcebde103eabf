#include "solvers/heat.hpp"

#include <algorithm>

#include "core/interrupt.hpp"

#include "io/expression.hpp"

namespace gf {

template <class T>
HeatSolver<T>::HeatSolver(const Case& c, Backend<T>& backend)
    : case_(c), backend_(backend) {
  const Grid& g = c.grid;
  u_ = backend.make_field(g, "the field u");
  u_next_ = backend.make_field(g, "the next step of u");
  Expression src(c.heat.source, c.parameters);
  if (src.is_constant()) {
    source_const_ = src(0, 0, 0);
  } else {
    has_source_field_ = true;
    std::vector<T> s(static_cast<std::size_t>(g.size()));
    sample_expression<T>(c.heat.source, c.parameters, g, s.data());
    source_ = backend.make_field(g, "the source s(x)");
    backend.upload(s.data(), source_);
  }
  upload_ms_ = upload_initial_state(c, backend, u_);
}

template <class T>
HeatArgs<T> HeatSolver<T>::args_for(double dt) const {
  const Grid& g = case_.grid;
  HeatArgs<T> a;
  a.ndim = g.ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.n[ax] = g.n[ax];
    a.c[ax] = ax < g.ndim ? static_cast<T>(case_.heat.alpha * dt / (g.h[ax] * g.h[ax])) : T(0);
  }
  axis_boundaries(case_, a.bc);
  a.dt = static_cast<T>(dt);
  a.source = has_source_field_ ? source_.data() : nullptr;
  a.source_const = static_cast<T>(source_const_);
  return a;
}

template <class T>
void HeatSolver<T>::advance(std::int64_t n) {
  const std::int64_t last = case_.heat.steps;
  n = std::min(n, last - step_);
  const HeatArgs<T> regular = args_for(case_.heat.dt);
  // A Ctrl-C ends the advance after the step in progress (the driver then
  // writes the state reached).
  for (std::int64_t s = 0; s < n && !interrupt_requested(); ++s) {
    const bool final_short = step_ == last - 1 && case_.heat.last_dt != case_.heat.dt;
    const double dt = final_short ? case_.heat.last_dt : case_.heat.dt;
    backend_.heat_step(final_short ? args_for(dt) : regular, u_, u_next_);
    u_.swap(u_next_);
    ++step_;
    // Times are step·dt, not a running sum; a t_end run ends at t_end exactly.
    time_ = (step_ == last && case_.heat.use_t_end) ? case_.heat.t_end
                                                    : double(step_) * case_.heat.dt;
  }
}

template <class T>
std::size_t HeatSolver<T>::bytes_per_step() const {
  return (2 + (has_source_field_ ? 1 : 0)) * u_.bytes();
}

template <class T>
MemoryNeed HeatSolver<T>::memory_needed(const Case& c) {
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  Expression src(c.heat.source, c.parameters);
  const int fields = src.is_constant() ? 2 : 3;
  return {fields, fields * field + (1u << 20)};  // + reduction scratch
}

template class HeatSolver<float>;
template class HeatSolver<double>;

}  // namespace gf
