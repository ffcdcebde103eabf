// The heat: section (SPEC §3): α, the scheme, dt (auto, or checked against
// the explicit stability limit), steps or t_end, the source, the implicit
// schemes' solver and time_block; echoed in the resolved case.
#include "io/case_sections.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "io/expression.hpp"
#include "io/output.hpp"
#include "io/pde_program.hpp"

namespace gf {

const char* to_string(HeatScheme s) {
  switch (s) {
    case HeatScheme::Explicit: return "explicit";
    case HeatScheme::Implicit: return "implicit";
    case HeatScheme::CrankNicolson: return "crank-nicolson";
  }
  return "?";
}

std::optional<HeatScheme> parse_heat_scheme(std::string_view name) {
  for (HeatScheme s : {HeatScheme::Explicit, HeatScheme::Implicit, HeatScheme::CrankNicolson})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

}  // namespace gf

namespace gf::case_sections {

namespace {

namespace fs = std::filesystem;

// A name schema::kSchemes allows.
HeatScheme scheme_named(std::string_view name) {
  if (const auto s = parse_heat_scheme(name)) return *s;
  throw std::logic_error("heat scheme without an enum value");  // kSchemes drifted
}

// FTCS is stable for dt ≤ 1 / (2α Σ 1/h²), i.e. h²/(2·d·α) on equal spacing.
double stability_limit(const Grid& g, double alpha) {
  double sum = 0;
  for (int a = 0; a < g.ndim; ++a) sum += 1.0 / (g.h[a] * g.h[a]);
  return 1.0 / (2.0 * alpha * sum);
}

void read_dt(const Value& v, const Value& scheme, const Grid& g, HeatSpec& h) {
  double dt = 0;
  h.dt_auto = !read_dt_number(v, dt);
  if (h.dt_auto) {
    // auto is a fraction of the explicit limit; an implicit scheme is there to go past it.
    if (h.implicit())
      (v.present() ? v : scheme)
          .fail(fmt::format("scheme {} needs a number for dt (auto is for the explicit scheme); "
                            "any dt > 0 is stable",
                            to_string(h.scheme)));
    h.dt = 0.9 * h.dt_limit;
    return;
  }
  if (!h.implicit() && dt > h.dt_limit * (1 + 1e-12)) {
    const auto [shown_dt, shown_limit] = distinct_digits(dt, h.dt_limit);
    const char* a = h.variable_alpha() ? "max α" : "α";
    const std::string formula = equal_spacing(g) ? fmt::format("h²/(2·{}·{})", g.ndim, a)
                                                 : fmt::format("1/(2·{}·Σ1/h²)", a);
    v.fail(fmt::format("{} exceeds the explicit stability limit {} ({}); use dt: auto or {}",
                       shown_dt, shown_limit, formula,
                       h.variable_alpha() ? "a smaller dt" : "a scheme: implicit"));
  }
  h.dt = dt;
}

// steps, or t_end with the last step shortened to land on it.
void read_duration(const Map& m, HeatSpec& h) {
  const bool has_steps = exactly_one_of(m, "steps", "t_end") == "steps";
  h.last_dt = h.dt;
  if (has_steps) {
    h.steps = m.get("steps").integer(0);
    return;
  }
  const Value v = m.get("t_end");
  h.use_t_end = true;
  h.t_end = v.positive();
  h.steps = steps_to_reach(v, h.t_end, h.dt);
  h.last_dt = h.t_end - double(h.steps - 1) * h.dt;
}

// Accepted for implicit schemes (SPEC §3) and echoed in resolved_yaml, unused
// by the explicit scheme.
void read_solver(const Value& v, HeatSpec& h) {
  const Map m = v.map(schema::kSolverKeys);
  if (m.has("tolerance")) h.solver_tolerance_asked = m.get("tolerance").positive();
  if (m.has("max_iters")) h.solver_max_iters_asked = m.get("max_iters").integer(1);
  if (m.has("operator")) h.solver_operator = read_operator(m.get("operator"));
  if (m.has("preconditioner"))
    h.solver_preconditioner = read_preconditioner(m.get("preconditioner"), true);
}

int read_heat_time_block(const Value& v, const HeatSpec& h, const std::string& reads_t) {
  const int k = read_time_block(v);
  if (k > 1 && h.implicit())
    v.fail(fmt::format("temporal blocking is for the explicit scheme, not {}",
                       to_string(h.scheme)));
  if (k > 1 && !reads_t.empty())
    v.fail(fmt::format("{} reads t, which is evaluated again between steps, not inside a pass of "
                       "several: use time_block: 1 or auto",
                       reads_t));
  if (k > 1 && h.variable_alpha())
    v.fail("a variable alpha runs one step a pass (on the pde executor): use time_block: 1 or auto");
  return k;
}

// A scalar that reads as a number (1e400 included, which positive() refuses
// as not finite): heat.alpha as a number, as before expressions.
bool looks_numeric(const Value& v) {
  if (!v.node().IsScalar()) return !v.node().IsMap() && !v.node().IsSequence();  // nothing
  double d = 0;
  if (YAML::convert<double>::decode(v.node(), d)) return true;  // .nan, .inf too
  const std::string& t = v.node().Scalar();
  char* end = nullptr;
  (void)std::strtod(t.c_str(), &end);
  return !t.empty() && end && *end == '\0';
}

// α over every point of the grid, from its expression or its file: the
// smallest must be > 0 and the largest finite in the run's precision.
void alpha_range(const Value& at, const Params& params, const Grid& g, Precision prec,
                 HeatSpec& h) {
  const InitialSpec& a = h.alpha_field;
  std::vector<double> file;
  std::optional<Expression> e;
  if (a.kind == InitialSpec::Kind::File) file = io::h5_read_dataset(a.path, a.dataset);
  else e.emplace(a.expr, params);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const double p[3] = {g.coord(0, i), g.coord(1, j), g.coord(2, k)};
        const double v = e ? (*e)(p[0], p[1], p[2]) : file[std::size_t(g.index(i, j, k))];
        if (!std::isfinite(v) || !(v > 0))
          at.fail(fmt::format("alpha is {:g} at ({}) = ({:g}); it must be a number > 0 at every "
                              "point",
                              v, std::string("x, y, z").substr(0, 3 * g.ndim - 2),
                              fmt::join(p, p + g.ndim, ", ")));
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (prec == Precision::Float32 && hi > double(std::numeric_limits<float>::max()))
    at.fail(fmt::format("alpha reaches {:g}, which does not fit in float32", hi));
  h.alpha = hi;
  h.alpha_min = lo;
}

// heat.alpha: a number (as before), an expression of x, y, z (one that
// names none of them is a number), or {value | expr | file} as initial:.
// Returns where a variable alpha was given (its faults), or the key.
Value read_alpha(const Map& m, const Case& c, const fs::path& base_dir, HeatSpec& h) {
  const Value v = m.require("alpha");
  InitialSpec& a = h.alpha_field;
  if (looks_numeric(v)) {
    h.alpha = h.alpha_min = v.positive();
    return v;
  }
  if (v.node().IsMap()) {
    read_field_values(v, c.parameters, base_dir, c.grid, a);
  } else if (!v.node().IsScalar()) {
    v.fail("expected a number, an expression of x, y, z or a map of value, expr or file, got " +
           v.describe());
  } else {
    a.kind = InitialSpec::Kind::Expr;
    a.expr = v.expr();
    a.loc = v.loc();
  }
  const Value at = v.node().IsMap() ? v.map(schema::kInitialKeys).get(
                                          a.kind == InitialSpec::Kind::File  ? "file"
                                          : a.kind == InitialSpec::Kind::Expr ? "expr"
                                                                               : "value")
                                    : v;
  if (a.kind == InitialSpec::Kind::Value) {
    if (!(a.value > 0)) at.fail(fmt::format("expected a number > 0, got {:g}", a.value));
    h.alpha = h.alpha_min = a.value;
    return at;
  }
  if (a.kind == InitialSpec::Kind::Expr) {
    const Expression x(a.expr, c.parameters);  // x, y, z only: t is an unknown name here
    if (x.is_constant()) {
      const double val = x(0, 0, 0);
      if (!std::isfinite(val) || !(val > 0))
        at.fail(fmt::format("alpha is {:g}; it must be a number > 0", val));
      h.alpha = h.alpha_min = val;
      a = InitialSpec{};
      a.value = val;
      return at;
    }
  }
  alpha_range(a.kind == InitialSpec::Kind::File ? at.map(schema::kInitialFileKeys).get("dataset")
                                                : at,
              c.parameters, c.grid, c.precision, h);
  return at;
}

// A variable alpha as the pde program of one field u (its initial state and
// boundary the case's): ∂u/∂t = div(α·grad(u)) + source, by forward Euler.
void compile_variable_alpha(const Case& c, const Expression& source, HeatSpec& h) {
  PdeSpec p;
  PdeFieldSpec u;
  u.name = "u";
  u.initial = c.initial;
  u.boundary = c.boundary;
  const bool no_source = source.is_constant() && !source.uses("t") && source(0, 0, 0) == 0;
  u.equation = Expr{no_source ? std::string("div(__alpha*grad(u))")
                              : "div(__alpha*grad(u)) + (" + h.source.text + ")",
                    h.source.loc, h.source.key};
  p.fields.push_back(u);
  p.coefficients.emplace_back("__alpha", Expr{"0", h.alpha_field.loc, "heat.alpha"});
  p.named_coefficients = 1;
  p.integrator = PdeIntegrator::Euler;
  (void)pde_case::compile(p, c.parameters, c.grid.ndim);
  h.program = p.program;
}

}  // namespace

void read_heat(const Map& top, const Case& c, const fs::path& base_dir, HeatSpec& h) {
  const Map m = top.require("heat").map(schema::kHeatKeys);
  const Params& params = c.parameters;
  const Grid& g = c.grid;
  const Precision prec = c.precision;
  // t is the time in the source and the Dirichlet values: not a parameter's name.
  for (const auto& [name, value] : params)
    if (name == "t")
      top.get("parameters").fail("a parameter named t: in a heat case t is the time, which the "
                                 "source and Dirichlet values may read; rename the parameter");
  const Value alpha_at = read_alpha(m, c, base_dir, h);
  if (m.has("scheme")) h.scheme = scheme_named(m.get("scheme").choice(schema::kSchemes));
  if (h.variable_alpha() && h.implicit())
    alpha_at.fail(fmt::format("a variable alpha runs with scheme explicit only, not {}: give a "
                              "number, or use scheme: explicit",
                              to_string(h.scheme)));
  h.dt_limit = stability_limit(g, h.alpha);
  read_dt(m.get("dt"), m.has("scheme") ? m.get("scheme") : m.self(), g, h);
  read_duration(m, h);
  h.source = m.has("source") ? m.get("source").expr() : Expr{"0", m.self().loc(), m.path("source")};
  const Expression source(h.source, params, {"t"});
  h.source_uses_t = source.uses("t");
  std::string reads_t = h.source_uses_t ? h.source.key : std::string();
  for (int f = 0; f < 2 * g.ndim; ++f) {
    const FaceBc& bc = c.boundary[std::size_t(f)];
    if (bc.type != BcType::Dirichlet || !Expression(bc.value, params, {"t"}).uses("t")) continue;
    h.boundary_uses_t = true;
    if (reads_t.empty()) reads_t = bc.value.key;
  }
  if (h.variable_alpha()) compile_variable_alpha(c, source, h);
  if (m.has("solver")) read_solver(m.get("solver"), h);
  if (h.solver_tolerance_asked) h.solver_tolerance = *h.solver_tolerance_asked;
  if (h.solver_max_iters_asked) h.solver_max_iters = *h.solver_max_iters_asked;
  h.solver_tolerance = effective_tolerance(h.solver_tolerance, prec);
  if (m.has("time_block")) h.time_block = read_heat_time_block(m.get("time_block"), h, reads_t);
}

void emit_heat(YAML::Emitter& out, const HeatSpec& h) {
  out << YAML::Key << "heat" << YAML::Value << YAML::BeginMap;
  if (h.alpha_field.kind == InitialSpec::Kind::Expr)
    out << YAML::Key << "alpha" << YAML::Value << h.alpha_field.expr.text
        << YAML::Comment(fmt::format("from {:.6g} to {:.6g} over the grid", h.alpha_min, h.alpha));
  else if (h.alpha_field.kind == InitialSpec::Kind::File)
    out << YAML::Key << "alpha" << YAML::Value << YAML::BeginMap << YAML::Key << "file"
        << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "path" << YAML::Value
        << h.alpha_field.path << YAML::Key << "dataset" << YAML::Value << h.alpha_field.dataset
        << YAML::EndMap << YAML::EndMap
        << YAML::Comment(fmt::format("from {:.6g} to {:.6g} over the grid", h.alpha_min, h.alpha));
  else
    out << YAML::Key << "alpha" << YAML::Value << num(h.alpha);
  out << YAML::Key << "scheme" << YAML::Value << to_string(h.scheme);
  if (h.implicit())
    out << YAML::Key << "dt" << YAML::Value << num(h.dt)
        << YAML::Comment(fmt::format("{:.3g} × the explicit stability limit {}",
                                     h.dt / h.dt_limit, num(h.dt_limit)));
  else
    out << YAML::Key << "dt" << YAML::Value << num(h.dt)
        << YAML::Comment(fmt::format("{}stability limit {}", h.dt_auto ? "auto: 0.9 × " : "",
                                     num(h.dt_limit)));
  if (h.use_t_end)
    out << YAML::Key << "t_end" << YAML::Value << num(h.t_end)
        << YAML::Comment(fmt::format("{} steps, the last one {}", h.steps, num(h.last_dt)));
  else
    out << YAML::Key << "steps" << YAML::Value << h.steps;
  out << YAML::Key << "source" << YAML::Value << h.source.text;
  if (h.time_block > 0) out << YAML::Key << "time_block" << YAML::Value << h.time_block;
  if (h.implicit()) {  // resolved in full: the implicit schemes use it
    out << YAML::Key << "solver" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "tolerance" << YAML::Value << num(h.solver_tolerance);
    out << YAML::Key << "max_iters" << YAML::Value << h.solver_max_iters;
    out << YAML::Key << "operator" << YAML::Value << to_string(h.solver_operator);
    out << YAML::Key << "preconditioner" << YAML::Value << to_string(h.solver_preconditioner);
    out << YAML::EndMap;
  } else if (h.solver_tolerance_asked || h.solver_max_iters_asked) {
    out << YAML::Key << "solver" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (h.solver_tolerance_asked)
      out << YAML::Key << "tolerance" << YAML::Value << num(*h.solver_tolerance_asked);
    if (h.solver_max_iters_asked)
      out << YAML::Key << "max_iters" << YAML::Value << *h.solver_max_iters_asked;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

}  // namespace gf::case_sections
