// The wave: section (docs/cases.md#wave): the speed, the step and its CFL
// check, the duration, the initial velocity and the source.
#include "io/case_wave.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/case_sections.hpp"
#include "io/expression.hpp"

namespace gf::wave_case {

using case_sections::distinct_digits;
using case_sections::read_dt_number;
using case_sections::read_even_duration;
using case_sections::num;
using schema::Map;
using schema::Value;

double cfl_limit(const Grid& g, double c) {
  double sum = 0;
  for (int a = 0; a < g.ndim; ++a) sum += 1.0 / (g.h[a] * g.h[a]);
  return 1.0 / (c * std::sqrt(sum));
}

namespace {

void read_dt(const Value& v, WaveSpec& w) {
  double dt = 0;
  w.dt_auto = !read_dt_number(v, dt);
  if (w.dt_auto) {
    w.dt = 0.9 * w.dt_limit;
    return;
  }
  if (dt > w.dt_limit * (1 + 1e-12)) {
    const auto [shown_dt, shown_limit] = distinct_digits(dt, w.dt_limit);
    v.fail(fmt::format("{} is above the CFL stability limit 1/(c·√Σ1/h²) = {}; use a dt ≤ that, "
                       "or dt: auto",
                       shown_dt, shown_limit));
  }
  w.dt = dt;
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
  read_even_duration(m, w);  // leapfrog keeps one dt
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
