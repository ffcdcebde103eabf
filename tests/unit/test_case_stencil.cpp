// The stencil section of a case: presets expanded into Laplacian weights on
// the case grid, user points with their radius, defaults, overrides, the
// resolved YAML, and every fault with its file:line:col.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "tests/unit/case_test_util.hpp"

namespace {

using gf::test::error_of;
using gf::test::load;

using Catch::Matchers::Contains;
using gf::StencilPoint;
using gf::StencilSpec;

// A valid case on a grid of spacing 0.5 on every axis (9 points over 4 with
// walls), whose grid and stencil lines the tests replace:
//   1 workload: stencil
//   2 grid:
//   3   dims: [9, 9, 9]
//   4   extent: [4, 4, 4]
//   5 stencil:
//   6   preset: star7
//   7   steps: 10
std::string with(const std::string& grid_lines, const std::string& stencil_lines,
                 const std::string& extra = "") {
  return "workload: stencil\ngrid:\n" + grid_lines + "\nstencil:\n" + stencil_lines + "\n" + extra;
}
const std::string kGrid3 = "  dims: [9, 9, 9]\n  extent: [4, 4, 4]";
const std::string kGrid2 = "  dims: [9, 9]\n  extent: [4, 4]";
const std::string kStar7 = "  preset: star7\n  steps: 10";

StencilSpec stencil_of(const std::string& grid_lines, const std::string& preset) {
  return load(with(grid_lines, "  preset: " + preset + "\n  steps: 1")).stencil;
}

// The weight at offset (dx, dy, dz); fails the test when there is none.
double weight_at(const StencilSpec& s, int dx, int dy, int dz) {
  for (const StencilPoint& p : s.points)
    if (p.d[0] == dx && p.d[1] == dy && p.d[2] == dz) return p.w;
  FAIL("no point at (" << dx << ", " << dy << ", " << dz << ")");
  return 0;
}

double weight_sum(const StencilSpec& s) {
  double sum = 0;
  for (const StencilPoint& p : s.points) sum += p.w;
  return sum;
}

}  // namespace

TEST_CASE("the base text of the stencil tests is valid", "[stencil-case]") {
  const gf::Case c = load(with(kGrid3, kStar7));
  CHECK(c.workload == gf::Workload::Stencil);
  CHECK(c.grid.h[0] == 0.5);
  CHECK(c.grid.h[2] == 0.5);
}

TEST_CASE("star presets are second- and fourth-order Laplacians scaled by 1/h²",
          "[stencil-case]") {
  SECTION("star7: centre -2·3/h², neighbours 1/h²") {
    const StencilSpec s = stencil_of(kGrid3, "star7");
    CHECK(s.preset == "star7");
    CHECK(s.points.size() == 7);
    CHECK(s.radius == 1);
    CHECK(weight_at(s, 0, 0, 0) == Approx(-24));
    for (int sign : {-1, 1}) {
      CHECK(weight_at(s, sign, 0, 0) == Approx(4));
      CHECK(weight_at(s, 0, sign, 0) == Approx(4));
      CHECK(weight_at(s, 0, 0, sign) == Approx(4));
    }
    CHECK(weight_sum(s) == Approx(0).margin(1e-12));
  }
  SECTION("star5: centre -2·2/h², neighbours 1/h², nothing on z") {
    const StencilSpec s = stencil_of(kGrid2, "star5");
    CHECK(s.points.size() == 5);
    CHECK(s.radius == 1);
    CHECK(weight_at(s, 0, 0, 0) == Approx(-16));
    CHECK(weight_at(s, -1, 0, 0) == Approx(4));
    CHECK(weight_at(s, 0, 1, 0) == Approx(4));
    for (const StencilPoint& p : s.points) CHECK(p.d[2] == 0);
  }
  SECTION("star9: ±1 (4/3)/h², ±2 (-1/12)/h², centre -2·(5/2)/h²") {
    const StencilSpec s = stencil_of(kGrid2, "star9");
    CHECK(s.points.size() == 9);
    CHECK(s.radius == 2);
    CHECK(weight_at(s, 0, 0, 0) == Approx(-20));
    CHECK(weight_at(s, 1, 0, 0) == Approx(16.0 / 3));
    CHECK(weight_at(s, 0, -1, 0) == Approx(16.0 / 3));
    CHECK(weight_at(s, -2, 0, 0) == Approx(-1.0 / 3));
    CHECK(weight_at(s, 0, 2, 0) == Approx(-1.0 / 3));
    CHECK(weight_sum(s) == Approx(0).margin(1e-12));
  }
  SECTION("star13: the same per axis, on three axes") {
    const StencilSpec s = stencil_of(kGrid3, "star13");
    CHECK(s.points.size() == 13);
    CHECK(s.radius == 2);
    CHECK(weight_at(s, 0, 0, 0) == Approx(-30));
    CHECK(weight_at(s, 0, 0, 1) == Approx(16.0 / 3));
    CHECK(weight_at(s, 0, 0, -2) == Approx(-1.0 / 3));
    CHECK(weight_sum(s) == Approx(0).margin(1e-12));
  }
  SECTION("each axis is scaled by its own spacing") {
    const StencilSpec s = stencil_of("  dims: [9, 9]\n  extent: [4, 8]", "star5");
    CHECK(weight_at(s, 1, 0, 0) == Approx(4));
    CHECK(weight_at(s, 0, 1, 0) == Approx(1));
    CHECK(weight_at(s, 0, 0, 0) == Approx(-10));
  }
}

