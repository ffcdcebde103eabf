// The bytecode of an expression of the case (SPEC §3: muparser syntax, x y z,
// pi, e and the parameters). io/expression.cpp compiles muparser's own
// reverse-Polish program into it, one instruction for each of muparser's
// (parameters and constant subexpressions already folded to numbers by
// muparser's optimiser); kernels/expr/expr_ops.hpp runs it, on the CPU and in
// CUDA kernels, operation for operation as muparser evaluates it (but a pde's
// right-hand sides, whose v·a + 0 products are VarScale, v·a without the
// + 0: io/pde_program.cpp). Plain data:
// it sits in core/ because io/ (the compiler) and kernels/ (the interpreter)
// both use it and neither may include the other.
#pragma once
#include <cstdint>
#include <vector>

#include "core/expr_op.hpp"

namespace gf {

struct ExprInstr {
  ExprOp op = ExprOp::Const;
  std::int32_t n = 0;  // coordinate, jump or argument count
  double a = 0, b = 0;
};

struct ExprCode {
  std::vector<ExprInstr> code;
  int stack = 0;  // the most values on the stack at any instruction
  // True when no instruction reads a coordinate.
  bool constant() const {
    for (const ExprInstr& i : code)
      if (i.op == ExprOp::Var || i.op == ExprOp::VarMul || i.op == ExprOp::VarScale || i.op == ExprOp::VarPow2 ||
          i.op == ExprOp::VarPow3 || i.op == ExprOp::VarPow4)
        return false;
    return true;
  }
  // The program of one number.
  static ExprCode of_value(double v) {
    ExprCode c;
    c.code.push_back(ExprInstr{ExprOp::Const, 0, v, 0});
    c.stack = 1;
    return c;
  }
};

}  // namespace gf
