// When a run's periodic actions act (outputs, checkpoints, log rows, the
// NaN/Inf check, frames): schedules by step or iteration number, in the
// manner of Oceananigans' IterationInterval. The driver loop
// (solvers/drive.cpp) asks each one whether it is due at a step and when it is
// next due, and advances to the nearest: the cadence arithmetic lives here
// only.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

namespace gf {

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

// Every k steps (0, k, 2k, ...); k ≤ 0: never.
struct Every {
  std::int64_t k = 0;
  bool due(std::int64_t s) const { return k > 0 && s % k == 0; }
  // The first step after s at which it is due.
  std::int64_t next(std::int64_t s) const { return k > 0 ? (s / k + 1) * k : kNever; }
};

// At the listed steps (ascending).
struct AtSteps {
  std::vector<std::int64_t> steps;
  bool due(std::int64_t s) const { return std::binary_search(steps.begin(), steps.end(), s); }
  std::int64_t next(std::int64_t s) const {
    const auto it = std::upper_bound(steps.begin(), steps.end(), s);
    return it == steps.end() ? kNever : *it;
  }
};

// Either of them, or both (what a run's plan holds: solvers/drive.hpp).
struct Schedule {
  Every every;
  AtSteps at;
  static Schedule every_k(std::int64_t k) { return {Every{k}, {}}; }
  static Schedule at_steps(std::vector<std::int64_t> steps) { return {{}, AtSteps{std::move(steps)}}; }
  bool due(std::int64_t s) const { return every.due(s) || at.due(s); }
  std::int64_t next(std::int64_t s) const { return std::min(every.next(s), at.next(s)); }
};

// The nearest step after s at which any of the schedules is due, and at
// most `last`.
template <class... S>
std::int64_t next_stop(std::int64_t s, std::int64_t last, const S&... schedules) {
  return std::min({last, schedules.next(s)...});
}

}  // namespace gf
