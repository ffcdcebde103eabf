// The wave: section (docs/cases.md#wave): the speed, the step and its CFL
// check, the duration, the initial velocity and the source.
#include "io/case_wave.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/expression.hpp"

namespace gf::wave_case {

using schema::Map;
using schema::Value;

double cfl_limit(const Grid& g, double c) {
  double sum = 0;
  for (int a = 0; a < g.ndim; ++a) sum += 1.0 / (g.h[a] * g.h[a]);
  return 1.0 / (c * std::sqrt(sum));
}

namespace {

std::string num(double v) { return fmt::format("{}", v); }

// dt and the limit with as few digits as still tell them apart (2 at least).
std::pair<std::string, std::string> distinct(double dt, double limit) {
  for (int p = 2;; ++p) {
    std::string a = fmt::format("{:.{}g}", dt, p), b = fmt::format("{:.{}g}", limit, p);
    if (a != b || p >= 17) return {a, b};
  }
}

void read_dt(const Value& v, WaveSpec& w) {
  w.dt_auto = !v.present() || (v.node().IsScalar() && v.node().Scalar() == "auto");
  if (w.dt_auto) {
    w.dt = 0.9 * w.dt_limit;
    return;
  }
  double dt = 0;
  if (!v.node().IsScalar() || !YAML::convert<double>::decode(v.node(), dt) || !std::isfinite(dt) ||
      !(dt > 0))
    v.fail("expected auto or a number > 0, got " + v.describe());
  if (dt > w.dt_limit * (1 + 1e-12)) {
    const auto [shown_dt, shown_limit] = distinct(dt, w.dt_limit);
    v.fail(fmt::format("{} is above the CFL stability limit 1/(c·√Σ1/h²) = {}; use a dt ≤ that, "
                       "or dt: auto",
                       shown_dt, shown_limit));
  }
  w.dt = dt;
}

// steps, or t_end in equal steps of at most dt (leapfrog keeps one dt).
void read_duration(const Map& m, WaveSpec& w) {
  if (!m.has("steps") && !m.has("t_end"))
    m.self().fail("missing required key 'steps' or 't_end'");
  if (m.has("steps") && m.has("t_end")) {
    const std::vector<std::string> keys = m.keys();
    const auto later = std::find_if(keys.rbegin(), keys.rend(),
                                    [](const auto& k) { return k == "steps" || k == "t_end"; });
    m.key_node(*later).fail("give only one of 'steps' and 't_end'");
  }
  if (m.has("steps")) {
    w.steps = m.get("steps").integer(0);
    return;
  }
  const Value v = m.get("t_end");
  w.use_t_end = true;
  w.t_end = v.positive();
  const double r = w.t_end / w.dt;
  if (r > 1e15) v.fail(fmt::format("t_end / dt = {:.3g} steps is more than gridforge can run", r));
  // t_end = 10·dt must give 10 steps, not 11 for a rounding error of 1 ulp.
  const double nearest = std::round(r);
  w.steps = std::max<std::int64_t>(
      1, std::int64_t(std::abs(r - nearest) <= 1e-9 * std::max(1.0, r) ? nearest : std::ceil(r)));
  w.dt = w.t_end / double(w.steps);
}

Expr expr_or_zero(const Map& m, const char* key, const Params& params) {
  const Expr e = m.has(key) ? m.get(key).expr() : Expr{"0", m.self().loc(), m.path(key)};
  check_expression(e, params);
  return e;
}

}  // namespace

void read(const Map& top, const Case& c, WaveSpec& w) {
  const Map m = top.require("wave").map(schema::kWaveKeys);
  w.c = m.require("c").positive();
  w.dt_limit = cfl_limit(c.grid, w.c);
  read_dt(m.get("dt"), w);
  read_duration(m, w);
  w.velocity = expr_or_zero(m, "velocity", c.parameters);
  w.source = expr_or_zero(m, "source", c.parameters);
}

void emit(YAML::Emitter& out, const WaveSpec& w) {
  out << YAML::Key << "wave" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "c" << YAML::Value << num(w.c);
  out << YAML::Key << "dt" << YAML::Value << num(w.dt)
      << YAML::Comment(fmt::format("{:.3g} × the CFL limit {}{}", w.dt / w.dt_limit,
                                   num(w.dt_limit), w.dt_auto ? " (auto)" : ""));
  if (w.use_t_end)
    out << YAML::Key << "t_end" << YAML::Value << num(w.t_end)
        << YAML::Comment(fmt::format("{} steps", w.steps));
  else
    out << YAML::Key << "steps" << YAML::Value << w.steps;
  out << YAML::Key << "velocity" << YAML::Value << w.velocity.text;
  out << YAML::Key << "source" << YAML::Value << w.source.text;
  out << YAML::EndMap;
}

}  // namespace gf::wave_case
