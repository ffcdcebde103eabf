// Input values checked in the run's precision (initial.file, checkpoints,
// Dirichlet and Neumann values, a raymarch volume.file): shared by the
// steppers and the raymarch, so that every input says its first bad value
// the same way.
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/precision.hpp"
#include "grid/grid.hpp"

namespace gf {

// What is wrong with a value v read as T, or "" when nothing: NaN/Inf, or
// finite in double but out of T's range.
template <class T>
inline std::string not_a_value(double v) {
  if (!std::isfinite(v)) return fmt::format("{} is not a finite number", v);
  if (!std::isfinite(static_cast<T>(v)))
    return fmt::format("{:g} does not fit in {}", v, to_string(precision_of<T>()));
  return "";
}

// Input data must be finite in the run's precision: a NaN, an Inf or a
// float32 overflow would only show up later as a divergence (exit 1) or an
// empty image. The first bad value, by its point.
template <class T>
inline void check_values(const std::vector<double>& v, const Grid& g, const SourceLoc& loc,
                  const std::string& key, const std::string& what) {
  for (std::size_t q = 0; q < v.size(); ++q) {
    const std::string bad = not_a_value<T>(v[q]);
    if (bad.empty()) continue;
    std::int64_t ijk[3] = {0, 0, 0};
    g.layout().position(std::int64_t(q), ijk[0], ijk[1], ijk[2]);
    throw CaseError(loc, key,
                    fmt::format("{}: the value at point ({}): {}", what,
                                fmt::join(ijk, ijk + g.ndim, ", "), bad));
  }
}

}  // namespace gf
