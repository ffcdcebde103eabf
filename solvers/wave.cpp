#include "solvers/wave.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/core.h>

#include "core/interrupt.hpp"
#include "io/expression.hpp"
#include "solvers/expr_fill.hpp"

namespace gf {

template <class T>
WaveArgs<T> WaveSolver<T>::args(const Case& c, bool first) {
  const Grid& g = c.grid;
  const double dt = c.wave.dt, cdt = c.wave.c * dt;
  WaveArgs<T> a;
  a.ndim = g.ndim;
  for (int ax = 0; ax < g.ndim; ++ax) {
    const double k = (cdt / g.h[ax]) * (cdt / g.h[ax]);
    a.k[ax] = static_cast<T>(first ? 0.5 * k : k);
    a.sigma[ax] = static_cast<T>(first ? -cdt / g.h[ax] : cdt / g.h[ax]);
  }
  axis_boundaries(c, a.bc);
  a.a = first ? T(1) : T(2);
  a.b = first ? static_cast<T>(-dt) : T(-1);
  a.s = static_cast<T>(first ? 0.5 * dt * dt : dt * dt);
  return a;
}

template <class T>
WaveSolver<T>::WaveSolver(const Case& c, Backend<T>& backend)
    : case_(c), backend_(backend), exec_(make_wave_exec(backend)), args_(args(c, false)) {
  const Grid& g = c.grid;
  u_prev_ = backend.make_field(g, "the wave's previous level");
  u_ = backend.make_field(g, "the field u");
  u_next_ = backend.make_field(g, "the wave's next level");
  Expression src(c.wave.source, c.parameters);
  if (src.is_constant()) {
    args_.source_const = static_cast<T>(src(0, 0, 0));
  } else {
    source_ = backend.make_field(g, "the source f(x)");
    fill_expression(backend, c.wave.source, c.parameters, source_);
    args_.source = source_.data();
  }
  upload_ms_ = set_initial_state(c, backend, u_);
  // The level before the first, u⁻¹ = u⁰ − dt·v₀ + ½(c·dt)²Δu⁰ + ½dt²·f,
  // with v₀ in the next level's field for the while.
  fill_expression(backend, c.wave.velocity, c.parameters, u_next_);
  WaveArgs<T> first = args(c, true);
  first.source = args_.source;
  first.source_const = args_.source_const;
  first.w = u_next_.data();
  exec_->step(first, u_, u_prev_);
}

template <class T>
void WaveSolver<T>::advance(std::int64_t n) {
  n = std::min(n, case_.wave.steps - step_);
  for (std::int64_t s = 0; s < n && !stop_requested(); ++s) {
    args_.w = u_prev_.data();
    exec_->step(args_, u_, u_next_);
    u_prev_.swap(u_);   // (uⁿ, uⁿ⁻¹, uⁿ⁺¹)
    u_.swap(u_next_);   // (uⁿ, uⁿ⁺¹, uⁿ⁻¹): the old level's memory takes the next one
    ++step_;
  }
}

// The next steps depend on the two levels and the step number; dt and c
// are kept to check that the restarted case steps alike.
template <class T>
void WaveSolver<T>::save(io::Checkpoint& ck) {
  ck.step = step_;
  ck.time = time();
  ck.reals = {{"dt", case_.wave.dt}, {"c", case_.wave.c}};
  ck.integers = {};
  ck.fields = {{"u", download_bytes(backend_, u_)}, {"u_prev", download_bytes(backend_, u_prev_)}};
}

template <class T>
void WaveSolver<T>::restore(const io::Checkpoint& ck) {
  upload_bytes(backend_, ck.field("u"), u_);
  upload_bytes(backend_, ck.field("u_prev"), u_prev_);
  step_ = ck.step;
}

template <class T>
std::size_t WaveSolver<T>::bytes_per_step() const {
  return (3 + (args_.source ? 1 : 0)) * u_.point_bytes();
}

template <class T>
MemoryNeed WaveSolver<T>::memory_needed(const Case& c) {
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  const int fields = Expression(c.wave.source, c.parameters).is_constant() ? 3 : 4;
  return {fields, fields * field + (1u << 20), {}, 0};
}

std::string wave_setup_line(const Case& c) {
  const WaveSpec& w = c.wave;
  return fmt::format("wave: CFL limit dt_max = 1/(c·√Σ1/h²) = {:.6g}; dt = {:.6g} ({:.3g} of the "
                     "limit){}, {} steps",
                     w.dt_limit, w.dt, w.dt / w.dt_limit, w.dt_auto ? ", dt: auto" : "", w.steps);
}

template class WaveSolver<float>;
template class WaveSolver<double>;

}  // namespace gf