TEST_CASE("box presets are the isotropic 9- and 27-point Laplacians", "[stencil-case]") {
  SECTION("box9: (1/(6h²))·[[1,4,1],[4,-20,4],[1,4,1]]") {
    const StencilSpec s = stencil_of(kGrid2, "box9");
    CHECK(s.preset == "box9");
    CHECK(s.points.size() == 9);
    CHECK(s.radius == 1);
    CHECK(weight_at(s, 0, 0, 0) == Approx(-20.0 * 4 / 6));
    CHECK(weight_at(s, 1, 0, 0) == Approx(4.0 * 4 / 6));
    CHECK(weight_at(s, 0, -1, 0) == Approx(4.0 * 4 / 6));
    CHECK(weight_at(s, 1, -1, 0) == Approx(1.0 * 4 / 6));
    CHECK(weight_sum(s) == Approx(0).margin(1e-12));
  }
  SECTION("box27: (1/(30h²))·(centre -128, faces 14, edges 3, corners 1)") {
    const StencilSpec s = stencil_of(kGrid3, "box27");
    CHECK(s.points.size() == 27);
    CHECK(s.radius == 1);
    CHECK(weight_at(s, 0, 0, 0) == Approx(-128.0 * 4 / 30));
    CHECK(weight_at(s, 0, 0, -1) == Approx(14.0 * 4 / 30));
    CHECK(weight_at(s, 1, 0, -1) == Approx(3.0 * 4 / 30));
    CHECK(weight_at(s, -1, 1, 1) == Approx(1.0 * 4 / 30));
    CHECK(weight_sum(s) == Approx(0).margin(1e-12));
  }
}

TEST_CASE("user points are taken as written, with their radius", "[stencil-case]") {
  const gf::Case c = load(with(kGrid3,
                               "  points: [[0, 0, 0, 0.7], [-1, 0, 0, 0.2], [-3, 0, 0, 0.05], "
                               "[0, -2, 0, 0.05]]\n  form: replace\n  steps: 4"));
  const StencilSpec& s = c.stencil;
  CHECK(s.preset.empty());
  REQUIRE(s.points.size() == 4);
  CHECK(s.radius == 3);
  CHECK(s.points[2].d[0] == -3);
  CHECK(s.points[2].w == 0.05);
  CHECK(s.points[3].d[1] == -2);
  CHECK(s.form == StencilSpec::Form::Replace);

  SECTION("on a 2D grid the z offset is written as 0") {
    const StencilSpec s2 = load(with(kGrid2, "  points: [[4, 0, 0, 1], [0, -4, 0, -1]]\n"
                                             "  steps: 1"))
                               .stencil;
    CHECK(s2.radius == 4);
    CHECK(s2.points[1].d[1] == -4);
  }
}

