// Expressions (muparser) of x, y, z, pi, e and parameters, and their sampling
// on the grid.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "io/expression.hpp"
#include "solvers/expr_fill.hpp"

namespace {

gf::Expr expr(std::string text) {
  return gf::Expr{std::move(text), {"case.yaml", 9, 9}, "initial.expr"};
}

std::string error_of(const std::string& text, const gf::Params& params = {}) {
  try {
    gf::check_expression(expr(text), params);
  } catch (const gf::CaseError& e) {
    return e.what();
  }
  return "(no error)";
}

// 2D grid, 4 × 3 points, unequal spacing, off-origin: coordinates cannot
// come out right by accident.
gf::Grid grid_2d() {
  gf::Grid g;
  g.ndim = 2;
  g.n = {4, 3, 1};
  g.h = {0.5, 0.25, 1};
  g.origin = {1.0, -1.0, 0};
  return g;
}

}  // namespace

TEST_CASE("expressions evaluate x, y, z, pi, e and parameters", "[expr]") {
  const gf::Params params{{"A", 2.0}, {"w", 0.5}};
  const gf::Expression f(expr("A*x + 10*y - z/w"), params);
  CHECK(f(1, 2, 3) == Approx(2 + 20 - 6));
  CHECK(f(-1, 0, 0) == Approx(-2));
  CHECK_FALSE(f.is_constant());

  CHECK(gf::Expression(expr("pi"), {})(0, 0, 0) == std::numbers::pi);
  CHECK(gf::Expression(expr("e"), {})(0, 0, 0) == std::numbers::e);
  CHECK(gf::Expression(expr("sin(pi/2) + 2e-1"), {})(0, 0, 0) == Approx(1.2));
  CHECK(gf::Expression(expr("x < 0.5 ? 1 : 0"), {})(0.25, 0, 0) == 1);
  CHECK(gf::Expression(expr("x < 0.5 ? 1 : 0"), {})(0.75, 0, 0) == 0);
  CHECK(gf::Expression(expr("1.5"), {})(7, 7, 7) == 1.5);
}

TEST_CASE("is_constant is true exactly when x, y and z are unused", "[expr]") {
  const gf::Params params{{"A", 3.0}};
  CHECK(gf::Expression(expr("A*2 + pi"), params).is_constant());
  CHECK(gf::Expression(expr("0"), {}).is_constant());
  CHECK_FALSE(gf::Expression(expr("x"), {}).is_constant());
  CHECK_FALSE(gf::Expression(expr("0*y"), {}).is_constant());
  CHECK_FALSE(gf::Expression(expr("A + z"), params).is_constant());
}

TEST_CASE("a moved expression still evaluates its own variables", "[expr]") {
  gf::Expression a(expr("x + 2*y"), {});
  gf::Expression b(std::move(a));
  CHECK(b(1, 1, 0) == 3);
  gf::Expression c(expr("0"), {});
  c = std::move(b);
  CHECK(c(2, 0.5, 0) == 3);
}

TEST_CASE("expression faults name the key, the text and the reason", "[expr]") {
  CHECK(error_of("A*exp(-x^2/ww)", {{"A", 1}}) ==
        "case.yaml:9:9: initial.expr: cannot parse \"A*exp(-x^2/ww)\": unknown name 'ww'");
  CHECK(error_of("foo(x)") ==
        "case.yaml:9:9: initial.expr: cannot parse \"foo(x)\": unknown name 'foo'");
  CHECK(error_of("1+") ==
        "case.yaml:9:9: initial.expr: cannot parse \"1+\": unexpected end of expression at "
        "position 3");
  CHECK(error_of("x y") ==
        "case.yaml:9:9: initial.expr: cannot parse \"x y\": unexpected variable \"y\" found at "
        "position 2");
  CHECK(error_of("") == "case.yaml:9:9: initial.expr: cannot parse \"\": expression is empty");
  CHECK(error_of("x = 1") ==
        "case.yaml:9:9: initial.expr: cannot parse \"x = 1\": '=' assigns in muparser; use == to "
        "compare");
  CHECK(error_of("x += 1") ==
        "case.yaml:9:9: initial.expr: cannot parse \"x += 1\": '=' assigns in muparser; use == to "
        "compare");
  CHECK(error_of("1, 2") ==
        "case.yaml:9:9: initial.expr: cannot parse \"1, 2\": expected one value, got 2 separated "
        "by commas");
  CHECK(error_of("x == 1 || x != 2 || x <= 3 || x >= 4") == "(no error)");
}

TEST_CASE("sample_expression visits every point x-fastest at origin + i·h", "[expr]") {
  const gf::Grid g = grid_2d();
  std::vector<double> u(g.size(), NAN);
  gf::sample_expression(expr("x + 10*y + 100*z"), {}, g, u.data());
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 4; ++i) {
      INFO("i = " << i << ", j = " << j);
      CHECK(u[i + 4 * j] == Approx((1.0 + 0.5 * i) + 10 * (-1.0 + 0.25 * j)));
    }

  std::vector<float> f(g.size(), NAN);
  gf::sample_expression(expr("A*y"), {{"A", 2.0}}, g, f.data());
  CHECK(f[0] == Approx(-2.0f));
  CHECK(f[11] == Approx(-1.0f));  // (i, j) = (3, 2): y = -0.5
}

TEST_CASE("sample_expression on a 3D grid, in parallel, matches point by point", "[expr]") {
  gf::Grid g;
  g.ndim = 3;
  g.n = {17, 9, 5};
  g.h = {0.1, 0.2, 0.3};
  g.origin = {0, 1, 2};
  std::vector<double> u(g.size(), NAN);
  gf::sample_expression(expr("sin(x)*y + z^2"), {}, g, u.data());
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const double x = 0.1 * i, y = 1 + 0.2 * j, z = 2 + 0.3 * k;
        REQUIRE(u[g.index(i, j, k)] == Approx(std::sin(x) * y + z * z));
      }
}

TEST_CASE("a constant expression fills the whole field", "[expr]") {
  const gf::Grid g = grid_2d();
  std::vector<float> u(g.size(), NAN);
  gf::sample_expression(expr("2*pi"), {}, g, u.data());
  for (float v : u) CHECK(v == Approx(2 * std::numbers::pi));
}

TEST_CASE("a value that is not finite is a CaseError at the expression", "[expr]") {
  const gf::Grid g = grid_2d();
  std::vector<double> u(g.size());
  const auto message = [&](const std::string& text) {
    try {
      gf::sample_expression(expr(text), {}, g, u.data());
    } catch (const gf::CaseError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message("1/0") ==
        "case.yaml:9:9: initial.expr: value is not finite at (x, y, z) = (1, -1, 0)");
  // Two bad rows (y = -0.75 and y = -0.5): the first point in x-fastest order is named.
  CHECK(message("1/((y+0.5)*(y+0.75))") ==
        "case.yaml:9:9: initial.expr: value is not finite at (x, y, z) = (1, -0.75, 0)");
  CHECK(message("sqrt(x-2.2)") ==
        "case.yaml:9:9: initial.expr: value is not finite at (x, y, z) = (1, -1, 0)");

  std::vector<float> f(g.size());
  try {
    gf::sample_expression(expr("1e39*x"), {}, g, f.data());
    FAIL("no error");
  } catch (const gf::CaseError& e) {
    CHECK(std::string(e.what()) ==
          "case.yaml:9:9: initial.expr: value 1e+39 does not fit in float32 at (x, y, z) = (1, -1, "
          "0)");
  }
}
