// The generic stencil formula on the CPU reference: presets are exact
// discrete Laplacians on polynomials, user offsets move data the way they say
// (axis order and sign), update vs replace, wrap-around, wide-stencil walls.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/stencil/stencil_exec.hpp"
#include "solvers/stencil.hpp"
#include "tests/unit/heat_test_util.hpp"

using namespace gf;

namespace {

std::vector<double> run_cpu(const Case& c) {
  auto be = make_cpu_backend<double>();
  StencilSolver<double> s(c, *be);
  s.advance(c.stencil.steps);
  std::vector<double> u(s.field().size());
  be->download(s.field(), u.data());
  return u;
}

Case stencil_case(const std::string& dims, const std::string& stencil, const std::string& init,
                  const std::string& boundary = "{default: {type: neumann}}") {
  return load_case_text("workload: stencil\ngrid: {dims: " + dims + ", spacing: " +
                            (dims.find(',') == std::string::npos ? "[0.5]"
                             : std::count(dims.begin(), dims.end(), ',') == 1 ? "[0.5, 0.5]"
                                                                               : "[0.5, 0.5, 0.5]") +
                            "}\ninitial: {expr: \"" + init + "\"}\nboundary: " + boundary +
                            "\nstencil: " + stencil + "\n",
                        "stencil.yaml");
}

// Max |u − want| over the points at least r from every face.
double interior_error(const Case& c, const std::vector<double>& u, int r, auto&& want) {
  const Grid& g = c.grid;
  double e = 0;
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const std::int64_t p[3] = {i, j, k};
        bool inside = true;
        for (int a = 0; a < g.ndim; ++a) inside = inside && p[a] >= r && p[a] < g.n[a] - r;
        if (inside) e = std::max(e, std::fabs(u[g.index(i, j, k)] - want(i, j, k)));
      }
  return e;
}

}  // namespace

TEST_CASE("Laplacian presets on a quadratic give the exact constant", "[stencil]") {
  // ∇²(x² + y²) = 4, ∇²(x² + y² + z²) = 6, on h = 0.5 (weights carry 1/h²).
  struct P { const char* preset; const char* dims; const char* init; double want; int r; };
  for (P p : {P{"star5", "[12, 11]", "x^2+y^2", 4, 1}, P{"star9", "[12, 11]", "x^2+y^2", 4, 2},
              P{"box9", "[12, 11]", "x^2+y^2", 4, 1}, P{"star7", "[9, 8, 7]", "x^2+y^2+z^2", 6, 1},
              P{"star13", "[9, 8, 7]", "x^2+y^2+z^2", 6, 2},
              P{"box27", "[9, 8, 7]", "x^2+y^2+z^2", 6, 1}}) {
    INFO(p.preset);
    const Case c = stencil_case(p.dims, std::string("{preset: ") + p.preset +
                                            ", form: replace, steps: 1}", p.init);
    const auto u = run_cpu(c);
    CHECK(interior_error(c, u, p.r, [&](auto, auto, auto) { return p.want; }) < 1e-10);
  }
}

TEST_CASE("star7 of x²+y²+z² is 6/h² in units of the raw weights", "[stencil]") {
  // The same with h = 0.25: the constant does not depend on h, the weights do.
  const Case c = load_case_text(
      "workload: stencil\ngrid: {dims: [9, 9, 9], spacing: [0.25, 0.25, 0.25]}\n"
      "initial: {expr: \"x^2+y^2+z^2\"}\nboundary: {default: {type: neumann}}\n"
      "stencil: {preset: star7, form: replace, steps: 1}\n",
      "h.yaml");
  REQUIRE(c.stencil.points.size() == 7);
  const auto u = run_cpu(c);
  CHECK(interior_error(c, u, 1, [](auto, auto, auto) { return 6.0; }) < 1e-10);
}

