// The point formula of the expressions of a case (initial values, Dirichlet
// values, sources, right-hand sides, ray-marched volumes): a stack machine
// that runs an ExprCode (core/expr_code.hpp) at one point, shared by the CPU
// loop (expr_cpu.cpp) and the CUDA kernel (expr_cuda.cu).
//
// Each instruction does what muparser 2.3's evaluator does for the token it
// was compiled from (ParserBase::ParseCmdCodeBulk), and each function is
// muparser's definition (MathImpl in muParserTemplateMagic.h: asinh as
// log(v + sqrt(v·v + 1)), rint as floor(v + 0.5), min and max as std::min
// and std::max fold them, ...), in double. On the CPU the same libm calls in
// the same order give muparser's values bit for bit; on the GPU CUDA's math
// functions (within 1-2 ulp of the correctly rounded result: CUDA's
// programming guide lists each) give values within round-off of them.
// Products that a sum follows are rounded on their own (mul_rn), so that
// nvcc does not fuse them where the CPU rounds twice.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/expr_code.hpp"
#include "grid/grid.hpp"
#include "kernels/ops/hd.hpp"

namespace gf {

// Where the points of a field lie: point (i, j, k) at origin + (i + offset)·h
// on each axis of the grid (Grid::coord, bit for bit), 0 on missing axes.
struct ExprPoints {
  double origin[3] = {0, 0, 0}, h[3] = {1, 1, 1};
  std::int64_t offset[3] = {0, 0, 0};
  int ndim = 1;

