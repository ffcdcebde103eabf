// Heat's expressions that read t (docs/cases.md#heat): the source and the
// Dirichlet values, evaluated again at each step's time where the field
// lives, by the expressions' executor (kernels/expr/: a CUDA kernel on the
// GPU, every thread's share of the rows on the CPU), from bytecode compiled
// once with t as its variable 3 (ExprPoints::t).
#pragma once
#include <memory>
#include <vector>

#include "grid/field.hpp"
#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/expr/expr_exec.hpp"

namespace gf {

template <class T>
class TimeFill {
 public:
  TimeFill(Backend<T>& be, const Params& params);
  // e over box b of the field (in order: a later part's value stands where
  // boxes overlap).
  void add(const Expr& e, const Box& b);
  bool empty() const { return codes_.empty(); }
  // Every part's values at time t. A value not finite in T is the CaseError
  // of its expression naming the point and t.
  void fill(Field<T>& f, double t);

 private:
  // The CaseError of the first part with a point not finite (bad[p] ≥ 0).
  void check(const std::vector<std::int64_t>& bad, const Grid& g, double t) const;

  const Params& params_;
  std::unique_ptr<ExprExec<T>> exec_;
  // A rank's block of a grid split over MPI ranks: every rank fills at
  // every step (the fill refreshes the halos), its parts or none.
  bool together_;
  std::vector<Expr> exprs_;
  std::vector<ExprCode> codes_;
  std::vector<Box> boxes_;
};

// The case's Dirichlet faces, as parts of a TimeFill, when one of their
// values reads t (none otherwise).
template <class T>
void add_time_faces(const Case& c, TimeFill<T>& fill);

// The case with t = 0 as a parameter, for the initial state of a case whose
// Dirichlet values read t (set_initial_state evaluates them at t = 0).
Case at_time_zero(const Case& c);

}  // namespace gf
