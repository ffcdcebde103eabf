#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "core/interrupt.hpp"
#include "core/mpi.hpp"
#include "core/progress.hpp"
#include "grid/gather.hpp"
#include "io/output.hpp"
#include "solvers/laplace.hpp"
#include "solvers/output_writer.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/registry.hpp"
#include "solvers/run.hpp"
#include "solvers/schedule.hpp"
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

// The timing record of SPEC §4 (timing.json), common to every workload.
struct Phases {
  double setup_s = 0, upload_s = 0, compute_s = 0, download_s = 0, output_s = 0, total_s = 0;
};

template <class T>
nlohmann::json timing_record(const Case& c, Backend<T>& backend, std::int64_t steps,
                             const Phases& p, const std::vector<Chunk>& chunks,
                             std::size_t bytes_per_step) {
  // Over several ranks: the global grid, the slowest rank's phases, every rank's bytes.
  const Grid& g = c.decomp ? c.decomp->global : c.grid;
  const double pts = double(g.size());
  const double bytes_all = mpi::sum(double(bytes_per_step));
  Phases q = p;
  q.compute_s = mpi::max(p.compute_s);
  nlohmann::json t = {
      {"case", c.name},
      {"workload", to_string(c.workload)},
      {"device", backend.name()},
      {"precision", to_string(c.precision)},
      {"grid", std::vector<std::int64_t>(g.n.begin(), g.n.begin() + g.ndim)},
      {"steps", steps},
      {"phases_s",
       {{"setup", p.setup_s},
        {"upload", p.upload_s},
        {"compute", p.compute_s},
        {"download", p.download_s},
        {"output", p.output_s},
        {"total", p.total_s}}},
      {"per_step_ms", per_step_stats(chunks)},
      {"points_per_s", q.compute_s > 0 ? pts * double(steps) / q.compute_s : 0.0},
      {"effective_GBps", q.compute_s > 0 ? bytes_all * double(steps) / q.compute_s / 1e9 : 0.0},
      {"device_memory_peak_bytes", backend.memory().peak_bytes()},
  };
  if (c.decomp) {  // rank 0's memory and phases, the slowest rank's compute
    t["phases_s"]["compute"] = q.compute_s;
    t["ranks"] = c.decomp->nranks;
    t["rank_dims"] = std::vector<int>(c.decomp->dims.begin(), c.decomp->dims.begin() + g.ndim);
  }
  return t;
}

// A checkpoint of this case, its solver state still to be filled in.
io::Checkpoint checkpoint_of(const Case& c, const std::string& version) {
  const Grid& g = c.decomp ? c.decomp->global : c.grid;
  io::Checkpoint ck;
  ck.version = version;
  ck.workload = to_string(c.workload);
  ck.precision = c.precision;
  ck.ndim = g.ndim;
  for (int a = 0; a < 3; ++a) {
    ck.dims[a] = a < g.ndim ? g.n[a] : 1;
    ck.spacing[a] = a < g.ndim ? g.h[a] : 0;
    ck.origin[a] = a < g.ndim ? g.origin[a] : 0;
  }
  ck.case_yaml = c.resolved_yaml;
  return ck;
}

// Over several ranks: the fields gathered into global arrays, written by
// rank 0 (the file one rank writes: a restart may use another rank count).
template <class T>
void write_checkpoint_of(const Case& c, io::Checkpoint& ck, const std::filesystem::path& path) {
  if (c.decomp)
    for (auto& [name, bytes] : ck.fields) bytes = gather_global(*c.decomp, bytes, sizeof(T));
  if (mpi::rank() == 0) io::write_checkpoint(path, ck);
}

// Writes the checkpoint of the solver's state (after the queued outputs:
// one HDF5 writer at a time) and returns the seconds it took.
template <class T, class Solver>
double write_checkpoint_now(const Case& c, const RunOptions& opts, OutputWriter<T>& outputs,
                            Solver& solver) {
  const auto t_out = Clock::now();
  outputs.drain();  // never ahead of the outputs before it
  io::Checkpoint ck = checkpoint_of(c, opts.version);
  solver.save(ck);
  write_checkpoint_of<T>(c, ck, opts.out_dir / kCheckpointFile);
  return seconds_since(t_out);
}

// The field series (fields.h5 + .xdmf, .vti/.pvti + .pvd) of this run.
io::SeriesSpec series_spec(const Case& c, const RunOptions& opts) {
  return io::SeriesSpec{opts.out_dir,  c.name,       c.decomp ? c.decomp->global : c.grid,
                        c.precision,   c.output.vtk, c.output.hdf5,
                        opts.version,  std::nullopt, c.decomp};
}

