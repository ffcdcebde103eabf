// The operations of the expressions' bytecode (core/expr_code.hpp), apart
// from the program's container: the interpreter (kernels/expr/expr_ops.hpp)
// and the kernels compiled at run time (kernels/pde/, through NVRTC, which
// sees this header and no standard library but <cstdint>) both name them.
#pragma once
#include <cstdint>

namespace gf {

enum class ExprOp : std::int32_t {
  Const,    // push a
  Var,      // push variable n (0 x, 1 y, 2 z; from 3 on: a pde's t and inputs)
  VarMul,   // push variable n · a + b
  VarScale, // push variable n · a (a pde's VarMul whose b is 0: io/pde_program.cpp)
  VarPow2,  // push v·v, v = variable n
  VarPow3,  // v·v·v
  VarPow4,  // v·v·v·v
  // binary: pop b, pop a, push a ∘ b
  Add, Sub, Mul, Div, Pow, Lt, Gt, Le, Ge, Eq, Ne, And, Or,
  If,     // pop c; when c == 0 skip the next n instructions (to the else branch)
  Else,   // skip the next n instructions (past the else branch)
  EndIf,  // nothing
  // unary: pop v, push f(v)
  Neg, Plus, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh,
  Ln, Log2, Log10, Exp, Sqrt, Abs, Sign, Rint,
  Atan2,  // binary
  // n arguments: pop n, push f
  Sum, Avg, Min, Max,
};

}  // namespace gf
