// The point formula of the expressions of a case (initial values, Dirichlet
// values, sources, right-hand sides, ray-marched volumes): a stack machine
// that runs an ExprCode (core/expr_code.hpp) at one point, shared by the CPU
// loop (expr_cpu.cpp) and the CUDA kernel (expr_cuda.cu).
//
// Each instruction does what muparser 2.3's evaluator does for the token it
// was compiled from (ParserBase::ParseCmdCodeBulk), each function muparser's
// definition (expr_math.hpp), in double. On the CPU the same libm calls in
// the same order give muparser's values bit for bit (but a^2, the product
// a·a on both executors: expr_binary); on the GPU CUDA's math
// functions (within 1-2 ulp of the correctly rounded result: CUDA's
// programming guide lists each) give values within round-off of them.
// Products that a sum follows are rounded on their own (mul_rn), so that
// nvcc does not fuse them where the CPU rounds twice.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/expr_code.hpp"
#include "grid/grid.hpp"
#include "kernels/expr/expr_math.hpp"
#include "kernels/ops/hd.hpp"

namespace gf {

// Where the points of a field lie: point (i, j, k) at origin + (i + offset)·h
// on each axis of the grid (Grid::coord, bit for bit), 0 on missing axes;
// and the time t, variable 3 of an expression compiled with t (a heat
// source or Dirichlet value that changes in time; 0 otherwise).
struct ExprPoints {
  double origin[3] = {0, 0, 0}, h[3] = {1, 1, 1};
  std::int64_t offset[3] = {0, 0, 0};
  int ndim = 1;
  double t = 0;

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

// The value of the program code[0..n), its variable m being var(m) (x, y, z
// for m = 0, 1, 2; a pde's t and inputs above: kernels/pde/), computed in R
// (double but for a float32 pde's right-hand sides); `s` holds at least
// ExprCode::stack values. One switch, as muparser's evaluator: a push, a
// binary operation on the two top values, a jump, or a function of the top
// value (of the top m values for sum, avg, min, max), each computed by
// expr_math.hpp.
template <class R, class Var>
GF_HD R expr_run_as(const ExprInstr* code, int n, const Var& var, R* s) {
  int sp = 0;  // values on the stack; the top is s[sp − 1]
  for (int pc = 0; pc < n; ++pc) {
    const ExprInstr& in = code[pc];
    switch (in.op) {
      case ExprOp::Const: s[sp++] = R(in.a); break;
      case ExprOp::Var: s[sp++] = R(var(in.n)); break;
      case ExprOp::VarMul: s[sp++] = expr_var_mul(R(var(in.n)), R(in.a), R(in.b)); break;
      case ExprOp::VarScale: s[sp++] = expr_var_scale(R(var(in.n)), R(in.a)); break;
      case ExprOp::VarPow2:
      case ExprOp::VarPow3:
      case ExprOp::VarPow4: s[sp++] = expr_var_pow(in.op, R(var(in.n))); break;
      case ExprOp::If:
        --sp;
        if (s[sp] == 0) pc += in.n;
        break;
      case ExprOp::Else: pc += in.n; break;
      case ExprOp::EndIf: break;
      case ExprOp::Sum:
      case ExprOp::Avg:
      case ExprOp::Min:
      case ExprOp::Max:
        sp -= in.n - 1;
        s[sp - 1] = expr_variadic(in.op, s + sp - 1, in.n);
        break;
      default:
        if (in.op <= ExprOp::Or || in.op == ExprOp::Atan2) {
          --sp;
          s[sp - 1] = expr_binary(in.op, s[sp - 1], s[sp]);
        } else {
          s[sp - 1] = expr_unary(in.op, s[sp - 1]);
        }
        break;
    }
  }
  return s[0];
}

// In double: every expression but a float32 pde's right-hand sides.
template <class Var>
GF_HD double expr_run(const ExprInstr* code, int n, const Var& var, double* s) {
  return expr_run_as<double>(code, n, var, s);
}

// The coordinates (and the time) as the variables of an expression of x, y,
// z (and t, variable 3).
struct ExprXyz {
  double x, y, z, t = 0;
  GF_HD double operator()(int m) const { return m == 0 ? x : m == 1 ? y : m == 2 ? z : t; }
};

// The value of the program code[0..n) at (x, y, z).
GF_HD double expr_value(const ExprInstr* code, int n, double x, double y, double z, double* s) {
  return expr_run(code, n, ExprXyz{x, y, z}, s);
}

// The same at time t (a program compiled with t as variable 3).
GF_HD double expr_value(const ExprInstr* code, int n, double x, double y, double z, double t,
                        double* s) {
  return expr_run(code, n, ExprXyz{x, y, z, t}, s);
}

}  // namespace gf
