#include "solvers/expr_fill.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "core/precision.hpp"
#include "core/rank_errors.hpp"
#include "kernels/expr/expr_exec.hpp"

namespace gf {

template <class T>
void expression_not_finite(const Expr& expr, const Params& params, const Grid& grid,
                           std::int64_t point) {
  std::array<std::int64_t, 3> ijk{0, 0, 0};
  grid.layout().position(point, ijk[0], ijk[1], ijk[2]);
  std::array<double, 3> p{0, 0, 0};
  for (int a = 0; a < grid.ndim; ++a) p[a] = grid.coord(a, ijk[a]);
  const double v = Expression(expr, params)(p[0], p[1], p[2]);
  const std::string where = fmt::format("(x, y, z) = ({:g}, {:g}, {:g})", p[0], p[1], p[2]);
  if (std::isfinite(v))  // finite in double, but out of range of float32
    throw CaseError(
        expr.loc, expr.key,
        fmt::format("value {:g} does not fit in {} at {}", v, to_string(precision_of<T>()), where));
  throw CaseError(expr.loc, expr.key, "value is not finite at " + where);
}

template <class T>
void sample_expression(const Expr& expr, const Params& params, const Grid& grid, T* out) {
  const ExprCode code = Expression(expr, params).code();  // parse faults are thrown here
  const std::int64_t bad = expr_fill_cpu(code, ExprPoints::of(grid),
                                         FieldView<T>(out, grid.layout()), Box::whole(grid.n.data()));
  if (bad >= 0) expression_not_finite<T>(expr, params, grid, bad);
}

template <class T>
void fill_expression(Backend<T>& be, const Expr& expr, const Params& params, Field<T>& f) {
  const ExprCode code = Expression(expr, params).code();
  const std::vector<std::int64_t> bad = make_expr_exec(be)->fill(
      {ExprPart{&code, Box::whole(f.layout().n)}}, ExprPoints::of(f.grid()), f);
  // each rank checks its own block: one that fails stops every rank
  on_every_rank(shared_by_ranks(be), [&] {
    if (bad[0] >= 0) expression_not_finite<T>(expr, params, f.grid(), bad[0]);
  });
}

#define GF_INSTANTIATE(T)                                                                    \
  template void expression_not_finite<T>(const Expr&, const Params&, const Grid&,            \
                                         std::int64_t);                                      \
  template void sample_expression<T>(const Expr&, const Params&, const Grid&, T*);           \
  template void fill_expression<T>(Backend<T>&, const Expr&, const Params&, Field<T>&);
GF_INSTANTIATE(float)
GF_INSTANTIATE(double)
#undef GF_INSTANTIATE

}  // namespace gf