TEST_CASE("A user stencil moves data the way its offsets say", "[stencil]") {
  // f = i + 100 j + 10000 k (on h = 0.5: x = i/2 ...). Replace with one tap of
  // weight 1 at offset o gives f(p + o): a swapped axis or sign fails.
  const char* f = "2*x + 200*y + 20000*z";
  auto fi = [](std::int64_t i, std::int64_t j, std::int64_t k) {
    return double(i) + 100.0 * double(j) + 10000.0 * double(k);
  };
  struct O { int dx, dy, dz; };
  for (O o : {O{1, 0, 0}, O{-2, 0, 0}, O{0, 3, 0}, O{0, -1, 0}, O{0, 0, 2}, O{1, -1, 4}}) {
    INFO(o.dx << " " << o.dy << " " << o.dz);
    const Case c = stencil_case("[11, 10, 12]",
                                "{points: [[" + std::to_string(o.dx) + ", " + std::to_string(o.dy) +
                                    ", " + std::to_string(o.dz) + ", 1]], form: replace, steps: 1}",
                                f);
    const auto u = run_cpu(c);
    CHECK(interior_error(c, u, 4, [&](auto i, auto j, auto k) {
            return fi(i + o.dx, j + o.dy, k + o.dz);
          }) == 0.0);
  }
}

TEST_CASE("update adds coeff·Σ, replace takes Σ", "[stencil]") {
  const std::string pts = "points: [[1, 0, 0, 0.5], [-1, 0, 0, 0.25]], steps: 1";
  const Case up = stencil_case("[16]", "{" + pts + ", form: update, coeff: 0.1}", "x^2");
  const Case rp = stencil_case("[16]", "{" + pts + ", form: replace}", "x^2");
  const auto u = run_cpu(up), r = run_cpu(rp);
  for (int i = 1; i < 15; ++i) {
    const double x = 0.5 * i, xp = x + 0.5, xm = x - 0.5;
    const double sum = 0.5 * xp * xp + 0.25 * xm * xm;
    CHECK(r[i] == Approx(sum).epsilon(1e-14));
    CHECK(u[i] == Approx(x * x + 0.1 * sum).epsilon(1e-14));
  }
}

TEST_CASE("Periodic axes wrap for offsets wider than one point", "[stencil]") {
  const Case c = stencil_case("[10]", "{points: [[-3, 0, 0, 1]], form: replace, steps: 2}", "x",
                              "{x: {type: periodic}}");
  const auto u = run_cpu(c);
  for (int i = 0; i < 10; ++i) CHECK(u[i] == Approx(0.5 * ((i - 6 + 10) % 10)));
}

TEST_CASE("Beyond a wall: Neumann mirrors with the gradient, Dirichlet reflects oddly",
          "[stencil]") {
  const double data[6] = {1, 2, 4, 8, 16, 32};
  const std::int64_t n[3] = {6, 1, 1};
  const FieldView<const double> u(data, Layout::dense(n));
  AxisBc<double> neu[3];
  neu[0] = {BcType::Neumann, BcType::Neumann, 0.5, 0.25};
  CHECK(value_at<0, 1>(u, neu, -2, 0, 0) == 4 + 2 * 0.5);   // u(2) + 2·ghost
  CHECK(value_at<0, 1>(u, neu, 7, 0, 0) == 8 + 2 * 0.25);   // u(3) + 2·ghost
  CHECK(value_at<0, 1>(u, neu, -1, 0, 0) == 2 + 0.5);       // the heat rule
  AxisBc<double> dir[3];
  dir[0] = {BcType::Dirichlet, BcType::Dirichlet, 0, 0};
  CHECK(value_at<0, 1>(u, dir, -3, 0, 0) == 2 * 1 - 8);     // 2·u_b − u(3)
  CHECK(value_at<0, 1>(u, dir, 6, 0, 0) == 2 * 32 - 16);
  AxisBc<double> per[3];
  per[0] = {BcType::Periodic, BcType::Periodic, 0, 0};
  CHECK(value_at<0, 1>(u, per, -4, 0, 0) == 4);
  CHECK(value_at<0, 1>(u, per, 9, 0, 0) == 8);
}

TEST_CASE("Dirichlet faces are held by stencils", "[stencil]") {
  const Case c = stencil_case("[12, 9]", "{preset: box9, coeff: 0.01, steps: 5}", "x*y",
                              "{x: {type: dirichlet, value: 3}, y: {type: neumann}}");
  const auto u = run_cpu(c);
  for (int j = 0; j < 9; ++j) {
    CHECK(u[c.grid.index(0, j)] == 3.0);
    CHECK(u[c.grid.index(11, j)] == 3.0);
  }
}

