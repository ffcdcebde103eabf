// Vector operations and reductions on a backend's fields: the concern that
// every iterative solver shares (CG's dots and updates, the NaN/Inf checks,
// the mean of a field). Each backend has one (Backend::vec()); over MPI
// ranks the sums cover the points a rank owns and are added over the ranks.
#pragma once
#include <cstdint>

#include "grid/field.hpp"

namespace gf {

// Over the points the field's rank owns (all of them on one rank: the halo
// of a rank-local grid, grid.hpp, is never counted).
struct FieldStats {
  double min = 0, max = 0, mean = 0;
  std::int64_t nonfinite = 0;  // NaN and ±Inf values
  double sum = 0;              // of the finite values (ranks add these up)
  std::int64_t count = 0;      // finite values
};

template <class T>
class VectorOps {
 public:
  virtual ~VectorOps() = default;
  // min, max, mean and count of non-finite values, in one pass. Like every
  // sum below, over the points the field's rank owns.
  virtual FieldStats stats(const Field<T>& f) = 0;
  virtual double dot(const Field<T>& x, const Field<T>& y) = 0;  // in double
  // y = a·x + b·y (y is not read when b is 0).
  virtual void axpby(T a, const Field<T>& x, T b, Field<T>& y) = 0;
  // CG's update: u += α·p, r −= α·q; returns Σ r² of the new r (in double).
  virtual double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                           Field<T>& r) = 0;
  virtual void add_constant(Field<T>& u, T c) = 0;
  // STREAM's triad a = b + s·c (ops/stream.hpp), same sizes. Moves 3 × bytes:
  // bench's ceiling of a CPU's memory bandwidth.
  virtual void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) = 0;
};

}  // namespace gf
