// The pde: section (docs/cases.md#pde): the fields with their initial values
// and boundaries, the coefficients, the equations, the integrator, the step
// and its stability estimate, the duration.
#include "io/case_pde.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "grid/view.hpp"
#include "io/case_sections.hpp"
#include "io/expression.hpp"
#include "io/output.hpp"
#include "io/pde_program.hpp"

namespace gf::pde_case {

using case_sections::distinct_digits;
using case_sections::read_dt_number;
using case_sections::read_even_duration;
using case_sections::num;
using schema::Map;
using schema::Value;
namespace fs = std::filesystem;

namespace {

// The stability regions of the integrators: how far they reach along the
// negative real axis (diffusion, reactions, upwind differences) and along the
// imaginary axis (central first derivatives).
struct Region {
  double real, imag;
};
Region region(PdeIntegrator i) {
  switch (i) {
    case PdeIntegrator::Euler: return {2.0, 0.0};
    case PdeIntegrator::SspRk2: return {2.0, 0.0};
    case PdeIntegrator::SspRk3: return {2.51, 1.73};
    case PdeIntegrator::Rk4: return {2.78, 2.82};
  }
  return {2.0, 0.0};
}

void check_name(const Value& key, const std::string& name, const Case& c,
                const std::vector<std::string>& taken) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') ||
      !std::all_of(name.begin(), name.end(),
                   [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }))
    key.fail(fmt::format("'{}' is not a name (letters, digits and _, not starting with a digit)",
                         name));
  if (is_reserved_name(name))
    key.fail(fmt::format("'{}' is taken (x, y, z, t, the operators lap, dx, dy, dz, dx_up, dy_up, "
                         "dz_up, div, grad, and names starting with __)",
                         name));
  if (const std::string why = schema::parameter_name_problem(name); !why.empty()) key.fail(why);
  for (const auto& [p, v] : c.parameters)
    if (p == name) key.fail(fmt::format("'{}' is a parameter already", name));
  if (std::find(taken.begin(), taken.end(), name) != taken.end())
    key.fail(fmt::format("'{}' is named twice", name));
}

// A field's own initial: and boundary:, else the case's.
void read_field(const Value& key, const Value& v, Case& c, const fs::path& base_dir,
                PdeFieldSpec& f) {
  f.initial = c.initial;
  f.boundary = c.boundary;
  if (!v.present() || v.node().IsNull()) return;
  const Map m = v.map(schema::kPdeFieldKeys);
  if (m.has("initial")) {
    f.own_initial = true;
    f.initial = InitialSpec{};
    case_sections::read_initial(m, c.parameters, base_dir, c.grid, f.initial);
  }
  if (m.has("boundary")) {
    f.own_boundary = true;
    Grid g = c.grid;
    f.boundary = case_sections::read_boundary(m, c.parameters, g, c.workload);
    for (int a = 0; a < c.grid.ndim; ++a)
      if (g.periodic[a] != c.grid.periodic[a])
        m.get("boundary").fail(fmt::format(
            "the {} axis is {} for the case's boundary but {} for field {}: an axis is periodic "
            "for every field or for none (the grid's spacing depends on it)",
            char('x' + a), c.grid.periodic[a] ? "periodic" : "not periodic",
            g.periodic[a] ? "periodic" : "not", f.name));
  }
  (void)key;
}

void read_fields(const Map& m, Case& c, const fs::path& base_dir, PdeSpec& p) {
  const Value v = m.require("fields");
  std::vector<std::string> taken;
  auto add = [&](const Value& key, const Value& opts) {
    PdeFieldSpec f;
    f.name = key.text();
    check_name(key, f.name, c, taken);
    taken.push_back(f.name);
    read_field(key, opts, c, base_dir, f);
    p.fields.push_back(std::move(f));
  };
  if (v.node().IsSequence()) {
    for (const Value& e : v.list()) add(e, Value(e.sources(), YAML::Node(), e.key()));
  } else if (v.node().IsMap()) {
    for (const auto& [k, opts] : v.items()) add(k, opts);
  } else {
    v.fail("expected a list of field names or a map of fields, got " + v.describe());
  }
  if (p.fields.empty()) v.fail("expected at least one field");
  if (int(p.fields.size()) > kPdeMaxFields)
    v.fail(fmt::format("{} fields; a case may have at most {}", p.fields.size(), kPdeMaxFields));
}

void read_coefficients(const Map& m, const Case& c, PdeSpec& p) {
  if (!m.has("coefficients")) return;
  std::vector<std::string> taken;
  for (const PdeFieldSpec& f : p.fields) taken.push_back(f.name);
  for (const auto& [k, v] : m.get("coefficients").items()) {
    const std::string name = k.text();
    check_name(k, name, c, taken);
    taken.push_back(name);
    Expr e = v.expr();
    check_expression(e, c.parameters);
    p.coefficients.emplace_back(name, e);
  }
  p.named_coefficients = p.coefficients.size();
}

