// The grid: and boundary: sections (SPEC §3): dims, extent or spacing, origin
// and ranks; each face's rule, by face, axis or default, and which axes are
// periodic; both echoed in the resolved case.
#include "io/case_sections.hpp"

#include <cmath>
#include <map>
#include <optional>

#include "io/expression.hpp"
#include "io/workload.hpp"

namespace gf::case_sections {

namespace {

// The lengths a grid axis may have (extent, spacing): with at most 2⁴⁸
// points, h ≥ 3.5e-115 and h² and 1/h² stay ordinary doubles.
constexpr double kMinLength = 1e-100, kMaxLength = 1e100;

std::vector<double> read_axis_list(const Value& v, int ndim, bool positive) {
  const std::string expected = fmt::format("expected a list of {} (one per axis of grid.dims)",
                                           count_of(ndim, "number", "numbers"));
  if (!v.node().IsSequence()) v.fail(expected + ", got " + v.describe());
  if (v.node().size() != std::size_t(ndim))
    v.fail(fmt::format("{}, got {}", expected, count_of(v.node().size(), "number", "numbers")));
  std::vector<double> out;
  for (const Value& item : v.list()) {
    const double x = positive ? item.positive() : item.number();
    // Lengths (extent, spacing): the spacing h, h² and 1/h² must be ordinary
    // numbers, or the stability limit and the operators come out 0 or Inf.
    if (positive && (x < kMinLength || x > kMaxLength))
      item.fail(fmt::format("{:g} is outside [{:g}, {:g}]: the grid spacing, its square and its "
                            "inverse square must be finite, non-zero numbers; scale the units",
                            x, kMinLength, kMaxLength));
    // Coordinates: far beyond the lengths the spacing would be lost in them.
    if (!positive && std::abs(x) > kMaxLength)
      item.fail(fmt::format("{:g} is outside [{:g}, {:g}]", x, -kMaxLength, kMaxLength));
    out.push_back(x);
  }
  return out;
}

FaceBc read_bc(const Value& v, const Params& params, Workload w) {
  const Map m = v.map(schema::kBcKeys);
  const std::string type = m.require("type").choice(schema::kBcTypes);
  FaceBc bc;
  bc.type = type == "dirichlet"   ? BcType::Dirichlet
            : type == "neumann"   ? BcType::Neumann
            : type == "absorbing" ? BcType::Absorbing
                                  : BcType::Periodic;
  if (bc.type == BcType::Absorbing && !workload_info(w).absorbing_faces)
    m.get("type").fail(fmt::format("absorbing faces are for the wave workload, not {}; use "
                                   "dirichlet, neumann or periodic",
                                   to_string(w)));
  const std::string_view takes = bc.type == BcType::Dirichlet ? "value"
                                 : bc.type == BcType::Neumann ? "gradient"
                                                              : "";
  for (const std::string& k : m.keys()) {
    if (k == "type" || k == takes) continue;
    m.key_node(k).fail(fmt::format("does not apply to type {}{}", type,
                                   takes.empty() ? "" : fmt::format(" (it takes '{}')", takes)));
  }
  if (bc.type == BcType::Dirichlet) {
    bc.value = m.has("value") ? m.get("value").expr() : Expr{"0", v.loc(), m.path("value")};
    if (workload_info(w).time_in_boundary)
      (void)Expression(bc.value, params, {"t"});
    else
      check_expression(bc.value, params);
  } else if (bc.type == BcType::Neumann && m.has("gradient")) {
    bc.gradient = m.get("gradient").number();
  }
  return bc;
}

// The key of `boundary` that sets face f: the face, else its axis, else default.
std::optional<std::string> source_of_face(const std::optional<Map>& m, int f) {
  const std::string face = face_name(f);
  for (const std::string& key : {face, face.substr(0, 1), std::string("default")})
    if (m && m->has(key)) return key;
  return std::nullopt;
}

void emit_numbers(YAML::Emitter& out, const char* key, const double* v, int n) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int a = 0; a < n; ++a) out << num(v[a]);
  out << YAML::EndSeq;
}

}  // namespace

// extent or spacing as written: the grid spacing needs the boundary first.
GridLengths read_grid(const Map& top, Grid& g) {
  const Map m = top.require("grid").map(schema::kGridKeys);
  const Value dims = m.require("dims");
  const std::size_t nd = dims.node().IsSequence() ? dims.node().size() : 0;
  if (nd < 1 || nd > 3) {
    dims.fail("expected a list of 1 to 3 integers, got " +
              (dims.node().IsSequence() ? count_of(nd, "entry", "entries") : dims.describe()));
  }
  g.ndim = int(nd);
  double points = 1;
  const auto items = dims.list();
  for (int a = 0; a < g.ndim; ++a) {
    g.n[a] = items[a].integer(3);
    points *= double(g.n[a]);
  }
  if (points > 0x1p48)
    dims.fail(fmt::format("{:.3g} points is more than gridforge can hold", points));
  if (m.has("extent") && m.has("spacing")) {
    const std::vector<std::string> keys = m.keys();
    const auto later = std::find_if(keys.rbegin(), keys.rend(),
                                    [](const auto& k) { return k == "extent" || k == "spacing"; });
    fail_only_one(m, *later, "'extent' and 'spacing'");
  }
  GridLengths in;
  in.by_spacing = m.has("spacing");
  const Value lengths = m.get(in.by_spacing ? "spacing" : "extent");
  in.lengths =
      lengths.present() ? read_axis_list(lengths, g.ndim, true) : std::vector<double>(g.ndim, 1.0);
  if (m.has("origin")) {
    const auto origin = read_axis_list(m.get("origin"), g.ndim, false);
    std::copy(origin.begin(), origin.end(), g.origin.begin());
  }
  return in;
}

