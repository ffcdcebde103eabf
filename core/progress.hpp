// The progress line: percent, rate and ETA, redrawn in place when stderr is a
// terminal, plain log lines about every 10 % otherwise (SPEC §2).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace gf {

class Progress {
 public:
  // unit: what is counted, plural ("steps", "iterations").
  Progress(std::string label, std::int64_t total, bool enabled, std::string unit = "steps");
  // done: units finished so far (the rate counts from the first update's,
  // so that a restarted run's rate is its own); extra e.g. "max 1.2".
  // fraction in [0, 1]: how far the run is when done/total does not say it
  // (an iterative solve, which stops when its residual reaches the
  // tolerance): the percent and the ETA follow it, and the line shows no
  // total; negative: done/total.
  void update(std::int64_t done, const std::string& extra = "", double fraction = -1);
  void finish();

 private:
  std::string label_, unit_;
  std::int64_t first_ = -1;
  double first_fraction_ = -1;
  std::int64_t total_;
  bool enabled_, tty_;
  int last_decile_ = -1;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point t0_, last_draw_;
};

}  // namespace gf