TEST_CASE("form, coeff take defaults; steps may be 0", "[stencil-case]") {
  const StencilSpec s = load(with(kGrid3, "  preset: star7\n  steps: 0")).stencil;
  CHECK(s.form == StencilSpec::Form::Update);
  CHECK(s.coeff == 1.0);
  CHECK(s.steps == 0);
  const StencilSpec t =
      load(with(kGrid3, "  preset: star7\n  form: replace\n  coeff: -2.5e-3\n  steps: 7")).stencil;
  CHECK(t.form == StencilSpec::Form::Replace);
  CHECK(t.coeff == -2.5e-3);
  CHECK(t.steps == 7);
}

TEST_CASE("stencil keys can be overridden on the command line", "[stencil-case]") {
  const gf::Case c = load(with(kGrid3, kStar7), {"stencil.steps=5", "stencil.preset=box27"});
  CHECK(c.stencil.steps == 5);
  CHECK(c.stencil.preset == "box27");
  CHECK(c.stencil.points.size() == 27);
  const gf::Case d = load(with(kGrid3, kStar7), {"stencil.coeff=0.25", "stencil.form=replace"});
  CHECK(d.stencil.coeff == 0.25);
  CHECK(d.stencil.form == StencilSpec::Form::Replace);
}

TEST_CASE("the resolved YAML of a stencil case loads back into the same case",
          "[stencil-case]") {
  for (const std::string stencil :
       {std::string("  preset: star13\n  coeff: 0.01\n  steps: 12"),
        std::string("  points: [[0, 0, 0, 0.7], [-1, 0, 0, 0.1], [0, 2, 0, 0.1], [0, 0, -3, "
                    "0.1]]\n  form: replace\n  steps: 3")}) {
    const gf::Case a = load(with(kGrid3, stencil, "boundary: {x: {type: periodic}}\n"
                                                  "output: {every: 4}\n"));
    INFO(a.resolved_yaml);
    CHECK_THAT(a.resolved_yaml, Contains("stencil:"));
    const gf::Case b = gf::load_case_text(a.resolved_yaml, "resolved.yaml");
    CHECK(b.workload == gf::Workload::Stencil);
    CHECK(b.grid.h == a.grid.h);
    CHECK(b.grid.periodic == a.grid.periodic);
    CHECK(b.stencil.preset == a.stencil.preset);
    REQUIRE(b.stencil.points.size() == a.stencil.points.size());
    for (std::size_t k = 0; k < a.stencil.points.size(); ++k) {
      for (int ax = 0; ax < 3; ++ax) CHECK(b.stencil.points[k].d[ax] == a.stencil.points[k].d[ax]);
      CHECK(b.stencil.points[k].w == a.stencil.points[k].w);  // bit for bit
    }
    CHECK(b.stencil.form == a.stencil.form);
    CHECK(b.stencil.coeff == a.stencil.coeff);
    CHECK(b.stencil.steps == a.stencil.steps);
    CHECK(b.stencil.radius == a.stencil.radius);
    CHECK(b.output.every == a.output.every);
    CHECK(b.resolved_yaml == a.resolved_yaml);
  }
}

TEST_CASE("preset or points: exactly one, and steps is required", "[stencil-case]") {
  CHECK(error_of(with(kGrid3, "  preset: star7\n  points: [[0, 0, 0, 1]]\n  steps: 10")) ==
        "case.yaml:7:3: stencil.points: give only one of 'preset' and 'points'; on the command "
        "line, stencil.points=null removes the file's points");
  CHECK(error_of(with(kGrid3, "  steps: 10")) ==
        "case.yaml:6:3: stencil: missing required key 'preset' or 'points'");
  CHECK(error_of(with(kGrid3, "  preset: star7")) ==
        "case.yaml:6:3: stencil: missing required key 'steps'");
  CHECK(error_of("workload: stencil\ngrid: {dims: [9, 9, 9]}\n") ==
        "case.yaml:1:1: missing required key 'stencil'");
  // An override replaces the file's partner; two overrides conflict.
  CHECK(load(with(kGrid3, "  points: [[0, 0, 0, 1]]\n  steps: 10"), {"stencil.preset=box27", "stencil.coeff=1e-4"})
            .stencil.preset == "box27");
  CHECK(error_of(with(kGrid3, "  points: [[0, 0, 0, 1]]\n  steps: 10"),
                 {"stencil.points=[[0, 0, 0, 1]]", "stencil.preset=box27"}) ==
        "command line: stencil.preset: give only one of 'preset' and 'points'; the command line "
        "sets more than one of them");
}

