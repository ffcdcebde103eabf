// What each operation of the expressions' bytecode computes (core/expr_op.hpp),
// one function a kind of operation: the interpreter (expr_ops.hpp, on the CPU
// and in CUDA kernels) and the kernels that kernels/pde/ generates and
// compiles at run time (NVRTC: no standard headers there, its built-in math
// functions) call the same ones, so an expression computes the same
// operations in the same order on every path.
//
// Each is muparser 2.3's definition (MathImpl in muParserTemplateMagic.h:
// asinh as log(v + sqrt(v·v + 1)), rint as floor(v + 0.5), min and max as
// std::min and std::max fold them, ...), in R: double for every expression
// but a float32 pde case's right-hand sides, which are computed in float.
// Products that a sum follows are rounded on their own (mul_rn), so that
// nvcc does not fuse them where the CPU rounds twice.
#pragma once
#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

#include "core/expr_op.hpp"
#include "kernels/ops/hd.hpp"

namespace gf {

// The math function f for the argument's type: std::f on the host, the
// global overloads of CUDA's device math (NVRTC has no std::) in kernels.
#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
#define GF_MATH(f) ::f
#else
#define GF_MATH(f) std::f
#endif

// a ∘ b for the binary operations (Add ... Or, Atan2).
template <class R>
GF_HD R expr_binary(ExprOp op, R a, R b) {
  switch (op) {
    case ExprOp::Add: return a + b;
    case ExprOp::Sub: return a - b;
    case ExprOp::Mul: return a * b;
    case ExprOp::Div: return a / b;
    // a^2 as the product a·a rounded once (correctly rounded) on every path.
    // Neither pow is always that: the C library's (muparser's) is within
    // about half an ulp (glibc 2.36: 8450 of 10⁷ random bases an ulp off),
    // CUDA's within 2 ulps, and they differ from each other; where a
    // comparison of squares decides a value, one ulp moved a point across it:
    // the sphere (x−0.5)^2 + (y−0.5)^2 + (z−0.5)^2 < r^2 of
    // pde_grayscott3d.yaml passes through grid points of 300 × 40 × 20, and
    // validate failed there at step 0. So the CPU's squares are not
    // muparser's pow to the bit for those bases (muparser's own x^2 of a
    // variable is x·x already: VarPow2).
    case ExprOp::Pow: return b == R(2) ? mul_rn(a, a) : GF_MATH(pow)(a, b);
    case ExprOp::Lt: return a < b;
    case ExprOp::Gt: return a > b;
    case ExprOp::Le: return a <= b;
    case ExprOp::Ge: return a >= b;
    case ExprOp::Eq: return a == b;
    case ExprOp::Ne: return a != b;
    case ExprOp::And: return a && b;
    case ExprOp::Or: return a || b;
    case ExprOp::Atan2: return GF_MATH(atan2)(a, b);
    default: return R(0);
  }
}

// f(b) for the functions of one value (Neg ... Rint).
template <class R>
GF_HD R expr_unary(ExprOp op, R b) {
  switch (op) {
    case ExprOp::Neg: return -b;
    case ExprOp::Plus: return b;
    case ExprOp::Sin: return GF_MATH(sin)(b);
    case ExprOp::Cos: return GF_MATH(cos)(b);
    case ExprOp::Tan: return GF_MATH(tan)(b);
    case ExprOp::Asin: return GF_MATH(asin)(b);
    case ExprOp::Acos: return GF_MATH(acos)(b);
    case ExprOp::Atan: return GF_MATH(atan)(b);
    case ExprOp::Sinh: return GF_MATH(sinh)(b);
    case ExprOp::Cosh: return GF_MATH(cosh)(b);
    case ExprOp::Tanh: return GF_MATH(tanh)(b);
    case ExprOp::Asinh: return GF_MATH(log)(b + GF_MATH(sqrt)(mul_rn(b, b) + R(1)));
    case ExprOp::Acosh: return GF_MATH(log)(b + GF_MATH(sqrt)(mul_rn(b, b) - R(1)));
    case ExprOp::Atanh: return R(0.5) * GF_MATH(log)((R(1) + b) / (R(1) - b));
    case ExprOp::Ln: return GF_MATH(log)(b);
    case ExprOp::Log2: return GF_MATH(log)(b) / GF_MATH(log)(R(2));
    case ExprOp::Log10: return GF_MATH(log10)(b);
    case ExprOp::Exp: return GF_MATH(exp)(b);
    case ExprOp::Sqrt: return GF_MATH(sqrt)(b);
    case ExprOp::Abs: return (b >= 0) ? b : -b;
    case ExprOp::Sign: return (b < 0) ? R(-1) : (b > 0) ? R(1) : R(0);
    case ExprOp::Rint: return GF_MATH(floor)(b + R(0.5));
    default: return R(0);
  }
}

// muparser's Sum, Avg, Min, Max over v[0..n).
template <class R>
GF_HD R expr_variadic(ExprOp op, const R* v, int n) {
  R r = (op == ExprOp::Min || op == ExprOp::Max) ? v[0] : R(0);
  for (int i = 0; i < n; ++i) {
    if (op == ExprOp::Min) r = (v[i] < r) ? v[i] : r;       // std::min(r, v[i])
    else if (op == ExprOp::Max) r = (r < v[i]) ? v[i] : r;  // std::max(r, v[i])
    else r += v[i];
  }
  return op == ExprOp::Avg ? r / R(n) : r;
}

// The pushes of a variable: v (Var), v·a + b (VarMul), v², v³, v⁴.
template <class R>
GF_HD R expr_var_mul(R v, R a, R b) { return mul_rn(v, a) + b; }
// v·a (VarScale): VarMul without its + 0 (which turned a −0 product into +0).
template <class R>
GF_HD R expr_var_scale(R v, R a) { return mul_rn(v, a); }
template <class R>
GF_HD R expr_var_pow(ExprOp op, R v) {
  return op == ExprOp::VarPow2 ? v * v : op == ExprOp::VarPow3 ? v * v * v : v * v * v * v;
}

}  // namespace gf