// What an interrupted run's message adds when it wrote a checkpoint.
std::string restart_hint(const Case& c, const RunOptions& opts) {
  if (c.output.checkpoint_every <= 0) return "";
  return fmt::format(", with {}: continue with --restart {}", kCheckpointFile,
                     (opts.out_dir / kCheckpointFile).string());
}

// Whether the fields and frames are written by a background thread (while
// the steps go on), and if not, why.
std::pair<bool, std::string> output_mode(const RunOptions& opts) {
  if (opts.sync_output) return {false, "GRIDFORGE_SYNC_OUTPUT=1"};
  // Under mpirun MPI is initialised for calls from the main thread only, and
  // the file writers ask it for the rank (the parallel HDF5 writes of
  // several ranks are collective as well).
  if (mpi::launched()) return {false, "started by an MPI launcher"};
  return {true, ""};
}

// laplace: iterations in chunks of check_every (and up to each output), a
// log.csv row (iteration, residual) per chunk, the final iterate written
// whether or not it converged; not converging is a SolverError (exit 1).
template <class T>
nlohmann::json run_laplace(const Case& c, Backend<T>& backend, const RunOptions& opts) {
  const auto t_start = Clock::now();
  const LaplaceSpec& spec = c.laplace;
  LaplaceSolver<T> solver(c, backend);
  Phases ph;
  ph.upload_s = solver.upload_ms() / 1e3;
  ph.setup_s = seconds_since(t_start) - ph.upload_s;
  if (spec.singular && spec.remove_mean)
    spdlog::info("laplace: removed the mean {:.6g} of the right-hand side (remove_mean: true; "
                 "with no Dirichlet face f must balance the boundaries)",
                 solver.mean_removed());

  io::SeriesSpec sspec = series_spec(c, opts);
  io::CsvLog log(opts.out_dir / "log.csv", {"iteration", "residual"});
  if (opts.restart) {
    solver.restore(*opts.restart);
    sspec.resume_before = solver.iterations();
    log.resume(double(solver.iterations()), true);  // its row was written before the checkpoint
  }
  const std::int64_t start = solver.iterations();
  io::FieldSeriesWriter series(sspec);
  const std::int64_t every = c.output.every;
  // The cadences: outputs, checkpoints and frames every so many iterations
  // (solvers/schedule.hpp); chunks also end at multiples of check_every, so
  // that a restarted run checks the residual at the same iterations.
  const Every out_at{every}, ck_at{c.output.checkpoint_every};
  const std::int64_t ck_every = c.output.checkpoint_every;
  std::vector<Chunk> chunks;
  double compute_ms = 0;
  auto timer = backend.make_timer();
  Progress progress(c.name, spec.method == LaplaceMethod::Fft ? 1 : spec.max_iters, opts.progress);
  std::int64_t last_written = -1;  // the last output handed to `outputs`
  std::optional<InSituFrames<T>> frames;
  if (c.render.enabled) frames.emplace(c, backend, opts.out_dir);
  const Every frame_at{frames ? frames->every() : 0};
  // Declared after what its queued writes use (series, frames): it finishes
  // them and joins its thread before those go.
  const auto [background, why_sync] = output_mode(opts);
  OutputWriter<T> outputs(backend, c.grid, background, why_sync);
  const auto queue = outputs.queue();
  auto frame = [&] {
    if (frames && frames->due(solver.iterations()))
      ph.output_s += frames->write(solver.iterations(), solver.field(), queue);
  };

  auto write = [&] {
    const auto t_out = Clock::now();
    const double d0 = outputs.download_ms();
    const std::int64_t it = solver.iterations();
    outputs.field(solver.field(), [&series, it, prec = c.precision](const T* h) {
      series.write(it, double(it), {{"u", h, prec}});
    });
    log.flush();
    ph.output_s += seconds_since(t_out) - (outputs.download_ms() - d0) / 1e3;
    last_written = it;
  };

  auto checkpoint = [&] { ph.output_s += write_checkpoint_now(c, opts, outputs, solver); };

  if (!opts.restart) {
    log.row({0.0, solver.residual()});
    if (every > 0) write();
    frame();
  } else if (out_at.due(solver.iterations()) && !solver.finished()) {
    write();  // as the run that wrote the checkpoint did at this iteration
  }
  bool interrupted = false;
  while (!solver.finished()) {
    if ((interrupted = interrupt_requested())) break;
    const std::int64_t before = solver.iterations();
    const std::int64_t chunk =
        next_stop(before, kNever, Every{spec.check_every}, out_at, ck_at, frame_at) - before;
    timer->start();
    solver.iterate(chunk);
    const double ms = timer->stop_ms();
    compute_ms += ms;
    chunks.push_back({ms, solver.iterations() - before});
    log.row({double(solver.iterations()), solver.residual()});
    progress.update(solver.iterations(), fmt::format("residual {:.3g}", solver.residual()));
    if (out_at.due(solver.iterations()) && !solver.finished()) write();
    if (ck_at.due(solver.iterations()) && !solver.finished()) checkpoint();
    if (!solver.finished()) frame();
  }
  // The state before finish() (which may shift u by its mean): a restart
  // continues the iteration from here.
  if (ck_every > 0) checkpoint();
  timer->start();
  solver.finish();
  compute_ms += timer->stop_ms();
  if (last_written != solver.iterations()) write();
  frame();
  progress.finish();
  const auto t_drain = Clock::now();
  outputs.drain();
  ph.output_s += seconds_since(t_drain);
  series.finish();
  log.flush();

  ph.compute_s = compute_ms / 1e3;
  ph.download_s = outputs.download_ms() / 1e3;
  ph.total_s = seconds_since(t_start);
  nlohmann::json timing = timing_record(c, backend, solver.iterations() - start, ph, chunks,
                                        solver.bytes_per_iteration());
  if (opts.restart) timing["restarted_at_iteration"] = start;
  timing["method"] = to_string(spec.method);
  if (spec.method == LaplaceMethod::Jacobi) timing["time_block"] = solver.time_block();
  timing["iterations"] = solver.iterations();
  timing["residual"] = solver.residual();
  timing["tolerance"] = spec.tolerance;
  timing["reason"] = interrupted ? "interrupted" : to_string(solver.status());
  if (spec.singular) timing["mean_removed"] = solver.mean_removed();
  if (frames) timing["render"] = frames->summary();
  timing["output_writer"] = outputs.summary();
  io::write_json_atomic(opts.out_dir / "timing.json", timing);
  if (interrupted)
    throw InterruptedError(fmt::format("interrupted at iteration {} (residual {:.3g}); the "
                                       "iterate reached is written in {}{}",
                                       solver.iterations(), solver.residual(),
                                       opts.out_dir.string(), restart_hint(c, opts)));
  if (solver.status() == LaplaceStatus::MaxIters)
    throw SolverError(fmt::format("{} did not converge in {} iterations: residual {:.3g} > "
                                  "tolerance {:.3g}; the last iterate is written in {}",
                                  to_string(spec.method), solver.iterations(), solver.residual(),
                                  spec.tolerance, opts.out_dir.string()));
  return timing;
}

}  // namespace