TEST_CASE("stencil keys are checked like every other key", "[stencil-case]") {
  CHECK(error_of(with(kGrid3, "  preset: stra7\n  steps: 10")) ==
        "case.yaml:6:11: stencil.preset: expected one of star5, star7, star9, star13, box9, box27, "
        "got 'stra7'; did you mean 'star7'?");
  CHECK(error_of(with(kGrid3, kStar7 + "\n  form: upwind")) ==
        "case.yaml:8:9: stencil.form: expected one of update, replace, got 'upwind'");
  CHECK(error_of(with(kGrid3, kStar7 + "\n  coeff: .inf")) ==
        "case.yaml:8:10: stencil.coeff: expected a finite number, got '.inf'");
  CHECK(error_of(with(kGrid3, "  preset: star7\n  steps: -1")) ==
        "case.yaml:7:10: stencil.steps: expected an integer ≥ 0, got -1");
  CHECK(error_of(with(kGrid3, kStar7 + "\n  coef: 1")) ==
        "case.yaml:8:3: stencil.coef: unknown key; did you mean 'coeff'?");
}

TEST_CASE("a preset must suit the grid", "[stencil-case]") {
  CHECK(error_of(with(kGrid2, "  preset: star7\n  steps: 10")) ==
        "case.yaml:6:11: stencil.preset: star7 is a 3D stencil; the grid is 2D");
  CHECK(error_of(with(kGrid3, "  preset: box9\n  steps: 10")) ==
        "case.yaml:6:11: stencil.preset: box9 is a 2D stencil; the grid is 3D");
  CHECK(error_of(with("  dims: [9, 9, 9]\n  extent: [4, 4, 8]", "  preset: box27\n  steps: 10")) ==
        "case.yaml:6:11: stencil.preset: box27 needs equal grid spacing on every axis");
  CHECK(error_of(with("  dims: [4, 9]", "  preset: star9\n  steps: 10")) ==
        "case.yaml:3:9: grid.dims: a stencil of radius 2 needs at least 5 points per axis");
}

TEST_CASE("faults in user points are located at the offending node", "[stencil-case]") {
  auto points = [](const std::string& list) { return "  points: " + list + "\n  steps: 10"; };
  CHECK(error_of(with(kGrid3, points("3"))) ==
        "case.yaml:6:11: stencil.points: expected a non-empty list of points [dx, dy, dz, w], "
        "got '3'");
  CHECK(error_of(with(kGrid3, points("[]"))) ==
        "case.yaml:6:11: stencil.points: expected a non-empty list of points [dx, dy, dz, w], "
        "got an empty list");
  CHECK(error_of(with(kGrid3, points("[[0, 0, 1]]"))) ==
        "case.yaml:6:12: stencil.points[0]: expected [dx, dy, dz, w], got 3 entries");
  CHECK(error_of(with(kGrid3, points("[1]"))) ==
        "case.yaml:6:12: stencil.points[0]: expected [dx, dy, dz, w], got '1'");
  CHECK(error_of(with(kGrid3, points("[[5, 0, 0, 1]]"))) ==
        "case.yaml:6:13: stencil.points[0][0]: offset 5 is larger than 4 (stencil radius ≤ 4)");
  CHECK(error_of(with(kGrid3, points("[[0, -5, 0, 1]]"))) ==
        "case.yaml:6:16: stencil.points[0][1]: offset -5 is below -4 (stencil radius ≤ 4)");
  CHECK(error_of(with(kGrid3, points("[[0.5, 0, 0, 1]]"))) ==
        "case.yaml:6:13: stencil.points[0][0]: expected an integer, got '0.5'");
  CHECK(error_of(with(kGrid2, points("[[0, 0, 1, 1]]"))) ==
        "case.yaml:6:19: stencil.points[0][2]: dz = 1 on a 2D grid: the grid has no z axis");
  CHECK(error_of(with("  dims: [9]", points("[[0, -1, 0, 1]]"))) ==
        "case.yaml:5:16: stencil.points[0][1]: dy = -1 on a 1D grid: the grid has no y axis");
  CHECK(error_of(with(kGrid3, points("[[0, 0, 0, \"2*a\"]]"))) ==
        "case.yaml:6:22: stencil.points[0][3]: expected a number, got '2*a'");
  CHECK(error_of(with(kGrid3, points("[[1, 0, 0, 1], [0, 0, 0, 1], [1, 0, 0, 2]]"))) ==
        "case.yaml:6:40: stencil.points[2]: offset (1, 0, 0) appears twice");
  CHECK(error_of(with("  dims: [9, 5, 9]", points("[[0, 0, 0, 1], [3, 0, 0, 1]]"))) ==
        "case.yaml:3:9: grid.dims: a stencil of radius 3 needs at least 7 points per axis");
}

