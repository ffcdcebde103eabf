// Internal to io/: the sections of a case file, each read and echoed by a
// file of its own (io/case_<section>.cpp; raymarch: and render: are
// io/case_raymarch.hpp), and the small helpers they share. io/case.cpp reads
// the top-level keys and calls the sections in order.
#pragma once
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/case.hpp"
#include "io/case_schema.hpp"

namespace gf::case_sections {

using schema::Map;
using schema::Value;

// ---- shared by the sections ---------------------------------------------------------------

// A boundary type's name in case files.
inline const char* bc_name(BcType t) {
  return t == BcType::Dirichlet   ? "dirichlet"
         : t == BcType::Neumann   ? "neumann"
         : t == BcType::Absorbing ? "absorbing"
                                  : "periodic";
}

// "1 number", "3 entries"
inline std::string count_of(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// Equal spacing on every axis (to rounding): box stencils need it, and the
// explicit limit is then written h²/(2·d·α).
inline bool equal_spacing(const Grid& g) {
  for (int a = 1; a < g.ndim; ++a)
    if (std::abs(g.h[a] - g.h[0]) > 1e-12 * g.h[0]) return false;
  return true;
}

// "give only one of 'a' and 'b'" at `key`, the later of two keys of a group
// that the map holds, with the way out: a key in the file is removed on the
// command line by KEY=null (an override of one key of a group replaces the
// file's partner, so two there were both written in the file, or both on the
// command line).
[[noreturn]] inline void fail_only_one(const Map& m, const std::string& key,
                                       const std::string& group) {
  const Value k = m.key_node(key);
  if (k.loc().line == 0 && k.loc().file == schema::command_line_loc().file)
    k.fail(fmt::format("give only one of {}; the command line sets more than one of them", group));
  k.fail(fmt::format("give only one of {}; on the command line, {}=null removes the file's {}",
                     group, m.path(key), key));
}

// Which of the keys `a` and `b` the map holds, when it holds exactly one.
inline std::string exactly_one_of(const Map& m, const std::string& a, const std::string& b) {
  if (!m.has(a) && !m.has(b)) m.self().fail(fmt::format("missing required key '{}' or '{}'", a, b));
  if (m.has(a) && m.has(b)) {
    // Point at the later of the two: an override comes after the file's key.
    const std::vector<std::string> keys = m.keys();
    const auto later =
        std::find_if(keys.rbegin(), keys.rend(), [&](const auto& k) { return k == a || k == b; });
    fail_only_one(m, *later, fmt::format("'{}' and '{}'", a, b));
  }
  return m.has(a) ? a : b;
}

// float32 cannot reach a relative residual much below 1e-6: a smaller
// tolerance is raised to kFloat32ToleranceFloor instead of running to max_iters.
inline double effective_tolerance(double asked, Precision p) {
  return p == Precision::Float32 ? std::max(asked, kFloat32ToleranceFloor) : asked;
}

// heat.time_block, stencil.time_block, laplace.time_block: auto (0) or the
// steps per pass, 1 to kMaxTimeBlock.
inline int read_time_block(const Value& v) {
  if (v.node().IsScalar() && v.node().Scalar() == "auto") return 0;
  long long k = 0;
  if (!v.node().IsScalar() || !YAML::convert<long long>::decode(v.node(), k) || k < 1 ||
      k > kMaxTimeBlock)
    v.fail(fmt::format("expected auto or a whole number of steps from 1 to {}, got {}",
                       kMaxTimeBlock, v.describe()));
  return int(k);
}

// laplace.operator, heat.solver.operator: matrix-free or csr.
inline LaplaceOperator read_operator(const Value& v) {
  return v.choice(schema::kLaplaceOperators) == "csr" ? LaplaceOperator::Csr
                                                     : LaplaceOperator::MatrixFree;
}

// laplace.preconditioner: none, jacobi or multigrid; heat.solver.preconditioner
// (heat: true) auto as well.
inline LaplacePrecond read_preconditioner(const Value& v, bool heat = false) {
  const std::string p =
      heat ? v.choice(schema::kHeatPreconditioners) : v.choice(schema::kLaplacePreconditioners);
  return p == "jacobi" ? LaplacePrecond::Jacobi
         : p == "multigrid" ? LaplacePrecond::Multigrid
         : p == "auto"      ? LaplacePrecond::Auto
                            : LaplacePrecond::None;
}

// Shortest text that reads back as the same double: resolved_yaml can be
// loaded again and gives the same case, bit for bit.
inline std::string num(double v) { return fmt::format("{}", v); }

// dt and its limit with as few digits as still tell them apart (2 at least).
inline std::pair<std::string, std::string> distinct_digits(double dt, double limit) {
  for (int p = 2;; ++p) {
    std::string a = fmt::format("{:.{}g}", dt, p), b = fmt::format("{:.{}g}", limit, p);
    if (a != b || p >= 17) return {a, b};
  }
}

// The steps of dt that reach t_end (the value v holds): t_end / dt rounded
// up, where t_end = 10·dt gives 10 steps, not 11 for a rounding error of 1 ulp.
inline std::int64_t steps_to_reach(const Value& v, double t_end, double dt) {
  const double r = t_end / dt;
  if (r > 1e15) v.fail(fmt::format("t_end / dt = {:.3g} steps is more than gridforge can run", r));
  const double nearest = std::round(r);
  return std::max<std::int64_t>(
      1, std::int64_t(std::abs(r - nearest) <= 1e-9 * std::max(1.0, r) ? nearest : std::ceil(r)));
}

// A step length: `auto` (or no key) gives false, a number > 0 true with
// that number in dt, anything else fails at v.
inline bool read_dt_number(const Value& v, double& dt) {
  if (!v.present() || (v.node().IsScalar() && v.node().Scalar() == "auto")) return false;
  if (!v.node().IsScalar() || !YAML::convert<double>::decode(v.node(), dt) || !std::isfinite(dt) ||
      !(dt > 0))
    v.fail("expected auto or a number > 0, got " + v.describe());
  return true;
}

// `steps`, or `t_end` in equal steps of at most s.dt (for schemes that keep
// one dt: leapfrog, the Runge–Kutta integrators). S has steps, use_t_end,
// t_end and dt.
template <class S>
void read_even_duration(const Map& m, S& s) {
  if (exactly_one_of(m, "steps", "t_end") == "steps") {
    s.steps = m.get("steps").integer(0);
    return;
  }
  const Value v = m.get("t_end");
  s.use_t_end = true;
  s.t_end = v.positive();
  s.steps = steps_to_reach(v, s.t_end, s.dt);
  s.dt = s.t_end / double(s.steps);
}

// ---- the sections, in the order of the resolved case ------------------------------------------

// grid: and boundary: (case_grid.cpp). The grid's spacing needs the boundary
// (periodic axes do not store their last point): read_grid, read_boundary,
// then set_spacing.
GridLengths read_grid(const Map& top, Grid& g);
void read_grid_ranks(const Map& top, Case& c);
std::array<FaceBc, kFaces> read_boundary(const Map& top, const Params& params, Grid& g,
                                         Workload w);
void set_spacing(Grid& g, const GridLengths& in);
void emit_grid(YAML::Emitter& out, const Grid& g, const GridLengths& in,
               const std::vector<int>& ranks);
void emit_boundary(YAML::Emitter& out, const Case& c);
// The same for faces of a grid of ndim axes (a pde field's own).
void emit_faces(YAML::Emitter& out, const std::array<FaceBc, kFaces>& faces, int ndim);

// initial: (case_initial.cpp): a value, an expression or an HDF5 dataset.
void read_initial(const Map& top, const Params& params, const std::filesystem::path& base_dir,
                  const Grid& grid, InitialSpec& init);
void emit_initial(YAML::Emitter& out, const InitialSpec& init);
// The same map ({value}, {expr} or {file: {path, dataset}}) at any key
// (heat.alpha as a field).
void read_field_values(const Value& at, const Params& params,
                       const std::filesystem::path& base_dir, const Grid& grid, InitialSpec& init);

// heat: (case_heat.cpp)
// The initial state, the boundary and the parameters are read already: a
// variable alpha's program (HeatSpec::program) reads them.
void read_heat(const Map& top, const Case& c, const std::filesystem::path& base_dir, HeatSpec& h);
void emit_heat(YAML::Emitter& out, const HeatSpec& h);

// stencil: (case_stencil.cpp)
void read_stencil(const Map& top, const Grid& g, StencilSpec& s);
void emit_stencil(YAML::Emitter& out, const StencilSpec& s);

// laplace: (case_laplace.cpp); the values that need the numerics are left to
// solvers' prepare_case.
void read_laplace(const Map& top, const Case& c, LaplaceSpec& L);
void emit_laplace(YAML::Emitter& out, const LaplaceSpec& L);

// output: (case_output.cpp)
void read_output(const Map& top, const std::string& name, OutputSpec& o);
void emit_output(YAML::Emitter& out, const OutputSpec& o);

}  // namespace gf::case_sections
