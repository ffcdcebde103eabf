#include "solvers/heat_time.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "core/precision.hpp"
#include "core/rank_errors.hpp"
#include "io/expression.hpp"

namespace gf {

template <class T>
TimeFill<T>::TimeFill(Backend<T>& be, const Params& params)
    : params_(params), exec_(make_expr_exec(be)), together_(shared_by_ranks(be)) {}

template <class T>
void TimeFill<T>::add(const Expr& e, const Box& b) {
  exprs_.push_back(e);
  codes_.push_back(Expression(e, params_, {"t"}).code());
  boxes_.push_back(b);
}

template <class T>
void TimeFill<T>::fill(Field<T>& f, double t) {
  // A rank that holds none of the faces still takes part in the halo refresh.
  if (codes_.empty() && !together_) return;
  std::vector<ExprPart> parts;
  for (std::size_t p = 0; p < codes_.size(); ++p) parts.push_back(ExprPart{&codes_[p], boxes_[p]});
  ExprPoints at = ExprPoints::of(f.grid());
  at.t = t;
  const std::vector<std::int64_t> bad = exec_->fill(parts, at, f);
  // each rank checks its own parts: one that fails stops every rank
  on_every_rank(together_, [&] { check(bad, f.grid(), t); });
}

template <class T>
void TimeFill<T>::check(const std::vector<std::int64_t>& bad, const Grid& g, double t) const {
  for (std::size_t p = 0; p < bad.size(); ++p) {
    if (bad[p] < 0) continue;
    std::array<std::int64_t, 3> ijk{0, 0, 0};
    g.layout().position(bad[p], ijk[0], ijk[1], ijk[2]);
    std::array<double, 3> x{0, 0, 0};
    for (int a = 0; a < g.ndim; ++a) x[a] = g.coord(a, ijk[a]);
    const double v = Expression(exprs_[p], params_, {"t"}).at({x[0], x[1], x[2], t});
    const std::string where =
        fmt::format("({}) = ({:g}), t = {:g}", std::string("x, y, z").substr(0, 3 * g.ndim - 2),
                    fmt::join(x.begin(), x.begin() + g.ndim, ", "), t);
    if (std::isfinite(v))
      throw CaseError(exprs_[p].loc, exprs_[p].key,
                      fmt::format("value {:g} does not fit in {} at {}", v,
                                  to_string(precision_of<T>()), where));
    throw CaseError(exprs_[p].loc, exprs_[p].key, "value is not finite at " + where);
  }
}

// Every Dirichlet face, in set_initial_state's order (where two meet, the
// later face's value stands, at every step as at the start).
template <class T>
void add_time_faces(const Case& c, TimeFill<T>& fill) {
  bool reads_t = false;
  for (int face = 0; face < 2 * c.grid.ndim; ++face) {
    const FaceBc& bc = c.boundary[std::size_t(face)];
    reads_t = reads_t ||
              (bc.type == BcType::Dirichlet && Expression(bc.value, c.parameters, {"t"}).uses("t"));
  }
  if (!reads_t) return;
  for (int face = 0; face < 2 * c.grid.ndim; ++face)
    if (c.boundary[std::size_t(face)].type == BcType::Dirichlet)
      fill.add(c.boundary[std::size_t(face)].value, face_box(c.grid, face));
}

Case at_time_zero(const Case& c) {
  Case c0 = c;
  c0.parameters.emplace_back("t", 0.0);
  return c0;
}

template class TimeFill<float>;
template class TimeFill<double>;
template void add_time_faces<float>(const Case&, TimeFill<float>&);
template void add_time_faces<double>(const Case&, TimeFill<double>&);

}  // namespace gf