TEST_CASE("heat and stencil sections belong to their own workload", "[stencil-case]") {
  CHECK(error_of(with(kGrid3, kStar7, "heat: {alpha: 1, steps: 1}\n")) ==
        "case.yaml:8:1: heat: section 'heat' does not apply to workload stencil");
  CHECK(error_of("workload: heat\ngrid: {dims: [9]}\nheat: {alpha: 1, steps: 1}\n"
                 "stencil: {preset: star7, steps: 1}\n") ==
        "case.yaml:4:1: stencil: section 'stencil' does not apply to workload heat");
}

TEST_CASE("boundary, initial and output of a stencil case read as for heat", "[stencil-case]") {
  const gf::Case c = load(with(kGrid3, kStar7,
                               "parameters: {A: 2}\n"
                               "initial: {expr: \"A*x\"}\n"
                               "boundary: {x: {type: periodic}, z+: {type: neumann, gradient: 1}}\n"
                               "output: {every: 5, formats: [hdf5]}\n"));
  CHECK(c.initial.expr.text == "A*x");
  CHECK(c.grid.periodic[0]);
  CHECK(c.grid.h[0] == Approx(4.0 / 9));  // periodic: h = extent/n
  CHECK(c.boundary[5].type == gf::BcType::Neumann);
  CHECK(c.boundary[5].gradient == 1.0);
  CHECK(c.output.every == 5);
  CHECK_FALSE(c.output.vtk);
  CHECK(c.output.dir == "out/case");
}

TEST_CASE("the stencil cases in cases/ load", "[stencil-case]") {
  const std::string dir = std::string(GF_SOURCE_DIR) + "/cases/";
  const gf::Case star9 = gf::load_case(dir + "stencil2d_star9.yaml");
  CHECK(star9.name == "stencil2d-star9");
  CHECK(star9.stencil.preset == "star9");
  CHECK(star9.grid.periodic[0]);
  CHECK(star9.grid.periodic[1]);
  const gf::Case box27 = gf::load_case(dir + "stencil3d_box27.yaml");
  CHECK(box27.name == "stencil3d-box27");
  CHECK(box27.stencil.points.size() == 27);
  CHECK(box27.boundary[0].type == gf::BcType::Dirichlet);
  CHECK(box27.boundary[2].type == gf::BcType::Neumann);
  const gf::Case custom = gf::load_case(dir + "stencil3d_custom.yaml");
  CHECK(custom.name == "stencil3d-custom");
  CHECK(custom.stencil.radius == 3);
  CHECK(custom.stencil.form == StencilSpec::Form::Replace);
  CHECK(weight_sum(custom.stencil) == Approx(1));
  // Explicit diffusion with a preset is stable for coeff·Σ|w| ≤ 2; the cases
  // keep well inside it.
  for (const gf::Case* c : {&star9, &box27}) {
    double abs_sum = 0;
    for (const StencilPoint& p : c->stencil.points) abs_sum += std::abs(p.w);
    CHECK(c->stencil.coeff * abs_sum < 0.5);
  }
}

