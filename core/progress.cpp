#include "core/progress.hpp"

#include <algorithm>
#include <unistd.h>

#include <cstdio>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

namespace gf {

namespace {
std::string eta_str(double s) {
  if (s < 0 || s > 1e7) return "?";
  const long t = long(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t / 60) % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}
}  // namespace

Progress::Progress(std::string label, std::int64_t total, bool enabled, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), enabled_(enabled), tty_(isatty(STDERR_FILENO)),
      t0_(std::chrono::steady_clock::now()), last_draw_(t0_) {}

void Progress::update(std::int64_t done, const std::string& extra, double fraction) {
  if (!enabled_ || total_ <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double el = std::chrono::duration<double>(now - t0_).count();
  if (first_ < 0) first_ = done;
  const double rate = el > 0 ? double(done - first_) / el : 0;
  const bool by_fraction = fraction >= 0;
  const double f = by_fraction ? std::min(fraction, 1.0) : double(done) / double(total_);
  if (first_fraction_ < 0) first_fraction_ = f;
  const double df = f - first_fraction_;
  const double eta = f >= 1 ? 0 : df > 0 && el > 0 ? el * (1 - f) / df : -1;
  const std::string count = by_fraction ? fmt::format("{} {}", done, unit_)
                                        : fmt::format("{}/{}", done, total_);
  const std::string line = fmt::format("{} {:5.1f}%  {}  {:.4g} {}/s  ETA {}{}{}", label_,
                                       100.0 * f, count, rate, unit_, eta_str(eta),
                                       extra.empty() ? "" : "  ", extra);
  const bool last = by_fraction ? f >= 1 : done >= total_;
  if (tty_) {
    // Redraw at most ~10 times a second.
    if (!last && std::chrono::duration<double>(now - last_draw_).count() < 0.1) return;
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
    last_draw_ = now;
  } else {
    const int decile = int(10 * f);
    if (decile == last_decile_) return;
    last_decile_ = decile;
    spdlog::info("{}", line);
  }
}

void Progress::finish() {
  if (drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace gf
