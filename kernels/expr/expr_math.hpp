// What each operation of the expressions' bytecode computes (core/expr_op.hpp),
// one function a kind of operation: the interpreter (expr_ops.hpp, on the CPU
// and in CUDA kernels) and the kernels that kernels/pde/ generates and
// compiles at run time (NVRTC: no standard headers there, its built-in math
// functions) call the same ones, so an expression computes the same
// operations in the same order on every path.
//
// Each is muparser 2.3's definition (MathImpl in muParserTemplateMagic.h:
// asinh as log(v + sqrt(v·v + 1)), rint as floor(v + 0.5), min and max as
// std::min and std::max fold them, ...), in double. Products that a sum
// follows are rounded on their own (mul_rn), so that nvcc does not fuse them
// where the CPU rounds twice.
#pragma once
#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

#include "core/expr_op.hpp"
#include "kernels/ops/hd.hpp"

namespace gf {

// a ∘ b for the binary operations (Add ... Or, Atan2).
GF_HD double expr_binary(ExprOp op, double a, double b) {
  switch (op) {
    case ExprOp::Add: return a + b;
    case ExprOp::Sub: return a - b;
    case ExprOp::Mul: return a * b;
    case ExprOp::Div: return a / b;
    case ExprOp::Pow: return ::pow(a, b);
    case ExprOp::Lt: return a < b;
    case ExprOp::Gt: return a > b;
    case ExprOp::Le: return a <= b;
    case ExprOp::Ge: return a >= b;
    case ExprOp::Eq: return a == b;
    case ExprOp::Ne: return a != b;
    case ExprOp::And: return a && b;
    case ExprOp::Or: return a || b;
    case ExprOp::Atan2: return ::atan2(a, b);
    default: return 0.0;
  }
}

// f(b) for the functions of one value (Neg ... Rint).
GF_HD double expr_unary(ExprOp op, double b) {
  switch (op) {
    case ExprOp::Neg: return -b;
    case ExprOp::Plus: return b;
    case ExprOp::Sin: return ::sin(b);
    case ExprOp::Cos: return ::cos(b);
    case ExprOp::Tan: return ::tan(b);
    case ExprOp::Asin: return ::asin(b);
    case ExprOp::Acos: return ::acos(b);
    case ExprOp::Atan: return ::atan(b);
    case ExprOp::Sinh: return ::sinh(b);
    case ExprOp::Cosh: return ::cosh(b);
    case ExprOp::Tanh: return ::tanh(b);
    case ExprOp::Asinh: return ::log(b + ::sqrt(mul_rn(b, b) + 1));
    case ExprOp::Acosh: return ::log(b + ::sqrt(mul_rn(b, b) - 1));
    case ExprOp::Atanh: return 0.5 * ::log((1 + b) / (1 - b));
    case ExprOp::Ln: return ::log(b);
    case ExprOp::Log2: return ::log(b) / ::log(2.0);
    case ExprOp::Log10: return ::log10(b);
    case ExprOp::Exp: return ::exp(b);
    case ExprOp::Sqrt: return ::sqrt(b);
    case ExprOp::Abs: return (b >= 0) ? b : -b;
    case ExprOp::Sign: return (b < 0) ? -1.0 : (b > 0) ? 1.0 : 0.0;
    case ExprOp::Rint: return ::floor(b + 0.5);
    default: return 0.0;
  }
}

// muparser's Sum, Avg, Min, Max over v[0..n).
GF_HD double expr_variadic(ExprOp op, const double* v, int n) {
  double r = (op == ExprOp::Min || op == ExprOp::Max) ? v[0] : 0.0;
  for (int i = 0; i < n; ++i) {
    if (op == ExprOp::Min) r = (v[i] < r) ? v[i] : r;       // std::min(r, v[i])
    else if (op == ExprOp::Max) r = (r < v[i]) ? v[i] : r;  // std::max(r, v[i])
    else r += v[i];
  }
  return op == ExprOp::Avg ? r / double(n) : r;
}

// The pushes of a variable: v (Var), v·a + b (VarMul), v², v³, v⁴.
GF_HD double expr_var_mul(double v, double a, double b) { return mul_rn(v, a) + b; }
GF_HD double expr_var_pow(ExprOp op, double v) {
  return op == ExprOp::VarPow2 ? v * v : op == ExprOp::VarPow3 ? v * v * v : v * v * v * v;
}

}  // namespace gf
