// The CUDA expressions' executor against the CPU reference: every operation
// and function of the language (tests/unit/expr_test_cases.hpp) over grids
// of one, two and three dimensions whose points span [−2, 2] (a rank's block
// among them: coordinates from a global offset), both precisions, several
// parts a fill (a whole field, then faces), the first bad point of each part,
// and a program too deep for the kernel's stack. Values agree to round-off:
// CUDA's math functions are not the C library's (within 1e-14 relative to
// max(|v|, 1) in double, two float32 ulps once stored as float).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/expression.hpp"
#include "kernels/device.hpp"
#include "kernels/expr/expr_exec.hpp"
#include "tests/unit/expr_test_cases.hpp"

using namespace gf;

namespace {

Expr expr(const std::string& text) { return Expr{text, {"case.yaml", 1, 1}, "initial.expr"}; }

// A grid of n points per axis over [−2, 2] (a little off, so that no
// coordinate is a round number but 0 and ±1 still occur on some).
Grid span_grid(int ndim, std::vector<std::int64_t> n, std::array<std::int64_t, 3> offset = {}) {
  Grid g;
  g.ndim = ndim;
  for (int a = 0; a < 3; ++a) {
    g.n[a] = a < ndim ? n[a] : 1;
    g.h[a] = a < ndim ? 4.0 / double(n[a] - 1) : 1.0;
    g.origin[a] = a < ndim ? -2.0 : 0.0;
    g.offset[a] = offset[a];
  }
  return g;
}

template <class T>
bool close(T g, T c) {
  if (std::isnan(double(c))) return std::isnan(double(g));
  if (std::isinf(double(c))) return g == c;
  const double scale = std::max(std::abs(double(c)), 1.0);
  const double tol = sizeof(T) == 8 ? 1e-14 : 2.0 * std::numeric_limits<float>::epsilon();
  return std::abs(double(g) - double(c)) <= tol * scale;
}

template <class T>
void compare(const Grid& g, const std::vector<ExprCode>& codes, bool faces) {
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  std::vector<ExprPart> parts;
  parts.push_back(ExprPart{&codes[0], Box::whole(g.n.data())});
  if (faces)  // the x− and y+ faces (Dirichlet values over an initial value)
    for (std::size_t p = 1; p < codes.size() && p < 3; ++p) {
      Box b = Box::whole(g.n.data());
      const int axis = p == 1 ? 0 : std::min(1, g.ndim - 1);
      b.lo[axis] = p == 1 ? 0 : g.n[axis] - 1;
      b.hi[axis] = b.lo[axis] + 1;
      parts.push_back(ExprPart{&codes[p], b});
    }
  Field<T> fc = cpu->make_field(g, "cpu"), fg = gpu->make_field(g, "gpu");
  // poisoned first, so that every point must be written
  std::vector<T> nan(std::size_t(g.size()), std::numeric_limits<T>::quiet_NaN());
  gpu->upload(nan.data(), fg);
  const ExprPoints at = ExprPoints::of(g);
  const auto bc = make_expr_exec(*cpu)->fill(parts, at, fc);
  const auto bg = make_expr_exec(*gpu)->fill(parts, at, fg);
  std::vector<T> c(nan.size()), d(nan.size());
  cpu->download(fc, c.data());
  gpu->download(fg, d.data());
  std::size_t bad = 0;
  for (std::size_t q = 0; q < c.size(); ++q)
    if (!close(d[q], c[q]) && ++bad < 4)
      WARN("point " << q << ": cpu " << double(c[q]) << ", gpu " << double(d[q]));
  CHECK(bad == 0);
  CHECK(bc == bg);  // the same first bad point of each part
}

}  // namespace