template <class T>
nlohmann::json run_case(const Case& c, Backend<T>& backend, const RunOptions& opts) {
  const RunKind kind = workload_entry(c.workload).run;
  if (kind == RunKind::Solve) return run_laplace(c, backend, opts);
  if (kind == RunKind::Render) return run_raymarch(c, backend, opts);
  const auto t_start = Clock::now();
  const std::unique_ptr<Stepper<T>> stepper = make_stepper<T>(c, backend);
  Stepper<T>& solver = *stepper;
  const double setup_s = seconds_since(t_start) - solver.upload_ms() / 1e3;

  io::SeriesSpec spec = series_spec(c, opts);
  io::CsvLog log(opts.out_dir / "log.csv", {"step", "time", "wall_s", "min", "max", "mean"});
  if (opts.restart) {
    // The rows and outputs of the checkpoint's step itself are written again
    // below, as an uninterrupted run writes them.
    solver.restore(*opts.restart);
    spec.resume_before = solver.step();
    log.resume(double(solver.step()), false);
  }
  const std::int64_t start = solver.step();
  io::FieldSeriesWriter series(spec);

  const std::int64_t total = solver.total_steps();
  const AtSteps out_at{output_steps(total, c.output.every)};
  // log.csv gets a row about every 1 % of the run (every whole number of
  // temporally blocked passes, so that short runs take them too); NaN/Inf
  // are looked for every output.check_every steps as well (a reduction on
  // the device, a few numbers read back), so a diverged run stops soon after
  // it diverges.
  const std::int64_t pass = std::max(1, solver.time_block());
  const Every log_at{(std::max<std::int64_t>(1, total / 100) + pass - 1) / pass * pass};
  const Every check_at{c.output.check_every};
  std::vector<Chunk> chunks;
  double compute_ms = 0, output_s = 0;
  auto timer = backend.make_timer();
  Progress progress(c.name, total, opts.progress);
  // The step of the last output written (by the writer's thread), -1 before one.
  std::atomic<std::int64_t> last_output{-1};
  const Every ck_at{c.output.checkpoint_every};
  // In-situ frames, rendered from the field where it lives (after its NaN check).
  std::optional<InSituFrames<T>> frames;
  if (c.render.enabled) frames.emplace(c, backend, opts.out_dir);
  const Every frame_at{frames ? frames->every() : 0};
  // Declared after what its queued writes use (series, frames, last_output):
  // it finishes them and joins its thread before those go.
  const auto [background, why_sync] = output_mode(opts);
  OutputWriter<T> outputs(backend, c.grid, background, why_sync);
  const auto queue = outputs.queue();
  auto checkpoint = [&] { output_s += write_checkpoint_now(c, opts, outputs, solver); };

  auto observe = [&](bool is_output, bool log_row) {
    const FieldStats st = backend.vec().stats(solver.field());
    if (log_row || st.nonfinite > 0)
      log.row({double(solver.step()), solver.time(), seconds_since(t_start), st.min, st.max,
               st.mean});
    if (st.nonfinite > 0) {
      log.flush();
      // The outputs taken before this check are good ones: written first.
      if (const std::string err = outputs.drain_quietly(); !err.empty()) spdlog::error("{}", err);
      const std::int64_t last = last_output;
      throw SolverError(fmt::format(
          "diverged: field u has {} NaN/Inf values at step {} (t = {:.6g}); {} in {}",
          st.nonfinite, solver.step(), solver.time(),
          last < 0 ? std::string("no output was written")
                   : fmt::format("the last good output (step {}) is kept", last),
          opts.out_dir.string()));
    }
    progress.update(solver.step(), fmt::format("u in [{:.4g}, {:.4g}]", st.min, st.max));
    if (!is_output) return;
    const auto t_out = Clock::now();
    const double d0 = outputs.download_ms();
    const std::int64_t step = solver.step();
    const double time = solver.time();
    outputs.field(solver.field(),
                  [&series, &last_output, step, time, prec = c.precision](const T* h) {
                    series.write(step, time, {{"u", h, prec}});
                    last_output = step;
                  });
    log.flush();
    output_s += seconds_since(t_out) - (outputs.download_ms() - d0) / 1e3;
  };

  bool interrupted = false;
  while (true) {
    const std::int64_t step = solver.step();
    const bool is_output = out_at.due(step);
    // Interrupted: the state reached is written as a final output.
    interrupted = interrupt_requested();
    const bool log_row = is_output || interrupted || log_at.due(step) || step == total;
    // A checkpoint is written after the NaN/Inf check of its step: never a diverged one.
    const bool ck_step = ck_at.k > 0 && ((step > start && ck_at.due(step)) || step >= total ||
                                         interrupted);
    const bool frame_step = frames && frames->due(step) && !interrupted;
    if (log_row || check_at.due(step) || ck_step || frame_step)
      observe(is_output || interrupted, log_row);
    if (ck_step) checkpoint();
    if (frame_step) output_s += frames->write(step, solver.field(), queue);
    if (step >= total || interrupted) break;
    const std::int64_t stop = next_stop(step, total, log_at, check_at, ck_at, frame_at, out_at);
    timer->start();
    solver.advance(stop - step);
    const double ms = timer->stop_ms();
    compute_ms += ms;
    chunks.push_back({ms, solver.step() - step});
  }
  progress.finish();
  const auto t_drain = Clock::now();
  outputs.drain();  // the outputs still being written; throws their error
  output_s += seconds_since(t_drain);
  series.finish();
  log.flush();

  Phases ph{setup_s,  solver.upload_ms() / 1e3, compute_ms / 1e3, outputs.download_ms() / 1e3,
            output_s, seconds_since(t_start)};
  // Throughput over the steps run (fewer than total when interrupted).
  nlohmann::json timing =
      timing_record(c, backend, solver.step() - start, ph, chunks, solver.bytes_per_step());
  if (opts.restart) timing["restarted_at_step"] = start;
  solver.add_timing(timing);
  if (frames) timing["render"] = frames->summary();
  timing["output_writer"] = outputs.summary();
  io::write_json_atomic(opts.out_dir / "timing.json", timing);
  if (interrupted)
    throw InterruptedError(fmt::format("interrupted at step {} of {} (t = {:.6g}); the state "
                                       "reached is written in {}{}",
                                       solver.step(), total, solver.time(),
                                       opts.out_dir.string(), restart_hint(c, opts)));
  return timing;
}

template nlohmann::json run_case<float>(const Case&, Backend<float>&, const RunOptions&);
template nlohmann::json run_case<double>(const Case&, Backend<double>&, const RunOptions&);

}  // namespace gf

