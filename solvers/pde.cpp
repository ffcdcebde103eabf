#include "solvers/pde.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/interrupt.hpp"
#include "solvers/expr_fill.hpp"

namespace gf {

std::vector<PdeStagePlan> pde_stages(PdeIntegrator i) {
  // {a0 a1 a2 c  e0 e1 e2 d  keep_acc  t_in t_out}, in, out, u0, acc
  using S = PdeStageCoef;
  switch (i) {
    case PdeIntegrator::Euler:
      return {{S{0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}, 0, 1, -1, -1}};
    case PdeIntegrator::SspRk2:
      return {{S{0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}, 0, 1, -1, -1},
              {S{0.5, 0.5, 0, 0.5, 0, 0, 0, 0, 0, 1, 1}, 1, 0, 0, -1}};
    case PdeIntegrator::SspRk3:
      return {{S{0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}, 0, 1, -1, -1},
              {S{0.75, 0.25, 0, 0.25, 0, 0, 0, 0, 0, 1, 0.5}, 1, 2, 0, -1},
              {S{1.0 / 3, 2.0 / 3, 0, 2.0 / 3, 0, 0, 0, 0, 0, 0.5, 1}, 2, 0, 0, -1}};
    case PdeIntegrator::Rk4:
      return {{S{0, 1, 0, 0.5, 0, 1, 0, 1.0 / 6, 1, 0, 0.5}, 0, 1, -1, 3},
              {S{1, 0, 0, 0.5, 0, 0, 1, 1.0 / 3, 1, 0.5, 0.5}, 1, 2, 0, 3},
              {S{1, 0, 0, 1, 0, 0, 1, 1.0 / 3, 1, 0.5, 1}, 2, 1, 0, 3},
              {S{0, 0, 1, 1.0 / 6, 0, 0, 0, 0, 0, 1, 1}, 1, 0, -1, 3}};
  }
  return {};
}

template <class T>
PdeTerms pde_terms(PdeIntegrator i) {
  PdeTerms terms{0, 127, 63};
  for (const PdeStagePlan& sp : pde_stages(i)) {
    const PdeStageCoef& k = sp.st;
    const PdeStage<T> s{T(k.a0), T(k.a1), T(k.a2), T(k.c), T(k.e0), T(k.e1), T(k.e2), T(k.d), k.keep_acc};
    const unsigned b = pde_stage_terms(s);
    terms.may |= b;
    terms.always &= b;
    terms.one &= pde_stage_ones(s);
  }
  terms.one &= terms.always;
  return terms;
}
template PdeTerms pde_terms<float>(PdeIntegrator);
template PdeTerms pde_terms<double>(PdeIntegrator);

template <class T>
bool pde_equal_spacings(const Grid& g) {
  const auto inv_h2 = [&](int a) { return T(1.0 / (g.h[a] * g.h[a])); };
  for (int a = 1; a < g.ndim; ++a)
    if (inv_h2(a) != inv_h2(0)) return false;
  return true;
}
template bool pde_equal_spacings<float>(const Grid&);
template bool pde_equal_spacings<double>(const Grid&);

int pde_arrays(PdeIntegrator i) {
  switch (i) {
    case PdeIntegrator::Euler:
    case PdeIntegrator::SspRk2: return 2;
    case PdeIntegrator::SspRk3: return 3;
    case PdeIntegrator::Rk4: return 4;
  }
  return 2;
}

namespace {

// The case as one field's initial state sees it: its initial value and
// boundary, with t = 0 for Dirichlet values that read t.
Case field_case(const Case& c, const PdeFieldSpec& f) {
  Case fc = c;
  fc.initial = f.initial;
  fc.boundary = f.boundary;
  fc.parameters.emplace_back("t", 0.0);
  return fc;
}

}  // namespace

template <class T>
PdeSolver<T>::PdeSolver(const Case& c, Backend<T>& backend)
    : case_(c), backend_(backend), stages_(pde_stages(c.pde.integrator)) {
  const Grid& g = c.grid;
  const PdeSpec& p = c.pde;
  const std::size_t nf = p.fields.size();
  arrays_.resize(std::size_t(pde_arrays(p.integrator)));
  for (std::size_t a = 0; a < arrays_.size(); ++a)
    for (const PdeFieldSpec& f : p.fields)
      arrays_[a].push_back(backend.make_field(
          g, a == 0 ? "the field " + f.name : fmt::format("a stage value of {}", f.name)));
  for (const auto& [name, e] : p.coefficients) {
    coefficients_.push_back(backend.make_field(g, "the coefficient " + name));
    fill_expression(backend, e, c.parameters, coefficients_.back());
  }
  args_.l = arrays_[0][0].layout();
  args_.ndim = g.ndim;
  for (int a = 0; a < 3; ++a) {
    args_.origin[a] = g.origin[a];
    args_.h[a] = g.h[a];
    args_.offset[a] = g.offset[a];
    args_.inv_h[a] = T(1.0 / g.h[a]);
    args_.inv_2h[a] = T(1.0 / (2.0 * g.h[a]));
    args_.inv_h2[a] = T(1.0 / (g.h[a] * g.h[a]));
  }
  args_.equal_h = pde_equal_spacings<T>(g) ? 1 : 0;
  for (std::size_t f = 0; f < nf; ++f) {
    const Case fc = field_case(c, p.fields[f]);
    upload_ms_ += set_initial_state(fc, backend, arrays_[0][f]);
    axis_boundaries(fc, args_.bc[f]);
  }
  exec_ = make_pde_exec(backend, p.program, g.ndim, pde_terms<T>(p.integrator), args_.equal_h != 0);
}

template <class T>
void PdeSolver<T>::advance(std::int64_t n) {
  const PdeSpec& p = case_.pde;
  n = std::min(n, p.steps - step_);
  const std::size_t nf = p.fields.size();
  PdeFields<T> f;
  f.in.resize(nf);
  f.u0.resize(nf);
  f.acc.resize(nf);
  f.out.resize(nf);
  for (const Field<T>& c : coefficients_) f.coefficients.push_back(&c);
  for (std::int64_t s = 0; s < n && !stop_requested(); ++s) {
    for (const PdeStagePlan& sp : stages_) {
      for (std::size_t q = 0; q < nf; ++q) {
        f.in[q] = &arrays_[std::size_t(sp.in)][q];
        f.out[q] = &arrays_[std::size_t(sp.out)][q];
        f.u0[q] = sp.u0 >= 0 ? &arrays_[std::size_t(sp.u0)][q] : nullptr;
        f.acc[q] = sp.acc >= 0 ? &arrays_[std::size_t(sp.acc)][q] : nullptr;
      }
      PdeArgs<T> a = args_;
      const PdeStageCoef& k = sp.st;
      a.st = {T(k.a0), T(k.a1), T(k.a2), T(k.c * p.dt), T(k.e0), T(k.e1), T(k.e2),
              T(k.d * p.dt), k.keep_acc, T(t_ + k.t_in * p.dt), T(t_ + k.t_out * p.dt)};
      exec_->stage(a, f);
    }
    // Euler's one stage wrote array 1: it is the state now.
    if (stages_.back().out != 0) std::swap(arrays_[0], arrays_[std::size_t(stages_.back().out)]);
    ++step_;
    t_ = double(step_) * p.dt;
  }
}

template <class T>
std::vector<NamedField<T>> PdeSolver<T>::fields() const {
  std::vector<NamedField<T>> out;
  for (std::size_t f = 0; f < case_.pde.fields.size(); ++f)
    out.push_back({case_.pde.fields[f].name, &arrays_[0][f]});
  return out;
}

template <class T>
std::size_t PdeSolver<T>::bytes_per_step() const {
  std::size_t values = 0;
  for (const PdeStagePlan& sp : stages_)
    values += 2 + (sp.st.a0 != 0 || sp.st.e0 != 0 ? 1 : 0) +
              (sp.st.a2 != 0 || sp.st.e2 != 0 ? 1 : 0) + (sp.st.keep_acc ? 1 : 0);
  return (values * case_.pde.fields.size() + stages_.size() * coefficients_.size()) *
         arrays_[0][0].point_bytes();
}

template <class T>
void PdeSolver<T>::add_timing(nlohmann::json& timing) const {
  timing["integrator"] = to_string(case_.pde.integrator);
  std::vector<std::string> names;
  for (const PdeFieldSpec& f : case_.pde.fields) names.push_back(f.name);
  timing["fields"] = names;
  timing["stages"] = stages_.size();
  if (!exec_->setup_note().empty()) timing["kernel"] = exec_->setup_note();
  timing["compile_s"] = exec_->compile_s();
}

// The next steps depend on every field's state and the step number; dt and
// the integrator are kept to check that the restarted case steps alike.
template <class T>
void PdeSolver<T>::save(io::Checkpoint& ck) {
  ck.step = step_;
  ck.time = t_;
  ck.reals = {{"dt", case_.pde.dt}};
  ck.integers = {{"stages", std::int64_t(stages_.size())}};
  ck.fields.clear();
  for (std::size_t f = 0; f < case_.pde.fields.size(); ++f)
    ck.fields.push_back({case_.pde.fields[f].name, download_bytes(backend_, arrays_[0][f])});
}

template <class T>
void PdeSolver<T>::restore(const io::Checkpoint& ck) {
  for (std::size_t f = 0; f < case_.pde.fields.size(); ++f)
    upload_bytes(backend_, ck.field(case_.pde.fields[f].name), arrays_[0][f]);
  step_ = ck.step;
  t_ = double(step_) * case_.pde.dt;
}

template <class T>
MemoryNeed PdeSolver<T>::memory_needed(const Case& c) {
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  const int fields =
      pde_arrays(c.pde.integrator) * int(c.pde.fields.size()) + int(c.pde.coefficients.size());
  return {fields, fields * field + (1u << 20), {}, 0};
}

std::string pde_setup_line(const Case& c) {
  const PdeSpec& p = c.pde;
  std::string names;
  for (const PdeFieldSpec& f : p.fields) names += (names.empty() ? "" : ", ") + f.name;
  if (!std::isfinite(p.dt_limit))
    return fmt::format("pde: fields {}; {}, dt = {:.6g} (nothing in the equations limits it), {} steps",
                       names, to_string(p.integrator), p.dt, p.steps);
  return fmt::format("pde: fields {}; {}, stability estimate dt_max = {:.6g} ({}); dt = {:.6g} "
                     "({:.3g} of it){}, {} steps",
                     names, to_string(p.integrator), p.dt_limit, p.limit_why, p.dt,
                     p.dt / p.dt_limit, p.dt_auto ? ", dt: auto" : "", p.steps);
}

template class PdeSolver<float>;
template class PdeSolver<double>;

}  // namespace gf
