// Expressions (muparser) of x, y, z, pi, e and the case parameters: parsed
// and checked here, and compiled to the bytecode (core/expr_code.hpp) that
// the executors evaluate where a field lives (kernels/expr/; the fields are
// filled by solvers/expr_fill.hpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/expr_code.hpp"
#include "grid/grid.hpp"
#include "io/case.hpp"

namespace gf {

class Expression {
 public:
  // Throws CaseError at expr.loc / expr.key when the text does not parse or
  // names an unknown variable.
  Expression(const Expr& expr, const Params& params);
  // With more variables than x, y, z: vars[k] is variable 3 + k of the
  // bytecode (the pde workload's t and its fields and derivatives).
  Expression(const Expr& expr, const Params& params, const std::vector<std::string>& vars);
  ~Expression();
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;

  // The value at (x, y, z), by muparser itself (one point at a time: error
  // messages, tests; fields are filled from code()).
  double operator()(double x, double y, double z) const;
  // The value with every variable given: v[0..2] x, y, z, then the extra
  // variables in the order the constructor named them.
  double at(const std::vector<double>& v) const;
  // True when the expression uses none of x, y, z (nor an extra variable).
  bool is_constant() const;
  // Whether it names variable `name` (x, y, z or an extra one).
  bool uses(const std::string& name) const;
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