TEST_CASE("GPU expressions equal the CPU's to round-off, every operation", "[gpu]") {
  const Grid grids[] = {span_grid(3, {21, 17, 13}), span_grid(2, {67, 45}),
                        span_grid(1, {1001}),
                        // a rank's block: offsets shift every coordinate
                        span_grid(3, {19, 11, 23}, {-3, 5, 2})};
  for (const std::string& text : test::expr_test_cases()) {
    INFO(text);
    const std::vector<ExprCode> codes = {Expression(expr(text), test::expr_test_params()).code()};
    for (const Grid& g : grids) {
      INFO("grid " << g.shape_str());
      compare<double>(g, codes, false);
      compare<float>(g, codes, false);
    }
  }
}

// A sphere through grid points (0.62 = 186/300 on x, 0.5 on y and z): its
// points on the surface are in or out by the last bit of the squares, so the
// GPU must make a^2 as the CPU does (expr_binary), not by CUDA's pow.
TEST_CASE("GPU expressions: a^2 bit for bit with the CPU (a sphere through grid points)",
          "[gpu]") {
  Grid g;
  g.ndim = 3;
  g.n = {300, 40, 20};
  g.h = {1.0 / 300, 1.0 / 40, 1.0 / 20};
  const std::vector<ExprCode> codes = {
      Expression(expr("(x-0.5)^2 + (y-0.5)^2 + (z-0.5)^2 < r^2 ? 0.5 : 1"), Params{{"r", 0.12}})
          .code()};
  auto cpu = make_cpu_backend<double>();
  auto gpu = make_cuda_backend<double>(0);
  Field<double> fc = cpu->make_field(g, "cpu"), fg = gpu->make_field(g, "gpu");
  const std::vector<ExprPart> parts = {ExprPart{&codes[0], Box::whole(g.n.data())}};
  make_expr_exec(*cpu)->fill(parts, ExprPoints::of(g), fc);
  make_expr_exec(*gpu)->fill(parts, ExprPoints::of(g), fg);
  std::vector<double> c(std::size_t(g.size())), d(c.size());
  cpu->download(fc, c.data());
  gpu->download(fg, d.data());
  std::size_t differ = 0, inside = 0;
  for (std::size_t q = 0; q < c.size(); ++q) {
    differ += c[q] != d[q];
    inside += c[q] == 0.5;
  }
  CHECK(inside > 0);
  CHECK(differ == 0);
}

TEST_CASE("GPU expression fills: parts in order, each part's first bad point", "[gpu]") {
  const Params& p = test::expr_test_params();
  const std::vector<ExprCode> codes = {
      Expression(expr("A*exp(-((x-0.5)^2+(y-0.5)^2+(z-0.5)^2)/w^2)"), p).code(),
      Expression(expr("sin(pi*y) + log(z + 3)"), p).code(),
      Expression(expr("sqrt(x + 1.5)/(y - 3)"), p).code()};  // bad where x < −1.5
  for (const Grid& g : {span_grid(3, {21, 17, 13}), span_grid(2, {41, 9})}) {
    compare<double>(g, codes, true);
    compare<float>(g, codes, true);
  }
  const std::vector<ExprCode> big = {Expression(expr("1e39*x"), p).code()};
  compare<float>(span_grid(2, {41, 9}), big, false);  // overflows float32 only
  compare<double>(span_grid(2, {41, 9}), big, false);
}

TEST_CASE("a program deeper than the GPU kernel's stack is evaluated alike", "[gpu]") {
  std::string deep = "sin(x)";
  for (int i = 0; i < 40; ++i) deep = "cos(" + std::string(i % 2 ? "y" : "z") + ") + (" + deep + ")";
  const std::vector<ExprCode> codes = {Expression(expr("x*y"), {}).code(),
                                       Expression(expr(deep), {}).code(),
                                       Expression(expr("sqrt(y)"), {}).code()};
  REQUIRE(codes[1].stack > kExprDeviceStack);
  compare<double>(span_grid(3, {13, 9, 7}), codes, true);
  compare<float>(span_grid(2, {31, 5}), codes, true);
}
