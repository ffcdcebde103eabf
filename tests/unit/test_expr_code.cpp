// The expressions' bytecode (core/expr_code.hpp, compiled by
// io/expression.cpp, run by kernels/expr/expr_ops.hpp) against muparser
// itself, and the CPU executor that fills fields with it.
#include <catch2/catch.hpp>
#include <muParser.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "expr_test_cases.hpp"
#include "io/expression.hpp"
#include "kernels/expr/expr_exec.hpp"
#include "solvers/expr_fill.hpp"

using namespace gf;

namespace {

Expr expr(const std::string& text) { return Expr{text, {"case.yaml", 3, 7}, "initial.expr"}; }

double run(const ExprCode& c, double x, double y, double z) {
  std::vector<double> s(std::size_t(c.stack) + 1);
  return expr_value(c.code.data(), int(c.code.size()), x, y, z, s.data());
}

bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Points where comparisons, signs and rounding sit on their edges, and random ones.
std::vector<std::array<double, 3>> test_points() {
  std::vector<std::array<double, 3>> p;
  const double edges[] = {-2, -1, -0.5, 0, 0.5, 1, 2, 1.0 / 3.7};
  for (double x : edges)
    for (double y : edges) p.push_back({x, y, x - y});
  std::mt19937_64 rng(20);
  std::uniform_real_distribution<double> d(-2.0, 2.0);
  for (int i = 0; i < 3000; ++i) p.push_back({d(rng), d(rng), d(rng)});
  return p;
}

}  // namespace

TEST_CASE("the bytecode gives muparser's values, every operation and function", "[expr]") {
  const auto points = test_points();
  for (const std::string& text : test::expr_test_cases()) {
    const Expression f(expr(text), test::expr_test_params());
    const ExprCode c = f.code();
    INFO(text);
    CHECK(c.constant() == f.is_constant());
    std::size_t differ = 0, not_bitwise = 0;
    for (const auto& [x, y, z] : points) {
      const double want = f(x, y, z), got = run(c, x, y, z);
      if (same_bits(want, got)) continue;
      ++not_bitwise;
      // round-off at most (the same libm calls in the same order: none expected)
      if (!(std::abs(got - want) <= 1e-14 * std::abs(want))) {
        ++differ;
        if (differ < 4) WARN("at (" << x << ", " << y << ", " << z << "): muparser " << want
                                    << ", bytecode " << got);
      }
    }
    CHECK(differ == 0);
    CHECK(not_bitwise == 0);
  }
}

// a^2 is the product rounded once (expr_binary), where muparser calls pow:
// the same but for about one base in a thousand, which pow puts an ulp off.
TEST_CASE("a square is the product rounded once, within an ulp of muparser's pow", "[expr]") {
  const auto points = test_points();
  struct Square {
    const char* text;
    double (*want)(double, double, double);
  };
  const Square squares[] = {
      {"(x-0.5)^2", [](double x, double, double) { return (x - 0.5) * (x - 0.5); }},
      {"(x+y)^2", [](double x, double y, double) { return (x + y) * (x + y); }},
      {"-(y*z)^2", [](double, double y, double z) { return -((y * z) * (y * z)); }}};
  for (const Square& sq : squares) {
    const char* text = sq.text;
    INFO(text);
    const Expression f(expr(text), test::expr_test_params());
    std::size_t off = 0;
    for (const auto& [x, y, z] : points) {
      const double want = sq.want(x, y, z);
      const double got = run(f.code(), x, y, z), mu = f(x, y, z);
      CHECK(same_bits(got, want));
      off += !same_bits(got, mu);
      CHECK(std::abs(got - mu) <= 2.3e-16 * std::abs(mu));
    }
    CHECK(off < points.size() / 100);
  }
}

TEST_CASE("the test expressions use every bytecode operation and every muparser function",
          "[expr]") {
  std::set<int> used;
  std::set<std::string> called;  // the names written before a '('
  for (const std::string& text : test::expr_test_cases()) {
    for (const ExprInstr& i : Expression(expr(text), test::expr_test_params()).code().code)
      used.insert(int(i.op));
    std::string name;
    for (char ch : text) {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
        name += ch;
        continue;
      }
      if (ch == '(' && !name.empty()) called.insert(name);
      name.clear();
    }
  }
  for (int op = int(ExprOp::Const); op <= int(ExprOp::Max); ++op) {
    if (op == int(ExprOp::VarScale)) continue;  // made by a pde's programs only (test_pde.cpp)
    INFO("ExprOp " << op);
    CHECK(used.count(op) == 1);
  }
  // A function a newer muparser adds would not compile to bytecode: this names it.
  const mu::Parser parser;
  for (const auto& [name, cb] : parser.GetFunDef()) {
    INFO("muparser's function " << name);
    CHECK(called.count(name) == 1);
  }
}

