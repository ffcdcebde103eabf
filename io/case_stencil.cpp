// The stencil: section (SPEC §3): a preset (expanded into its points with
// their 1/h² scaling) or user points, the form, coeff, steps and time_block;
// echoed in the resolved case.
#include "io/case_sections.hpp"

#include <climits>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace gf::case_sections {

namespace {

// A preset is a discrete Laplacian; its weights are w[k] / (den·h²).
//  star: w[0] is the centre's share per axis, w[k] the weight of the offsets ±k on one axis.
//  box:  w[m] is the weight of a point of the 3^d box with m nonzero offsets (equal h only).
struct PresetDef {
  std::string_view name;
  int ndim;
  bool box;
  int radius;
  double den;
  std::array<double, 4> w;
};

constexpr PresetDef kPresetDefs[] = {
    {"star5", 2, false, 1, 1, {-2, 1, 0, 0}},          // second order
    {"star7", 3, false, 1, 1, {-2, 1, 0, 0}},          //
    {"star9", 2, false, 2, 12, {-30, 16, -1, 0}},      // fourth order: -5/2, 4/3, -1/12
    {"star13", 3, false, 2, 12, {-30, 16, -1, 0}},     //
    {"box9", 2, true, 1, 6, {-20, 4, 1, 0}},           // isotropic 9-point
    {"box27", 3, true, 1, 30, {-128, 14, 3, 1}},       // 27-point
};

const PresetDef& preset_def(std::string_view name) {
  for (const PresetDef& p : kPresetDefs)
    if (p.name == name) return p;
  throw std::logic_error("stencil preset without a definition");  // kStencilPresets drifted
}

std::vector<StencilPoint> star_points(const PresetDef& p, const Grid& g) {
  std::vector<StencilPoint> pts(1);  // the centre first
  for (int a = 0; a < g.ndim; ++a) {
    const double scale = 1.0 / (p.den * g.h[a] * g.h[a]);
    pts[0].w += p.w[0] * scale;
    for (int k = 1; k <= p.radius; ++k)
      for (int sign : {-1, 1}) {
        StencilPoint q;
        q.d[a] = sign * k;
        q.w = p.w[k] * scale;
        pts.push_back(q);
      }
  }
  return pts;
}

std::vector<StencilPoint> box_points(const PresetDef& p, const Grid& g) {
  const double scale = 1.0 / (p.den * g.h[0] * g.h[0]);
  std::vector<StencilPoint> pts;
  const int span[3] = {1, g.ndim > 1 ? 1 : 0, g.ndim > 2 ? 1 : 0};
  for (int dz = -span[2]; dz <= span[2]; ++dz)
    for (int dy = -span[1]; dy <= span[1]; ++dy)
      for (int dx = -span[0]; dx <= span[0]; ++dx) {
        const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
        pts.push_back(StencilPoint{{dx, dy, dz}, p.w[nonzero] * scale});
      }
  return pts;
}

std::vector<StencilPoint> preset_points(const Value& v, const Grid& g, std::string& name) {
  name = v.choice(schema::kStencilPresets);
  const PresetDef& p = preset_def(name);
  if (p.ndim != g.ndim)
    v.fail(fmt::format("{} is a {}D stencil; the grid is {}D", name, p.ndim, g.ndim));
  if (p.box && !equal_spacing(g))
    v.fail(fmt::format("{} needs equal grid spacing on every axis", name));
  return p.box ? box_points(p, g) : star_points(p, g);
}

// One offset of a user point: an integer within the radius limit, and 0 on
// the axes the grid lacks.
int read_offset(const Value& v, int axis, const Grid& g) {
  const std::int64_t d = v.integer(INT64_MIN);
  if (axis >= g.ndim && d != 0)
    v.fail(fmt::format("d{} = {} on a {}D grid: the grid has no {} axis", char('x' + axis), d,
                       g.ndim, char('x' + axis)));
  const int r = schema::kMaxStencilRadius;
  if (d > r) v.fail(fmt::format("offset {} is larger than {} (stencil radius ≤ {})", d, r, r));
  if (d < -r) v.fail(fmt::format("offset {} is below -{} (stencil radius ≤ {})", d, r, r));
  return int(d);
}

// Always [dx, dy, dz, w], whatever the grid's dimension: one form to read and write.
StencilPoint read_point(const Value& v, const Grid& g) {
  const std::string expected = "expected [dx, dy, dz, w]";
  if (!v.node().IsSequence()) v.fail(expected + ", got " + v.describe());
  if (v.node().size() != 4)
    v.fail(fmt::format("{}, got {}", expected, count_of(v.node().size(), "entry", "entries")));
  const auto items = v.list();
  StencilPoint p;
  for (int a = 0; a < 3; ++a) p.d[a] = read_offset(items[a], a, g);
  p.w = items[3].number();
  return p;
}

std::vector<StencilPoint> user_points(const Value& v, const Grid& g) {
  if (!v.node().IsSequence() || v.node().size() == 0)
    v.fail("expected a non-empty list of points [dx, dy, dz, w], got " +
           (v.node().IsSequence() ? std::string("an empty list") : v.describe()));
  std::vector<StencilPoint> pts;
  for (const Value& item : v.list()) {
    const StencilPoint p = read_point(item, g);
    // Two weights at one offset are most likely a typo in the offset.
    for (const StencilPoint& q : pts)
      if (std::equal(p.d, p.d + 3, q.d))
        item.fail(fmt::format("offset ({}, {}, {}) appears twice", p.d[0], p.d[1], p.d[2]));
    pts.push_back(p);
  }
  return pts;
}

int radius_of(const std::vector<StencilPoint>& pts) {
  int r = 0;
  for (const StencilPoint& p : pts)
    for (int d : p.d) r = std::max(r, std::abs(d));
  return r;
}

// Each axis must hold the whole stencil, so that filling the points beyond a
// wall (one mirror) or a periodic end (one wrap) never reaches past the grid.
void check_fits(const Map& top, const Grid& g, int radius) {
  for (int a = 0; a < g.ndim; ++a)
    if (g.n[a] < 2 * radius + 1)
      top.require("grid").map(schema::kGridKeys).require("dims").fail(
          fmt::format("a stencil of radius {} needs at least {} points per axis", radius,
                      2 * radius + 1));
}

// A preset with form: update is explicit diffusion with coeff in the role of
// α·dt: a coeff the case gives above its limit is refused at load, as heat
// refuses an explicit dt above its own (docs/cases.md#stencil). The default
// coeff (1), user points and form: replace are not refused (a generic
// iteration may apply the weights as they are, or grow on purpose for a few
// steps); the setup line warns when they grow (stencil_setup_line).
void check_stable(const Map& m, const StencilSpec& s) {
  if (s.preset.empty() || s.form != StencilSpec::Form::Update || !m.has("coeff")) return;
  double sum = 0;
  for (const StencilPoint& p : s.points) sum += std::abs(p.w);
  const double limit = 2.0 / sum;  // the symbol is -Σ|w| at θ = π on every axis
  if (!(s.coeff > limit * (1 + 1e-12))) return;
  const auto [shown_coeff, shown_limit] = distinct_digits(s.coeff, limit);
  const std::string msg = fmt::format(
      "{} exceeds the explicit stability limit {} of {} on this grid (2/Σ|w|, Σ|w| = {:.4g}; "
      "coeff·Σ|w| = {:.3g} > 2); use a coeff ≤ {} or a coarser grid",
      shown_coeff, shown_limit, s.preset, sum, s.coeff * sum, shown_limit);
  m.get("coeff").fail(msg);
}

}  // namespace