TEST_CASE("a preset's coeff above the explicit stability limit is refused at load",
          "[stencil-case]") {
  // issue 25: star5 with coeff 1e-3 on 64² has coeff·Σ|w| ≈ 32 > 2.
  const std::string t = "workload: stencil\ngrid: {dims: [64, 64]}\nstencil: {preset: star5, coeff: 1e-3, steps: 1}\n";
  CHECK(error_of(t) ==
        "case.yaml:3:33: stencil.coeff: 0.001 exceeds the explicit stability limit 6.3e-05 of star5 "
        "on this grid (2/Σ|w|, Σ|w| = 3.175e+04; coeff·Σ|w| = 31.8 > 2); use a coeff ≤ 6.3e-05 "
        "or a coarser grid");
  CHECK(error_of(t, {"stencil.coeff=6e-5"}) == "(no error)");
  CHECK(error_of(t, {"stencil.form=replace"}) == "(no error)");  // not diffusion: unchecked
}

TEST_CASE("the stencil's setup line says whether a step grows a mode (von Neumann)",
          "[stencil-case]") {
  const std::string grid2 = "workload: stencil\ngrid: {dims: [64, 64]}\n";
  auto line = [&](const std::string& stencil) {
    const gf::Case c = gf::load_case_text(grid2 + "stencil: " + stencil + "\n", "case.yaml");
    return gf::stencil_setup_line(c.stencil, c.grid.ndim);
  };
  // star5 at its limit 2/Σ|w| (Σ|w| = 8·63²): |G| = 1 at θ = (π, π), the limit found again
  const std::string at_limit = line("{preset: star5, coeff: 6.29e-5, steps: 10}");
  CHECK(at_limit.rfind("stable: one step grows no mode", 0) == 0);
  CHECK(at_limit.find("explicit limit coeff ≤ 6.3e-05") != std::string::npos);
  // the default coeff 1 is not refused, but said to grow
  CHECK(line("{preset: star5, steps: 3}").rfind("warning: not stable: one step multiplies a mode "
                                                 "by up to 3.175e+04 (von Neumann, at θ = (π, π)", 0) == 0);
  // user points: a 1D Laplacian along x with weights as used (limit 0.5)
  CHECK(line("{points: [[0, 0, 0, -2], [1, 0, 0, 1], [-1, 0, 0, 1]], coeff: 0.5, steps: 1}")
            .rfind("stable:", 0) == 0);
  CHECK(line("{points: [[0, 0, 0, -2], [1, 0, 0, 1], [-1, 0, 0, 1]], coeff: 0.6, steps: 100}") ==
        "warning: not stable: one step multiplies a mode by up to 1.4 (von Neumann, at θ = (π, 0); "
        "explicit limit coeff ≤ 0.5); over 100 steps that is up to 4.1e+14×");
  // a centred first difference grows at every coeff > 0
  CHECK(line("{points: [[1, 0, 0, 0.5], [-1, 0, 0, -0.5]], coeff: 0.1, steps: 1}")
            .find("no coeff > 0 is stable") != std::string::npos);
  // form: replace: an average is stable, weights summing to more than 1 are not
  CHECK(line("{points: [[1, 0, 0, 0.5], [-1, 0, 0, 0.5]], form: replace, steps: 1}")
            .rfind("stable:", 0) == 0);
  CHECK(line("{points: [[1, 0, 0, 0.6], [-1, 0, 0, 0.6]], form: replace, steps: 1}")
            .rfind("warning: not stable: one step multiplies a mode by up to 1.2 (von Neumann, at θ = (0, 0)", 0) == 0);
  // the 3D custom case in cases/ is an average: stable
  const gf::Case custom = gf::load_case(GF_SOURCE_DIR "/cases/stencil3d_custom.yaml");
  CHECK(gf::stencil_setup_line(custom.stencil, 3).rfind("stable:", 0) == 0);
}