TEST_CASE("the bytecode's stack depth is what the program needs", "[expr]") {
  CHECK(Expression(expr("x"), {}).code().stack == 1);
  CHECK(Expression(expr("sin(x)*2 + 1"), {}).code().stack == 2);
  CHECK(Expression(expr("min(x, y, z, 1, 2, 3)"), {}).code().stack == 6);
  // sin(x) + (sin(y) + (sin(z) + ...)): one more value a level
  std::string deep = "sin(x)";
  for (int i = 0; i < 40; ++i) deep = "sin(" + std::string(i % 2 ? "y" : "z") + ") + (" + deep + ")";
  const Expression f(expr(deep), {});
  const ExprCode c = f.code();
  CHECK(c.stack == 41);
  CHECK(c.stack > kExprDeviceStack);  // the GPU evaluates it on the host
  CHECK(same_bits(run(c, 0.1, 0.2, 0.3), f(0.1, 0.2, 0.3)));
  CHECK(ExprCode::of_value(2.5).constant());
  CHECK(run(ExprCode::of_value(2.5), 9, 9, 9) == 2.5);
}

TEST_CASE("the CPU executor fills boxes in order and names each part's first bad point",
          "[expr]") {
  Grid g;
  g.ndim = 3;
  g.n = {7, 5, 4};
  g.h = {0.25, 0.5, 0.125};
  g.origin = {-1, 0.5, 2};
  g.offset = {3, -1, 2};  // a rank's block: coordinates from global indices
  auto cpu = make_cpu_backend<double>();
  Field<double> f = cpu->make_field(g, "f");
  const ExprCode whole = Expression(expr("x + 10*y + 100*z"), {}).code();
  const ExprCode face = Expression(expr("1/(y - 1)"), {}).code();  // y = 1 at j = 2
  Box left = Box::whole(g.n.data());
  left.hi[0] = 1;
  const auto bad = make_expr_exec(*cpu)->fill(
      {ExprPart{&whole, Box::whole(g.n.data())}, ExprPart{&face, left}}, ExprPoints::of(g), f);
  REQUIRE(bad.size() == 2);
  CHECK(bad[0] == -1);
  CHECK(bad[1] == g.layout().index(0, 2, 0));
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const double x = g.coord(0, i), y = g.coord(1, j), z = g.coord(2, k);
        const double want = i == 0 ? 1 / (y - 1) : x + 10 * y + 100 * z;
        INFO(i << " " << j << " " << k);
        CHECK(same_bits(f.view()(i, j, k), want));
      }
}

TEST_CASE("fill_expression on a backend: values and errors as sample_expression's", "[expr]") {
  Grid g;
  g.ndim = 2;
  g.n = {4, 3, 1};
  g.h = {0.5, 0.25, 1};
  g.origin = {1.0, -1.0, 0};
  auto cpu = make_cpu_backend<float>();
  Field<float> f = cpu->make_field(g, "f");
  fill_expression(*cpu, expr("A*y"), {{"A", 2.0}}, f);
  std::vector<float> h(std::size_t(g.size()));
  cpu->download(f, h.data());
  CHECK(h[0] == Approx(-2.0f));
  CHECK(h[11] == Approx(-1.0f));
  try {
    fill_expression(*cpu, expr("1e39*x"), {}, f);
    FAIL("no error");
  } catch (const CaseError& e) {
    CHECK(std::string(e.what()) ==
          "case.yaml:3:7: initial.expr: value 1e+39 does not fit in float32 at (x, y, z) = (1, "
          "-1, 0)");
  }
  try {
    fill_expression(*cpu, expr("1/((y+0.5)*(y+0.75))"), {}, f);
    FAIL("no error");
  } catch (const CaseError& e) {
    CHECK(std::string(e.what()) ==
          "case.yaml:3:7: initial.expr: value is not finite at (x, y, z) = (1, -0.75, 0)");
  }
}