void read_stencil(const Map& top, const Grid& g, StencilSpec& s) {
  const Map m = top.require("stencil").map(schema::kStencilKeys);
  const std::string source = exactly_one_of(m, "preset", "points");
  s.points = source == "preset" ? preset_points(m.get("preset"), g, s.preset)
                                : user_points(m.get("points"), g);
  s.radius = radius_of(s.points);
  check_fits(top, g, s.radius);
  if (m.has("form"))
    s.form = m.get("form").choice(schema::kStencilForms) == "replace" ? StencilSpec::Form::Replace
                                                                      : StencilSpec::Form::Update;
  if (m.has("coeff")) s.coeff = m.get("coeff").number();
  s.steps = m.require("steps").integer(0);
  check_stable(m, s);
  if (m.has("time_block")) {
    s.time_block = read_time_block(m.get("time_block"));
    if (s.time_block > 1 && !star_order(s.points, g))
      m.get("time_block")
          .fail("temporal blocking is for stars of radius 1 in 2D or 3D (star5 or star7, or "
                "points in their order: centre, -x, +x, -y, +y, and in 3D -z, +z)");
  }
}

void emit_stencil(YAML::Emitter& out, const StencilSpec& s) {
  out << YAML::Key << "stencil" << YAML::Value << YAML::BeginMap;
  if (!s.preset.empty()) {
    out << YAML::Key << "preset" << YAML::Value << s.preset
        << YAML::Comment(fmt::format("{} points, radius {}", s.points.size(), s.radius));
  } else {
    out << YAML::Key << "points" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const StencilPoint& p : s.points)
      out << YAML::Flow << YAML::BeginSeq << p.d[0] << p.d[1] << p.d[2] << num(p.w)
          << YAML::EndSeq;
    out << YAML::EndSeq << YAML::Comment(fmt::format("radius {}", s.radius));
  }
  out << YAML::Key << "form" << YAML::Value
      << (s.form == StencilSpec::Form::Update ? "update" : "replace");
  out << YAML::Key << "coeff" << YAML::Value << num(s.coeff);
  out << YAML::Key << "steps" << YAML::Value << s.steps;
  if (s.time_block > 0) out << YAML::Key << "time_block" << YAML::Value << s.time_block;
  out << YAML::EndMap;
}

}  // namespace gf::case_sections

