#include "solvers/stencil.hpp"

#include <algorithm>

#include "core/interrupt.hpp"

namespace gf {

template <class T>
std::vector<StencilTap<T>> stencil_taps(const Case& c) {
  std::vector<StencilTap<T>> taps;
  for (const StencilPoint& p : c.stencil.points) {
    StencilTap<T> t{};
    for (int a = 0; a < 3; ++a) t.d[a] = p.d[a];
    t.w = static_cast<T>(p.w);
    taps.push_back(t);
  }
  return taps;
}

template <class T>
StencilArgs<T> stencil_args(const Case& c) {
  const Grid& g = c.grid;
  StencilArgs<T> a;
  a.ndim = g.ndim;
  axis_boundaries(c, a.bc);
  a.ntaps = static_cast<int>(c.stencil.points.size());
  a.radius = c.stencil.radius;
  a.update = c.stencil.form == StencilSpec::Form::Update;
  a.coeff = static_cast<T>(c.stencil.coeff);
  return a;
}

template <class T>
StencilSolver<T>::StencilSolver(const Case& c, Backend<T>& backend)
    : case_(c), backend_(backend), exec_(make_stencil_exec(backend)),
      args_(stencil_args<T>(c)) {
  u_ = backend.make_field(c.grid, "the field u");
  u_next_ = backend.make_field(c.grid, "the next step of u");
  exec_->set_taps(stencil_taps<T>(c));
  upload_ms_ = set_initial_state(c, backend, u_);
  // Steps per pass, as heat picks them (HeatSolver::pick_time_block).
  const Layout& l = u_.layout();
  if (c.stencil.time_block > 0) {
    time_block_ = exec_->time_block(args_, l, c.stencil.time_block);
  } else {
    tb_auto_ = fastest_time_block<T>(backend, exec_->time_block(args_, l, 0), c.stencil.steps,
                                     l.size(), "stencil: {} step{} per pass over memory",
                                     [&](int k) {
                                       if (k == 1) exec_->step(args_, u_, u_next_);
                                       else exec_->steps(args_, k, u_, u_next_);
                                     });
    time_block_ = tb_auto_->k;
  }
}

template <class T>
void StencilSolver<T>::advance(std::int64_t n) {
  n = std::min(n, case_.stencil.steps - step_);
  // Temporal blocking: k steps a pass while k remain, the rest one at a time.
  const int k = time_block_;
  std::int64_t s = 0;
  for (; k > 1 && s + k <= n && !stop_requested(); s += k) {
    exec_->steps(args_, k, u_, u_next_);
    u_.swap(u_next_);
    step_ += k;
  }
  // Small grids on the GPU: chunks of steps replayed as one graph.
  const int chunk = k > 1 ? 1 : backend_.steps_per_call(case_.grid);
  while (chunk > 1 && s < n && !stop_requested()) {
    const int m = int(std::min<std::int64_t>(chunk, n - s));
    exec_->run(args_, m, u_, u_next_);
    s += m;
    step_ += m;
  }
  for (; s < n && !stop_requested(); ++s) {
    exec_->step(args_, u_, u_next_);
    u_.swap(u_next_);
    ++step_;
  }
}

template <class T>
void StencilSolver<T>::save(io::Checkpoint& ck) {
  ck.step = step_;
  ck.time = double(step_);
  ck.reals.clear();
  ck.integers.clear();
  ck.fields = {{"u", download_bytes(backend_, u_)}};
}

template <class T>
void StencilSolver<T>::restore(const io::Checkpoint& ck) {
  upload_bytes(backend_, ck.field("u"), u_);
  step_ = ck.step;
}

template <class T>
MemoryNeed StencilSolver<T>::memory_needed(const Case& c) {
  return {2, 2 * static_cast<std::size_t>(c.grid.size()) * sizeof(T) + (1u << 20), {}, 0};
}

template std::vector<StencilTap<float>> stencil_taps<float>(const Case&);
template std::vector<StencilTap<double>> stencil_taps<double>(const Case&);
template StencilArgs<float> stencil_args<float>(const Case&);
template StencilArgs<double> stencil_args<double>(const Case&);
template class StencilSolver<float>;
template class StencilSolver<double>;

}  // namespace gf
