#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "io/output.hpp"
#include "solvers/run.hpp"
#include "solvers/stepper.hpp"

namespace gf {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Chunk {
  double ms;
  std::int64_t steps;
};

nlohmann::json per_step_stats(std::vector<Chunk> chunks) {
  std::vector<double> per;
  for (const Chunk& c : chunks)
    if (c.steps > 0) per.push_back(c.ms / double(c.steps));
  if (per.empty()) return {{"min", 0.0}, {"median", 0.0}, {"max", 0.0}};
  std::sort(per.begin(), per.end());
  const std::size_t n = per.size();
  const double median = n % 2 ? per[n / 2] : 0.5 * (per[n / 2 - 1] + per[n / 2]);
  return {{"min", per.front()}, {"median", median}, {"max", per.back()}};
}

}  // namespace

template <class T>
nlohmann::json run_case(const Case& c, Backend<T>& backend, const RunOptions& opts) {
  const auto t_start = Clock::now();
  const std::unique_ptr<Stepper<T>> stepper = make_stepper<T>(c, backend);
  Stepper<T>& solver = *stepper;
  const double setup_s = seconds_since(t_start) - solver.upload_ms() / 1e3;

  io::SeriesSpec spec{opts.out_dir, c.name,           c.grid,
                      c.precision,  c.output.vtk,     c.output.hdf5,
                      opts.version};
  io::FieldSeriesWriter series(spec);
  io::CsvLog log(opts.out_dir / "log.csv", {"step", "time", "wall_s", "min", "max", "mean"});

  const std::int64_t total = solver.total_steps();
  const std::vector<std::int64_t> outs = output_steps(total, c.output.every);
  // log.csv gets a row about every 1 % of the run; NaN/Inf are looked for
  // every output.check_every steps as well (a reduction on the device, a few
  // numbers read back), so a diverged run stops soon after it diverges.
  const std::int64_t log_every = std::max<std::int64_t>(1, total / 100);
  const std::int64_t check_every = c.output.check_every;
  std::vector<Chunk> chunks;
  std::vector<T> host;
  double compute_ms = 0, download_ms = 0, output_s = 0;
  auto timer = backend.make_timer();
  Progress progress(c.name, total, opts.progress);
  std::size_t next_out = 0;
  std::int64_t last_output = -1;

  auto observe = [&](bool is_output, bool log_row) {
    const FieldStats st = backend.stats(solver.field());
    if (log_row || st.nonfinite > 0)
      log.row({double(solver.step()), solver.time(), seconds_since(t_start), st.min, st.max,
               st.mean});
    if (st.nonfinite > 0) {
      log.flush();
      throw SolverError(fmt::format(
          "diverged: field u has {} NaN/Inf values at step {} (t = {:.6g}); {} in {}",
          st.nonfinite, solver.step(), solver.time(),
          last_output < 0 ? std::string("no output was written")
                          : fmt::format("the last good output (step {}) is kept", last_output),
          opts.out_dir.string()));
    }
    progress.update(solver.step(), fmt::format("u in [{:.4g}, {:.4g}]", st.min, st.max));
    if (!is_output) return;
    timer->start();
    host.resize(solver.field().size());
    backend.download(solver.field(), host.data());
    download_ms += timer->stop_ms();
    const auto t_out = Clock::now();
    series.write(solver.step(), solver.time(), {{"u", host.data(), c.precision}});
    last_output = solver.step();
    log.flush();
    output_s += seconds_since(t_out);
  };

  auto next_multiple = [](std::int64_t s, std::int64_t k) { return (s / k + 1) * k; };
  bool interrupted = false;
  while (true) {
    const std::int64_t step = solver.step();
    const bool is_output = next_out < outs.size() && outs[next_out] == step;
    if (is_output) ++next_out;
    // Interrupted: the state reached is written as a final output.
    interrupted = interrupt_requested();
    const bool log_row = is_output || interrupted || step % log_every == 0 || step == total;
    if (log_row || step % check_every == 0) observe(is_output || interrupted, log_row);
    if (step >= total || interrupted) break;
    std::int64_t stop = std::min({total, next_multiple(step, log_every),
                                  next_multiple(step, check_every)});
    if (next_out < outs.size()) stop = std::min(stop, outs[next_out]);
    timer->start();
    solver.advance(stop - step);
    const double ms = timer->stop_ms();
    compute_ms += ms;
    chunks.push_back({ms, solver.step() - step});
  }
  progress.finish();
  series.finish();
  log.flush();

  const double total_s = seconds_since(t_start);
  const double compute_s = compute_ms / 1e3;
  const double pts = double(c.grid.size());
  nlohmann::json timing = {
      {"case", c.name},
      {"workload", to_string(c.workload)},
      {"device", backend.name()},
      {"precision", to_string(c.precision)},
      {"grid", std::vector<std::int64_t>(c.grid.n.begin(), c.grid.n.begin() + c.grid.ndim)},
      {"steps", solver.step()},
      {"phases_s",
       {{"setup", setup_s},
        {"upload", solver.upload_ms() / 1e3},
        {"compute", compute_s},
        {"download", download_ms / 1e3},
        {"output", output_s},
        {"total", total_s}}},
      {"per_step_ms", per_step_stats(chunks)},
      {"points_per_s", compute_s > 0 ? pts * double(total) / compute_s : 0.0},
      {"effective_GBps",
       compute_s > 0 ? double(solver.bytes_per_step()) * double(total) / compute_s / 1e9 : 0.0},
      {"device_memory_peak_bytes", backend.memory().peak_bytes()},
  };
  io::write_json_atomic(opts.out_dir / "timing.json", timing);
  if (interrupted)
    throw InterruptedError(fmt::format("interrupted at step {} of {} (t = {:.6g}); the state "
                                       "reached is written in {}",
                                       solver.step(), total, solver.time(),
                                       opts.out_dir.string()));
  return timing;
}

template nlohmann::json run_case<float>(const Case&, Backend<float>&, const RunOptions&);
template nlohmann::json run_case<double>(const Case&, Backend<double>&, const RunOptions&);

}  // namespace gf

