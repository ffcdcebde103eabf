#include "core/progress.hpp"

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

void Progress::update(std::int64_t done, const std::string& extra) {
  if (!enabled_ || total_ <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double el = std::chrono::duration<double>(now - t0_).count();
  if (first_ < 0) first_ = done;
  const double rate = el > 0 ? double(done - first_) / el : 0;
  const double pct = 100.0 * double(done) / double(total_);
  const double eta = rate > 0 ? double(total_ - done) / rate : -1;
  const std::string line = fmt::format("{} {:5.1f}%  {}/{}  {:.4g} {}/s  ETA {}{}{}", label_,
                                       pct, done, total_, rate, unit_, eta_str(eta),
                                       extra.empty() ? "" : "  ", extra);
  if (tty_) {
    // Redraw at most ~10 times a second.
    if (done < total_ && std::chrono::duration<double>(now - last_draw_).count() < 0.1) return;
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
    last_draw_ = now;
  } else {
    const int decile = int(10 * done / total_);
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