  static ExprPoints of(const Grid& g) {
    ExprPoints p;
    for (int a = 0; a < 3; ++a) {
      p.origin[a] = g.origin[a];
      p.h[a] = g.h[a];
      p.offset[a] = g.offset[a];
    }
    p.ndim = g.ndim;
    return p;
  }
  GF_HD double coord(int a, std::int64_t i) const {
    return a < ndim ? origin[a] + mul_rn(double(i + offset[a]), h[a]) : 0.0;
  }
};

// The deepest stack the CUDA kernel holds (a local array of a thread);
// deeper programs are evaluated on the host (expr_cuda.cu).
constexpr int kExprDeviceStack = 32;

namespace expr_detail {

// muparser's Sum, Avg, Min, Max over v[0..n).
GF_HD double variadic(ExprOp op, const double* v, int n) {
  double r = (op == ExprOp::Min || op == ExprOp::Max) ? v[0] : 0.0;
  for (int i = 0; i < n; ++i) {
    if (op == ExprOp::Min) r = (v[i] < r) ? v[i] : r;       // std::min(r, v[i])
    else if (op == ExprOp::Max) r = (r < v[i]) ? v[i] : r;  // std::max(r, v[i])
    else r += v[i];
  }
  return op == ExprOp::Avg ? r / double(n) : r;
}

}  // namespace expr_detail

// The value of the program code[0..n) at (x, y, z); `s` holds at least
// ExprCode::stack values. One switch, as muparser's evaluator: a push, a
// binary operation on the two top values, a jump, or a function of the top
// value (of the top m values for sum, avg, min, max).
GF_HD double expr_value(const ExprInstr* code, int n, double x, double y, double z, double* s) {
  int sp = 0;  // values on the stack; the top is s[sp − 1]
#define GF_EXPR_COORD(m) ((m) == 0 ? x : (m) == 1 ? y : z)
#define GF_EXPR_BINARY(expr) \
  --sp;                      \
  s[sp - 1] = (expr);        \
  break
#define GF_EXPR_UNARY(expr) \
  s[sp - 1] = (expr);       \
  break
  for (int pc = 0; pc < n; ++pc) {
    const ExprInstr& in = code[pc];
    const double a = sp > 1 ? s[sp - 2] : 0.0, b = sp > 0 ? s[sp - 1] : 0.0;
    switch (in.op) {
      case ExprOp::Const: s[sp++] = in.a; break;
      case ExprOp::Var: s[sp++] = GF_EXPR_COORD(in.n); break;
      case ExprOp::VarMul: s[sp++] = mul_rn(GF_EXPR_COORD(in.n), in.a) + in.b; break;
      case ExprOp::VarPow2: {
        const double v = GF_EXPR_COORD(in.n);
        s[sp++] = v * v;
        break;
      }
      case ExprOp::VarPow3: {
        const double v = GF_EXPR_COORD(in.n);
        s[sp++] = v * v * v;
        break;
      }
      case ExprOp::VarPow4: {
        const double v = GF_EXPR_COORD(in.n);
        s[sp++] = v * v * v * v;
        break;
      }
      case ExprOp::Add: GF_EXPR_BINARY(a + b);
      case ExprOp::Sub: GF_EXPR_BINARY(a - b);
      case ExprOp::Mul: GF_EXPR_BINARY(a * b);
      case ExprOp::Div: GF_EXPR_BINARY(a / b);
      case ExprOp::Pow: GF_EXPR_BINARY(::pow(a, b));
      case ExprOp::Lt: GF_EXPR_BINARY(a < b);
      case ExprOp::Gt: GF_EXPR_BINARY(a > b);
      case ExprOp::Le: GF_EXPR_BINARY(a <= b);
      case ExprOp::Ge: GF_EXPR_BINARY(a >= b);
      case ExprOp::Eq: GF_EXPR_BINARY(a == b);
      case ExprOp::Ne: GF_EXPR_BINARY(a != b);
      case ExprOp::And: GF_EXPR_BINARY(a && b);
      case ExprOp::Or: GF_EXPR_BINARY(a || b);
      case ExprOp::Atan2: GF_EXPR_BINARY(::atan2(a, b));
      case ExprOp::If:
        --sp;
        if (b == 0) pc += in.n;
        break;
      case ExprOp::Else: pc += in.n; break;
      case ExprOp::EndIf: break;
      case ExprOp::Neg: GF_EXPR_UNARY(-b);
      case ExprOp::Plus: break;
      case ExprOp::Sin: GF_EXPR_UNARY(::sin(b));
      case ExprOp::Cos: GF_EXPR_UNARY(::cos(b));
      case ExprOp::Tan: GF_EXPR_UNARY(::tan(b));
      case ExprOp::Asin: GF_EXPR_UNARY(::asin(b));
      case ExprOp::Acos: GF_EXPR_UNARY(::acos(b));
      case ExprOp::Atan: GF_EXPR_UNARY(::atan(b));
      case ExprOp::Sinh: GF_EXPR_UNARY(::sinh(b));
      case ExprOp::Cosh: GF_EXPR_UNARY(::cosh(b));
      case ExprOp::Tanh: GF_EXPR_UNARY(::tanh(b));
      case ExprOp::Asinh: GF_EXPR_UNARY(::log(b + ::sqrt(mul_rn(b, b) + 1)));
      case ExprOp::Acosh: GF_EXPR_UNARY(::log(b + ::sqrt(mul_rn(b, b) - 1)));
      case ExprOp::Atanh: GF_EXPR_UNARY(0.5 * ::log((1 + b) / (1 - b)));
      case ExprOp::Ln: GF_EXPR_UNARY(::log(b));
      case ExprOp::Log2: GF_EXPR_UNARY(::log(b) / ::log(2.0));
      case ExprOp::Log10: GF_EXPR_UNARY(::log10(b));
      case ExprOp::Exp: GF_EXPR_UNARY(::exp(b));
      case ExprOp::Sqrt: GF_EXPR_UNARY(::sqrt(b));
      case ExprOp::Abs: GF_EXPR_UNARY((b >= 0) ? b : -b);
      case ExprOp::Sign: GF_EXPR_UNARY((b < 0) ? -1.0 : (b > 0) ? 1.0 : 0.0);
      case ExprOp::Rint: GF_EXPR_UNARY(::floor(b + 0.5));
      case ExprOp::Sum:
      case ExprOp::Avg:
      case ExprOp::Min:
      case ExprOp::Max:
        sp -= in.n - 1;
        s[sp - 1] = expr_detail::variadic(in.op, s + sp - 1, in.n);
        break;
    }
  }
#undef GF_EXPR_COORD
#undef GF_EXPR_BINARY
#undef GF_EXPR_UNARY
  return s[0];
}

}  // namespace gf