void read_equations(const Map& m, PdeSpec& p) {
  const Value eqs = m.require("equations");
  std::vector<bool> given(p.fields.size(), false);
  for (const auto& [k, v] : eqs.items()) {
    const std::string name = k.text();
    const auto it = std::find_if(p.fields.begin(), p.fields.end(),
                                 [&](const PdeFieldSpec& f) { return f.name == name; });
    if (it == p.fields.end()) {
      std::string names;
      for (const PdeFieldSpec& f : p.fields) names += (names.empty() ? "" : ", ") + f.name;
      k.fail(fmt::format("'{}' is not a field (pde.fields has {})", name, names));
    }
    it->equation = v.expr();
    given[std::size_t(it - p.fields.begin())] = true;
  }
  for (std::size_t f = 0; f < p.fields.size(); ++f)
    if (!given[f])
      eqs.fail(fmt::format("field '{}' has no equation: give its right-hand side, {}: ...",
                           p.fields[f].name, p.fields[f].name));
}

void read_dt(const Value& v, PdeSpec& p) {
  double dt = 0;
  p.dt_auto = !read_dt_number(v, dt);
  if (p.dt_auto) {
    if (!std::isfinite(p.dt_limit))
      v.fail("nothing in the equations limits the step (no derivative or field moves a "
             "right-hand side), so dt: auto has nothing to go by: give dt");
    p.dt = 0.9 * p.dt_limit;
    return;
  }
  if (dt > p.dt_limit * (1 + 1e-12)) {
    const auto [shown_dt, shown_limit] = distinct_digits(dt, p.dt_limit);
    v.fail(fmt::format("{} is above the stability estimate {} of {} ({}); use a smaller dt{}",
                       shown_dt, shown_limit, to_string(p.integrator), p.limit_why,
                       p.integrator == PdeIntegrator::Rk4
                           ? " or dt: auto"
                           : ", dt: auto, or an integrator with a larger stability region (rk4)"));
  }
  p.dt = dt;
}

}  // namespace

PdeLimit stability_limit(const Case& c, const PdeSpec& p, const std::vector<Expression>& rhs) {
  const Grid& g = c.grid;
  const PdeProgram& prog = p.program;
  const int nf = int(p.fields.size()), nc = int(p.coefficients.size());
  // The initial values and coefficients at up to 16 points an axis.
  std::vector<std::optional<Expression>> init(nf + nc);
  std::vector<std::vector<double>> file(nf);
  std::vector<double> constant(nf + nc, 0.0);
  for (int f = 0; f < nf; ++f) {
    const InitialSpec& in = p.fields[f].initial;
    if (in.kind == InitialSpec::Kind::Expr) init[f].emplace(in.expr, c.parameters);
    else if (in.kind == InitialSpec::Kind::Value) constant[f] = in.value;
    else file[f] = io::h5_read_dataset(in.path, in.dataset);
  }
  for (int k = 0; k < nc; ++k) init[nf + k].emplace(p.coefficients[k].second, c.parameters);
  std::int64_t samples[3] = {1, 1, 1};
  for (int a = 0; a < g.ndim; ++a) samples[a] = std::min<std::int64_t>(g.n[a], 16);
  double h2sum = 0;
  for (int a = 0; a < g.ndim; ++a) h2sum += 1.0 / (g.h[a] * g.h[a]);
  const Layout dense = Layout::dense(g.n.data());
  double worst = 0;
  std::string why;
  std::vector<double> v(kPdeFirstInput + prog.inputs.size(), 0.0);
  for (std::int64_t sk = 0; sk < samples[2]; ++sk)
    for (std::int64_t sj = 0; sj < samples[1]; ++sj)
      for (std::int64_t si = 0; si < samples[0]; ++si) {
        const std::int64_t q[3] = {si * (g.n[0] - 1) / std::max<std::int64_t>(1, samples[0] - 1),
                                   sj * (g.n[1] - 1) / std::max<std::int64_t>(1, samples[1] - 1),
                                   sk * (g.n[2] - 1) / std::max<std::int64_t>(1, samples[2] - 1)};
        for (int a = 0; a < 3; ++a) v[a] = a < g.ndim ? g.coord(a, q[a]) : 0.0;
        v[3] = 0;
        std::vector<double> value(nf + nc);
        for (int f = 0; f < nf + nc; ++f) {
          if (init[f]) value[f] = (*init[f])(v[0], v[1], v[2]);
          else if (f < nf && !file[f].empty())
            value[f] = file[f][std::size_t(dense.index(q[0], q[1], q[2]))];
          else value[f] = constant[f];
        }
        for (std::size_t k = 0; k < prog.inputs.size(); ++k)
          v[kPdeFirstInput + k] = prog.inputs[k].kind == PdeInputKind::Value ? value[prog.inputs[k].field] : 0.0;
        for (int f = 0; f < nf; ++f) {
          auto at = [&](const std::vector<double>& vv) { return rhs[std::size_t(f)].at(vv); };
          double re = 0, im = 0;
          std::string top;
          double top_rate = 0;
          for (std::size_t k = 0; k < prog.inputs.size(); ++k) {
            const PdeInput& in = prog.inputs[k];
            const double x0 = v[kPdeFirstInput + k], d = 1e-4 * std::max(1.0, std::abs(x0));
            v[kPdeFirstInput + k] = x0 + d;
            const double up = at(v);
            v[kPdeFirstInput + k] = x0 - d;
            const double dn = at(v);
            v[kPdeFirstInput + k] = x0;
            const double slope = std::abs(up - dn) / (2 * d);
            if (!std::isfinite(slope)) continue;
            double rate = 0;
            bool imag = false;
            switch (in.kind) {
              case PdeInputKind::Value: rate = slope; break;
              case PdeInputKind::Lap: rate = 4 * h2sum * slope; break;
              case PdeInputKind::DivK: rate = 4 * h2sum * slope * std::abs(value[in.k]); break;
              case PdeInputKind::Dm:
              case PdeInputKind::Dp: rate = 2 * slope / g.h[in.axis]; break;
              case PdeInputKind::D1:
                rate = slope / g.h[in.axis];
                imag = true;
                break;
            }
            (imag ? im : re) += rate;
            if (rate > top_rate) {
              top_rate = rate;
              top = fmt::format("{} of {} in the equation of {}",
                                in.kind == PdeInputKind::Value ? "the reaction"
                                : in.kind == PdeInputKind::D1   ? "the central advection"
                                : in.kind == PdeInputKind::Dm || in.kind == PdeInputKind::Dp
                                    ? "the upwind advection"
                                    : "the diffusion",
                                in.field < nf ? p.fields[in.field].name : "a coefficient",
                                p.fields[f].name);
            }
          }
          const Region r = region(p.integrator);
          // Along the imaginary axis Euler and SSP-RK2 are stable only with
          // damping beside: their central advection counts as if on the real axis.
          const double need = re / r.real + (r.imag > 0 ? im / r.imag : im / r.real);
          if (need > worst) {
            worst = need;
            why = top;
          }
        }
      }
  if (worst <= 0) return {std::numeric_limits<double>::infinity(), "nothing limits it"};
  return {1.0 / worst, why};
}

