// The case's expressions evaluated where their fields live: on the backend's
// memory by the expressions' executor (kernels/expr/: a CUDA kernel on the
// GPU, every thread's share of the rows on the CPU), or into a host array
// by the CPU loop. Either way each value is computed in double from the
// expression's bytecode (io/expression.hpp: Expression::code) and stored
// as T; a value that is not finite in T is a CaseError at the expression
// naming the first such point in x-fastest order.
#pragma once
#include <cstdint>

#include "grid/field.hpp"
#include "io/case.hpp"
#include "io/expression.hpp"
#include "kernels/backend.hpp"

namespace gf {

// expr at every point of grid into host memory `out` (grid.size() values,
// x-fastest), on the CPU's threads.
template <class T>
void sample_expression(const Expr& expr, const Params& params, const Grid& grid, T* out);

// expr at every point of f (its grid's coordinates, the global ones of a
// rank's block), on f's backend.
template <class T>
void fill_expression(Backend<T>& be, const Expr& expr, const Params& params, Field<T>& f);

// The CaseError of a value of expr that is not finite in T at the point
// whose x-fastest index in grid is `point` (muparser's value there says
// whether it is not finite or only out of T's range).
template <class T>
[[noreturn]] void expression_not_finite(const Expr& expr, const Params& params, const Grid& grid,
                                        std::int64_t point);

}  // namespace gf
