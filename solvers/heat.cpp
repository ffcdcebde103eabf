#include "solvers/heat.hpp"

#include <algorithm>

#include "core/interrupt.hpp"

#include "io/expression.hpp"
#include "io/output.hpp"

namespace gf {

namespace {

// Points of face f (x- x+ y- y+ z- z+) as (i, j, k) ranges.
void for_each_face_point(const Grid& g, int f, auto&& fn) {
  const int axis = f / 2;
  std::int64_t lo[3] = {0, 0, 0}, hi[3] = {g.n[0], g.n[1], g.n[2]};
  lo[axis] = (f % 2 == 0) ? 0 : g.n[axis] - 1;
  hi[axis] = lo[axis] + 1;
  for (std::int64_t k = lo[2]; k < hi[2]; ++k)
    for (std::int64_t j = lo[1]; j < hi[1]; ++j)
      for (std::int64_t i = lo[0]; i < hi[0]; ++i) fn(i, j, k);
}

template <class T>
void fill_initial(const Case& c, std::vector<T>& u) {
  const InitialSpec& in = c.initial;
  switch (in.kind) {
    case InitialSpec::Kind::Value:
      std::fill(u.begin(), u.end(), static_cast<T>(in.value));
      break;
    case InitialSpec::Kind::Expr:
      sample_expression<T>(in.expr, c.parameters, c.grid, u.data());
      break;
    case InitialSpec::Kind::File: {
      const std::vector<double> v = io::h5_read_dataset(in.path, in.dataset);
      if (v.size() != u.size())
        throw CaseError(SourceLoc{c.file}, "initial.file.dataset",
                        "dataset '" + in.dataset + "' in '" + in.path + "' has " +
                            std::to_string(v.size()) + " values; the grid has " +
                            std::to_string(u.size()));
      std::transform(v.begin(), v.end(), u.begin(), [](double d) { return static_cast<T>(d); });
      break;
    }
  }
}

}  // namespace

template <class T>
std::vector<T> heat_initial_state(const Case& c) {
  const Grid& g = c.grid;
  std::vector<T> u(static_cast<std::size_t>(g.size()));
  fill_initial(c, u);
  for (int f = 0; f < 2 * g.ndim; ++f) {
    const FaceBc& bc = c.boundary[f];
    if (bc.type != BcType::Dirichlet) continue;
    Expression value(bc.value, c.parameters);
    for_each_face_point(g, f, [&](std::int64_t i, std::int64_t j, std::int64_t k) {
      u[g.index(i, j, k)] = static_cast<T>(value(g.coord(0, i), g.coord(1, j), g.coord(2, k)));
    });
  }
  return u;
}

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
  const std::vector<T> u0 = heat_initial_state<T>(c);
  auto timer = backend.make_timer();
  timer->start();
  backend.upload(u0.data(), u_);
  upload_ms_ = timer->stop_ms();
}

template <class T>
HeatArgs<T> HeatSolver<T>::args_for(double dt) const {
  const Grid& g = case_.grid;
  HeatArgs<T> a;
  a.ndim = g.ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.n[ax] = g.n[ax];
    a.c[ax] = ax < g.ndim ? static_cast<T>(case_.heat.alpha * dt / (g.h[ax] * g.h[ax])) : T(0);
    if (ax >= g.ndim) continue;
    const FaceBc& lo = case_.boundary[2 * ax];
    const FaceBc& hi = case_.boundary[2 * ax + 1];
    a.bc[ax].lo = lo.type;
    a.bc[ax].hi = hi.type;
    a.bc[ax].ghost_lo = static_cast<T>(2.0 * g.h[ax] * lo.gradient);
    a.bc[ax].ghost_hi = static_cast<T>(2.0 * g.h[ax] * hi.gradient);
  }
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
std::size_t HeatSolver<T>::memory_needed(const Case& c) {
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  Expression src(c.heat.source, c.parameters);
  return (src.is_constant() ? 2 : 3) * field + (1u << 20);  // + reduction scratch
}

std::vector<std::int64_t> output_steps(std::int64_t total, std::int64_t every) {
  std::vector<std::int64_t> s;
  if (every > 0)
    for (std::int64_t k = 0; k < total; k += every) s.push_back(k);
  s.push_back(total);
  return s;
}

template std::vector<float> heat_initial_state<float>(const Case&);
template std::vector<double> heat_initial_state<double>(const Case&);
template class HeatSolver<float>;
template class HeatSolver<double>;

}  // namespace gf
