// Expressions (muparser) of x, y, z, pi, e and the case parameters: parsed
// and checked here, and compiled to the bytecode (core/expr_code.hpp) that
// the executors evaluate where a field lives (kernels/expr/; the fields are
// filled by solvers/expr_fill.hpp).
#pragma once
#include <memory>

#include "core/expr_code.hpp"
#include "grid/grid.hpp"
#include "io/case.hpp"

namespace gf {

class Expression {
 public:
  // Throws CaseError at expr.loc / expr.key when the text does not parse or
  // names an unknown variable.
  Expression(const Expr& expr, const Params& params);
  ~Expression();
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;

  // The value at (x, y, z), by muparser itself (one point at a time: error
  // messages, tests; fields are filled from code()).
  double operator()(double x, double y, double z) const;
  // True when the expression uses none of x, y, z.
  bool is_constant() const;
  // muparser's program of the expression in bytecode, instruction for
  // instruction (throws std::logic_error on a token it does not know: a
  // muparser other than 2.3's).
  ExprCode code() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Checks that expr parses and uses only known names (throws CaseError).
void check_expression(const Expr& expr, const Params& params);

}  // namespace gf