namespace gf {

namespace {
std::string theta_str(const std::array<double, 3>& th, int ndim) {
  std::string s = "θ = (";
  for (int a = 0; a < ndim; ++a)
    s += (a ? ", " : "") + (th[a] == 0 ? std::string("0") : th[a] == 1 ? std::string("π")
                                                       : fmt::format("{:.3g}π", th[a]));
  return s + ")";
}

}  // namespace

// Von Neumann analysis of one step on a periodic grid: the symbol
// S(θ) = Σₖ wₖ·e^{iθ·oₖ}, sampled on M wave numbers per axis the points reach,
// θ ∈ (-π, π] (θ = 0 and θ = π included: a preset's symbol is largest in size at
// θ = π on every axis). A sample can miss the worst θ of user points, so the
// analysis can call an unstable case stable but never the other way round.
//  update (uⁿ⁺¹ = uⁿ + coeff·Σ wₖ uⁿ(x+oₖ)): |1 + c·S|² ≤ 1 ⟺ c ≤ −2·Re S/|S|²;
//  replace (uⁿ⁺¹ = Σ wₖ uⁿ(x+oₖ)): |S| ≤ 1.
StencilStability stencil_stability(const StencilSpec& s, int ndim) {
  const int m = ndim == 1 ? 512 : ndim == 2 ? 64 : 24;
  double wsum = 0;
  for (const StencilPoint& p : s.points) wsum += std::abs(p.w);
  std::array<int, 3> ms{1, 1, 1};
  for (int a = 0; a < ndim; ++a)
    for (const StencilPoint& p : s.points)
      if (p.d[a] != 0) ms[a] = m;
  const bool update = s.form == StencilSpec::Form::Update;
  StencilStability v;
  v.coeff_max = update ? std::numeric_limits<double>::infinity() : 0;
  for (int n = 0; n < ms[0] * ms[1] * ms[2]; ++n) {
    const std::array<int, 3> j{n % ms[0], (n / ms[0]) % ms[1], n / (ms[0] * ms[1])};
    std::array<double, 3> th{};
    for (int a = 0; a < 3; ++a)
      if (ms[a] > 1) th[a] = -1.0 + 2.0 * (j[a] + 1) / m;  // (-1, 1], in units of π
    double re = 0, im = 0;
    for (const StencilPoint& p : s.points) {
      const double phase = M_PI * (th[0] * p.d[0] + th[1] * p.d[1] + th[2] * p.d[2]);
      re += p.w * std::cos(phase);
      im += p.w * std::sin(phase);
    }
    const double abs2 = re * re + im * im;
    const double g = update ? std::hypot(1 + s.coeff * re, s.coeff * im) : std::sqrt(abs2);
    if (g > v.growth) v.growth = g, v.theta = th;
    if (update && abs2 > 1e-24 * wsum * wsum) v.coeff_max = std::min(v.coeff_max, -2 * re / abs2);
  }
  return v;
}

std::string stencil_setup_line(const StencilSpec& s, int ndim) {
  const StencilStability v = stencil_stability(s, ndim);
  const bool update = s.form == StencilSpec::Form::Update;
  const std::string limit =
      !update ? "" : v.coeff_max > 0 ? fmt::format("; explicit limit coeff ≤ {:.3g}", v.coeff_max)
                                     : "; no coeff > 0 is stable";
  if (v.growth <= 1 + 1e-9)
    return fmt::format("stable: one step grows no mode (von Neumann, max |G| = {:.4g}{})",
                       v.growth, limit);
  return fmt::format(
      "warning: not stable: one step multiplies a mode by up to {:.4g} (von Neumann, at {}{}); "
      "over {} step{} that is up to {:.4g}×",
      v.growth, theta_str(v.theta, ndim), limit, s.steps, s.steps == 1 ? "" : "s",
      std::pow(v.growth, double(std::min<std::int64_t>(s.steps, 100000))));
}


// True when the points have star5's offsets in its order on the 2D grid g,
// or star7's on the 3D grid g (whatever the weights): the stencils the
// temporally blocked passes run (ops/time_block.hpp).
bool star_order(const std::vector<StencilPoint>& pts, const Grid& g) {
  if (g.ndim != 2 && g.ndim != 3) return false;
  const std::vector<StencilPoint> star =
      case_sections::star_points(case_sections::preset_def(g.ndim == 2 ? "star5" : "star7"), g);
  if (pts.size() != star.size()) return false;
  for (std::size_t t = 0; t < pts.size(); ++t)
    for (int ax = 0; ax < 3; ++ax)
      if (pts[t].d[ax] != star[t].d[ax]) return false;
  return true;
}

}  // namespace gf
