// The heat: section (SPEC §3): α, the scheme, dt (auto, or checked against
// the explicit stability limit), steps or t_end, the source, the implicit
// schemes' solver and time_block; echoed in the resolved case.
#include "io/case_sections.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>

#include "io/expression.hpp"

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
  h.dt_auto = !v.present() || (v.node().IsScalar() && v.node().Scalar() == "auto");
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
  double dt = 0;
  if (!v.node().IsScalar() || !YAML::convert<double>::decode(v.node(), dt) || !std::isfinite(dt) ||
      !(dt > 0))
    v.fail("expected auto or a number > 0, got " + v.describe());
  if (!h.implicit() && dt > h.dt_limit * (1 + 1e-12)) {
    const auto [shown_dt, shown_limit] = distinct_digits(dt, h.dt_limit);
    const std::string formula =
        equal_spacing(g) ? fmt::format("h²/(2·{}·α)", g.ndim) : std::string("1/(2·α·Σ1/h²)");
    v.fail(fmt::format(
        "{} exceeds the explicit stability limit {} ({}); use dt: auto or a scheme: implicit",
        shown_dt, shown_limit, formula));
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
  if (m.has("preconditioner")) h.solver_preconditioner = read_preconditioner(m.get("preconditioner"));
}

int read_heat_time_block(const Value& v, const HeatSpec& h) {
  const int k = read_time_block(v);
  if (k > 1 && h.implicit())
    v.fail(fmt::format("temporal blocking is for the explicit scheme, not {}",
                       to_string(h.scheme)));
  return k;
}

}  // namespace

void read_heat(const Map& top, const Params& params, const Grid& g, Precision prec, HeatSpec& h) {
  const Map m = top.require("heat").map(schema::kHeatKeys);
  h.alpha = m.require("alpha").positive();
  if (m.has("scheme")) h.scheme = scheme_named(m.get("scheme").choice(schema::kSchemes));
  h.dt_limit = stability_limit(g, h.alpha);
  read_dt(m.get("dt"), m.has("scheme") ? m.get("scheme") : m.self(), g, h);
  read_duration(m, h);
  h.source = m.has("source") ? m.get("source").expr() : Expr{"0", m.self().loc(), m.path("source")};
  check_expression(h.source, params);
  if (m.has("solver")) read_solver(m.get("solver"), h);
  if (h.solver_tolerance_asked) h.solver_tolerance = *h.solver_tolerance_asked;
  if (h.solver_max_iters_asked) h.solver_max_iters = *h.solver_max_iters_asked;
  h.solver_tolerance = effective_tolerance(h.solver_tolerance, prec);
  if (m.has("time_block")) h.time_block = read_heat_time_block(m.get("time_block"), h);
}

void emit_heat(YAML::Emitter& out, const HeatSpec& h) {
  out << YAML::Key << "heat" << YAML::Value << YAML::BeginMap;
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