TEST_CASE("CPU temporally blocked star7 and star5 equal one step at a time, bit for bit", "[stencil]") {
  // update and replace, every boundary mix of the heat passes' test, a
  // periodic last axis shorter than k, rows of 1 and 2 interior points, 3D and 2D
  auto cpu32 = make_cpu_backend<float>();
  auto cpu64 = make_cpu_backend<double>();
  const std::vector<std::vector<std::int64_t>> shapes = {{13, 9, 11}, {3, 4, 3}, {4, 5, 2},
                                                         {13, 11},    {3, 3},    {4099, 2}};
  test::for_each_time_block_case(shapes, [&](int k, const auto& kind, const auto& n, bool replace) {
    test::compare_stencil_time_block<float>(*cpu32, k, n, kind, replace);
    test::compare_stencil_time_block<double>(*cpu64, k, n, kind, replace);
  });
  // what it offers: a star of radius 1 in the presets' order (star7, star5) only
  std::vector<StencilTap<float>> star;
  const int off[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  for (const auto& d : off) star.push_back({{d[0], d[1], d[2]}, 0.5f});
  auto exec = make_stencil_exec(*cpu32);
  exec->set_taps(star);
  StencilArgs<float> a;
  a.ndim = 3;
  std::int64_t n[3] = {32, 32, 32};
  CHECK(exec->time_block(a, Layout::dense(n), 3) == 3);
  CHECK(exec->time_block(a, Layout::dense(n), 0) == 4);
  CHECK(exec->time_block(a, Layout::dense(n), 5) == 1);
  a.ndim = 2;  // star7's taps on a 2D grid
  n[2] = 1;
  CHECK(exec->time_block(a, Layout::dense(n), 3) == 1);
  star.resize(5);  // star5's
  exec->set_taps(star);
  CHECK(exec->time_block(a, Layout::dense(n), 3) == 3);
  a.ndim = 3;
  n[2] = 32;
  CHECK(exec->time_block(a, Layout::dense(n), 3) == 1);
  std::vector<StencilTap<float>> box;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) box.push_back({{dx, dy, dz}, 1.0f});
  exec->set_taps(box);
  CHECK(exec->time_block(a, Layout::dense(n), 2) == 1);
  CHECK(exec->time_block(a, Layout::dense(n), 0) == 1);
  Grid g;
  g.ndim = 3;
  g.n[0] = g.n[1] = g.n[2] = 32;
  Field<float> u = cpu32->make_field(g, "u"), v = cpu32->make_field(g, "v");
  CHECK_THROWS_AS(exec->steps(a, 2, u, v), DeviceError);
}

TEST_CASE("stencil.time_block: the same fields as one step a pass, and what it allows",
          "[stencil]") {
  const std::string text = R"Y(workload: stencil
grid: {dims: [12, 10, 9]}
initial: {expr: "sin(3*x)*cos(2*y)+z"}
boundary: {default: {type: neumann, gradient: 0.5}, z: {type: periodic}}
stencil: {preset: star7, coeff: 0.0004, steps: 23}
)Y";
  auto field_after = [&](const char* tb, int* took) {
    const Case c = load_case_text(text, "case.yaml", {std::string("stencil.time_block=") + tb});
    auto cpu = make_cpu_backend<double>();
    StencilSolver<double> s(c, *cpu);
    s.advance(c.stencil.steps);
    *took = s.time_block();
    CHECK(s.step() == 23);
    std::vector<double> u(static_cast<std::size_t>(c.grid.size()));
    cpu->download(s.field(), u.data());
    return u;
  };
  int k4 = 0, k1 = 0, kauto = 0;
  CHECK(field_after("4", &k4) == field_after("1", &k1));
  CHECK(k4 == 4);
  CHECK(k1 == 1);
  field_after("auto", &kauto);
  CHECK(kauto == 1);  // fewer than 200 steps: not worth timing
  // a stencil the passes do not run
  const std::string box = R"Y(workload: stencil
grid: {dims: [8, 8, 8]}
stencil: {preset: box27, steps: 3, time_block: 2}
)Y";
  try {
    load_case_text(box, "box.yaml");
    FAIL("no error");
  } catch (const CaseError& e) {
    CHECK(std::string(e.what()) ==
          "box.yaml:3:48: stencil.time_block: temporal blocking is for stars of radius 1 in 2D "
          "or 3D (star5 or star7, or points in their order: centre, -x, +x, -y, +y, and in 3D "
          "-z, +z)");
  }
  CHECK(load_case_text(box, "box.yaml", {"stencil.time_block=1"}).stencil.time_block == 1);
}