void read(const Map& top, Case& c, const fs::path& base_dir) {
  PdeSpec& p = c.pde;
  const Map m = top.require("pde").map(schema::kPdeKeys);
  for (const auto& [name, value] : c.parameters)
    if (name == "t")
      top.get("parameters").fail("a parameter named t: in a pde case t is the time, which the "
                                 "equations and Dirichlet values read; rename the parameter");
  read_fields(m, c, base_dir, p);
  read_coefficients(m, c, p);
  read_equations(m, p);
  if (m.has("integrator")) {
    const std::string i = m.get("integrator").choice(schema::kPdeIntegrators);
    p.integrator = i == "euler"    ? PdeIntegrator::Euler
                   : i == "ssprk2" ? PdeIntegrator::SspRk2
                   : i == "rk4"    ? PdeIntegrator::Rk4
                                   : PdeIntegrator::SspRk3;
  }
  const std::vector<Expression> rhs = compile(p, c.parameters, c.grid.ndim);
  const PdeLimit lim = stability_limit(c, p, rhs);
  p.dt_limit = lim.dt;
  p.limit_why = lim.why;
  read_dt(m.get("dt"), p);
  read_even_duration(m, p);
}

void emit(YAML::Emitter& out, const Case& c) {
  const PdeSpec& p = c.pde;
  out << YAML::Key << "pde" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "fields" << YAML::Value << YAML::BeginMap;
  for (const PdeFieldSpec& f : p.fields) {
    out << YAML::Key << f.name << YAML::Value << YAML::BeginMap;
    case_sections::emit_initial(out, f.initial);
    case_sections::emit_faces(out, f.boundary, c.grid.ndim);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (p.named_coefficients > 0) {
    out << YAML::Key << "coefficients" << YAML::Value << YAML::BeginMap;
    for (std::size_t k = 0; k < p.named_coefficients; ++k)
      out << YAML::Key << p.coefficients[k].first << YAML::Value << p.coefficients[k].second.text;
    out << YAML::EndMap;
  }
  out << YAML::Key << "equations" << YAML::Value << YAML::BeginMap;
  for (const PdeFieldSpec& f : p.fields)
    out << YAML::Key << f.name << YAML::Value << f.equation.text;
  out << YAML::EndMap;
  out << YAML::Key << "integrator" << YAML::Value << to_string(p.integrator);
  out << YAML::Key << "dt" << YAML::Value << num(p.dt);
  if (std::isfinite(p.dt_limit))
    out << YAML::Comment(fmt::format("{:.3g} × the stability estimate {}{}", p.dt / p.dt_limit,
                                     num(p.dt_limit), p.dt_auto ? " (auto)" : ""));
  if (p.use_t_end)
    out << YAML::Key << "t_end" << YAML::Value << num(p.t_end)
        << YAML::Comment(fmt::format("{} steps", p.steps));
  else
    out << YAML::Key << "steps" << YAML::Value << p.steps;
  out << YAML::EndMap;
}

}  // namespace gf::pde_case