// grid.ranks: MPI ranks per axis (checked against the ranks of the run and
// the grid by grid/decomp.cpp, where both are known).
void read_grid_ranks(const Map& top, Case& c) {
  const Map m = top.require("grid").map(schema::kGridKeys);
  if (!m.has("ranks")) return;
  const Value v = m.get("ranks");
  const std::string expected = fmt::format("expected a list of {} (ranks per axis of grid.dims)",
                                           count_of(c.grid.ndim, "integer", "integers"));
  if (!v.node().IsSequence()) v.fail(expected + ", got " + v.describe());
  if (v.node().size() != std::size_t(c.grid.ndim))
    v.fail(fmt::format("{}, got {}", expected, count_of(v.node().size(), "entry", "entries")));
  for (const Value& item : v.list()) {
    const std::int64_t r = item.integer(1);
    if (r > 1 << 20) item.fail(fmt::format("{} ranks on an axis is more than gridforge runs", r));
    c.ranks.push_back(int(r));
  }
  c.ranks_loc = v.loc();
}

// Node-centred (SPEC §1): a walled axis stores both end points, a periodic one
// does not store the point that would repeat point 0.
void set_spacing(Grid& g, const GridLengths& in) {
  for (int a = 0; a < g.ndim; ++a) {
    const double n = double(g.n[a]);
    g.h[a] = in.by_spacing ? in.lengths[a] : in.lengths[a] / (g.periodic[a] ? n : n - 1);
  }
}

std::array<FaceBc, kFaces> read_boundary(const Map& top, const Params& params, Grid& g,
                                         Workload w) {
  std::optional<Map> m;
  if (top.has("boundary")) m.emplace(top.get("boundary").map(schema::kBoundaryKeys));
  std::map<std::string, FaceBc> given;  // every key is checked, used or not
  for (const std::string& key : m ? m->keys() : std::vector<std::string>{}) {
    if (key != "default" && key[0] - 'x' >= g.ndim)
      m->key_node(key).fail(fmt::format("the grid has no {} axis (grid.dims has {})", key[0],
                                        count_of(g.ndim, "entry", "entries")));
    given.emplace(key, read_bc(m->get(key), params, w));
  }
  FaceBc builtin;  // {type: dirichlet, value: 0}
  builtin.value.key = "boundary.default.value";
  std::array<FaceBc, kFaces> faces;
  faces.fill(builtin);
  for (int f = 0; f < 2 * g.ndim; ++f)
    if (const auto key = source_of_face(m, f)) faces[f] = given.at(*key);
  for (int a = 0; a < g.ndim; ++a) {
    const bool lo = faces[2 * a].type == BcType::Periodic,
               hi = faces[2 * a + 1].type == BcType::Periodic;
    if (lo != hi) {
      const int f = lo ? 2 * a : 2 * a + 1;
      m->get(*source_of_face(m, f))
          .fail(fmt::format("periodic face {} needs its partner {} periodic too", face_name(f),
                            face_name(f ^ 1)));
    }
    g.periodic[a] = lo;
  }
  return faces;
}

void emit_grid(YAML::Emitter& out, const Grid& g, const GridLengths& in,
               const std::vector<int>& ranks) {
  out << YAML::Key << "grid" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dims" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int a = 0; a < g.ndim; ++a) out << g.n[a];
  out << YAML::EndSeq;
  emit_numbers(out, in.by_spacing ? "spacing" : "extent", in.lengths.data(), g.ndim);
  if (!in.by_spacing) {
    std::string h;
    for (int a = 0; a < g.ndim; ++a) h += (a ? ", " : "") + num(g.h[a]);
    out << YAML::Comment("spacing: [" + h + "]");
  }
  emit_numbers(out, "origin", g.origin.data(), g.ndim);
  if (!ranks.empty()) {
    out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int r : ranks) out << r;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

void emit_boundary(YAML::Emitter& out, const Case& c) { emit_faces(out, c.boundary, c.grid.ndim); }

void emit_faces(YAML::Emitter& out, const std::array<FaceBc, kFaces>& faces, int ndim) {
  out << YAML::Key << "boundary" << YAML::Value << YAML::BeginMap;
  for (int f = 0; f < 2 * ndim; ++f) {
    const FaceBc& bc = faces[f];
    out << YAML::Key << face_name(f) << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value
        << bc_name(bc.type);
    if (bc.type == BcType::Dirichlet) out << YAML::Key << "value" << YAML::Value << bc.value.text;
    if (bc.type == BcType::Neumann)
      out << YAML::Key << "gradient" << YAML::Value << num(bc.gradient);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

}  // namespace gf::case_sections
