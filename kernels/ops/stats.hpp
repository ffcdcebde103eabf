// Field statistics as a reduction: the transform of one value and the
// combination of two partial results (used by the CUDA reduction).
#pragma once
#include <cmath>

#include "kernels/ops/hd.hpp"

namespace gf {

struct StatsAcc {
  double min, max, sum;
  unsigned long long nonfinite;
};

struct StatsOf {
  template <class T>
  GF_HD StatsAcc operator()(T v) const {
    const double d = static_cast<double>(v);
    if (!isfinite(d)) return StatsAcc{INFINITY, -INFINITY, 0.0, 1ull};
    return StatsAcc{d, d, d, 0ull};
  }
};

struct StatsCombine {
  GF_HD StatsAcc operator()(const StatsAcc& a, const StatsAcc& b) const {
    return StatsAcc{a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max, a.sum + b.sum,
                    a.nonfinite + b.nonfinite};
  }
};

}  // namespace gf
