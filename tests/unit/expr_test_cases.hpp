// Expressions that together use every operation of the expression language
// (every ExprOp of core/expr_code.hpp, every function muparser defines):
// the bytecode is checked against muparser on them (test_expr_code.cpp) and
// the GPU's evaluation against the CPU's (tests/gpu/test_expr_gpu.cpp).
// Over x, y, z in [−2, 2] none subtracts two large values that nearly
// cancel, so that values computed by functions a few ulp apart (CUDA's and
// the C library's) stay within 1e-14 of each other relative to max(|v|, 1).
#pragma once
#include <string>
#include <vector>

#include "io/case.hpp"

namespace gf::test {

inline const Params& expr_test_params() {
  static const Params p{{"A", 2.5}, {"w", 0.3}, {"q", -0.75}};
  return p;
}

inline const std::vector<std::string>& expr_test_cases() {
  static const std::vector<std::string> cases = {
      // arithmetic, powers (muparser's optimiser makes x·a + b, x², x³, x⁴ of some)
      "x + y", "x - y", "x * y", "x / (y + 3)", "y / x", "x ^ 2", "x^3", "y^4", "z^5", "2^x",
      "abs(x)^y", "x^-2", "A*x + 3", "1 - x*2", "x*2*y", "x/2*3", "y*x + q", "pi*x", "e^y",
      "x+(x+(x+x))", "1e-3*x + 1e3*y",
      // signs
      "-x", "+x", "-x^2", "-(-y)", "2*+z", "-(x*y)", "-sin(x)",
      // comparisons and logic (1 or 0; NaN is true)
      "x < y", "x > y", "x <= 0.5", "x >= -0.5", "x == y", "x != y", "x == 0", "y != 0",
      "(x > 0) && (y > 0)", "(x > 0) || (y > 0)", "x && y", "x || 0", "sqrt(x) && 1",
      // the ternary, nested both ways
      "x < 0 ? -x : x*2", "x < 0 ? (y < 0 ? 1 : 2) : (z < 0 ? 3 : 4)",
      "x > 0 ? y > 0 ? 1 : 2 : 3", "x > 0 ? 1 : y > 0 ? 2 : z > 0 ? 3 : 4",
      "(x < y ? x : y) + (y < z ? y : z)*A", "sqrt(x) ? 1 : 0",
      // every function of muparser's default set
      "sin(x)", "cos(y)", "tan(x)", "asin(x)", "acos(y/2)", "atan(z)", "sinh(x)", "cosh(y)",
      "tanh(z)", "asinh(x)", "acosh(y + 3)", "acosh(x)", "atanh(x/3)", "atanh(x)", "log(x + 3)",
      "ln(y + 3)", "log(x)", "log2(z + 3)", "log10(x + 3)", "log10(y)", "exp(x)", "sqrt(y + 2)",
      "sqrt(x)", "abs(x)", "abs(y - 0.5)", "sign(x)", "sign(y - 0.5)", "rint(x * 3.7)",
      "rint(y + 0.5)", "atan2(y, x)", "atan2(x, 0)", "sum(x, y, z)", "sum(x)", "avg(x, y)",
      "avg(x, y, z, 1)", "min(x, y, z)", "min(x)", "max(x, y)", "max(x, y, z, 0.5, -1)",
      "min(max(x, y), z)", "1/x", "x/0",
      "max(x, y, z, 1, -1, 0.5, -0.5, 2, -2, 0.25)",  // 10 deep: the GPU's deeper stack
      // whole expressions as cases write them
      "A*exp(-((x-0.5)^2+(y-0.5)^2+(z-0.5)^2)/w^2)", "sin(pi*x)*cos(pi*y)*exp(-z)",
      "x < 0.5 ? 1 : 0", "q*exp(-((x-0.3)^2 + (y-0.6)^2)/w^2) + 0.1*z",
      "sqrt(x^2 + y^2 + z^2) - 1", "max(abs(x), abs(y)) < 0.5 && z > 0",
      // constants (muparser folds them: one number)
      "2*3 + 1", "sin(1) + A*w", "pi", "e", "_pi", "-q",
  };
  return cases;
}

}  // namespace gf::test
