#include "solvers/drive.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "core/interrupt.hpp"
#include "core/mpi.hpp"
#include "core/process.hpp"
#include "core/progress.hpp"
#include "grid/gather.hpp"
#include "io/output.hpp"
#include "core/threads.hpp"
#include "solvers/output_writer.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/registry.hpp"

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
// startup: from the process's start to the run's (t_start); total: the
// whole process up to the writing of timing.json.
struct Phases {
  double startup_s = 0, setup_s = 0, upload_s = 0, compute_s = 0, download_s = 0, output_s = 0,
         total_s = 0;
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
       {{"startup", p.startup_s},
        {"setup", p.setup_s},
        {"upload", p.upload_s},
        {"compute", p.compute_s},
        {"download", p.download_s},
        {"output", p.output_s},
        {"total", p.total_s}}},
      {"per_step_ms", per_step_stats(chunks)},
      {"points_per_s", q.compute_s > 0 ? pts * double(steps) / q.compute_s : 0.0},
      {"effective_GBps", q.compute_s > 0 ? bytes_all * double(steps) / q.compute_s / 1e9 : 0.0},
      {"device_memory_peak_bytes", backend.memory().peak_bytes()},
      {"host_memory_peak_bytes", host_memory_peak_bytes()},
  };
  if (!backend.is_gpu()) {
    // the threads a step's loops take on this grid (a rank's block), and the most any may
    t["threads"] = cpu::threads_for(c.grid.size());
    t["threads_max"] = cpu::max_threads();
  }
  if (c.decomp) {  // rank 0's memory and phases, the slowest rank's compute
    t["phases_s"]["compute"] = q.compute_s;
    t["ranks"] = c.decomp->nranks;
    t["rank_dims"] = std::vector<int>(c.decomp->dims.begin(), c.decomp->dims.begin() + g.ndim);
  }
  return t;
}

// What the .vti series' compression did (docs/usage.md#timingjson).
nlohmann::json vtk_record(const Case& c, const io::VtkWriteStats& s) {
  return {{"compression", io::to_string(c.output.compression)},
          {"threads", cpu::max_threads()},
          {"bytes_in", s.bytes_in},
          {"bytes_out", s.bytes_out},
          {"compress_s", s.compress_s},
          {"compress_cpu_s", s.compress_cpu_s},
          {"blocks_ahead", s.blocks_ahead},
          {"blocks_inline", s.blocks_inline}};
}

// What fields.h5's compression did (docs/usage.md#timingjson); over MPI
// ranks fields.h5 is not compressed ("none").
nlohmann::json h5_record(const Case& c, const io::H5WriteStats& s) {
  const bool on = !c.decomp && c.output.hdf5_compression.method != io::Compression::Method::None;
  return {{"compression", on ? io::to_string(c.output.hdf5_compression) : std::string("none")},
          {"threads", cpu::max_threads()},
          {"bytes_in", s.bytes_in},
          {"bytes_out", s.bytes_out},
          {"compress_s", s.compress_s},
          {"compress_cpu_s", s.compress_cpu_s},
          {"write_s", s.write_s},
          {"chunks", s.chunks},
          {"chunks_stored", s.chunks_stored},
          {"deflate", s.deflate}};
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

// The field series (fields.h5 + .xdmf, .vti/.pvti + .pvd) of this run.
// The .vti blocks are compressed over every thread a loop may take.
io::SeriesSpec series_spec(const Case& c, const RunOptions& opts) {
  io::SeriesSpec s;
  s.dir = opts.out_dir;
  s.name = c.name;
  s.grid = c.decomp ? c.decomp->global : c.grid;
  s.precision = c.precision;
  s.vtk = c.output.vtk;
  s.hdf5 = c.output.hdf5;
  s.version = opts.version;
  s.decomp = c.decomp;
  s.compression = c.output.compression;
  s.hdf5_compression = c.output.hdf5_compression;
  s.threads = cpu::max_threads();
  return s;
}

// What an interrupted run's message adds when it wrote a checkpoint.
std::string restart_hint(const Case& c, const RunOptions& opts) {
  if (c.output.checkpoint_every <= 0 || opts.resume.empty()) return "";
  return fmt::format(", with {}; continue with: {}", kCheckpointFile, opts.resume);
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

}  // namespace

template <class T>
nlohmann::json drive(const Case& c, Backend<T>& backend, const RunOptions& opts, Driven<T>& d,
                     const DrivePlan& plan, Clock::time_point t_start) {
  Phases ph;
  ph.upload_s = d.upload_ms() / 1e3;
  ph.setup_s = seconds_since(t_start) - ph.upload_s;

  io::SeriesSpec spec = series_spec(c, opts);
  io::CsvLog log(opts.out_dir / "log.csv", plan.log_columns);
  if (opts.restart) {
    // The rows and outputs of the checkpoint's count itself are written
    // again below, as an uninterrupted run writes them.
    d.restore(*opts.restart);
    spec.resume_before = d.count();
    log.resume(double(d.count()), false);
  }
  const std::int64_t start = d.count();
  if (opts.started) opts.started();
  io::FieldSeriesWriter series(spec);

  std::vector<Chunk> chunks;
  double compute_ms = 0;
  auto timer = backend.make_timer();
  Progress progress(c.name, plan.progress_total, opts.progress,
                    std::string(workload_entry(c.workload).unit) + "s");
  // The count of the last output written (by the writer's thread), -1 before one.
  std::atomic<std::int64_t> last_output{-1};
  // In-situ frames, rendered from the field where it lives (after its NaN
  // check): the field render.field names, looked up at each frame (a
  // stepper may swap its arrays between steps).
  std::optional<InSituFrames<T>> frames;
  auto frame_of = [&]() -> const Field<T>& { return *frame_field(c.render, d.fields()).field; };
  if (c.render.enabled) frames.emplace(c, backend, opts.out_dir);
  const Every frame_at{frames ? frames->every() : 0};
  // Declared after what its queued writes use (series, frames, last_output):
  // it finishes them and joins its thread before those go.
  const auto [background, why_sync] = output_mode(opts);
  OutputWriter<T> outputs(backend, c.grid, background, why_sync);
  const auto queue = outputs.queue();

  std::int64_t last_written = -1;  // the count of the last output handed to `outputs`
  auto write_output = [&] {
    const auto t_out = Clock::now();
    const double d0 = outputs.download_ms();
    const std::int64_t n = d.count();
    const double time = d.time();
    last_written = n;
    std::vector<const Field<T>*> fs;
    std::vector<std::string> names;
    for (const NamedField<T>& f : d.fields()) {
      fs.push_back(f.field);
      names.push_back(f.name);
    }
    outputs.fields(fs, [&series, &last_output, n, time, names,
                        prec = c.precision](const std::vector<const T*>& h) {
      std::vector<io::FieldView> views;
      for (std::size_t k = 0; k < h.size(); ++k) views.push_back({names[k], h[k], prec});
      series.write(n, time, views);
      last_output = n;
    });
    log.flush();
    ph.output_s += seconds_since(t_out) - (outputs.download_ms() - d0) / 1e3;
  };
  auto checkpoint = [&] {
    const auto t_out = Clock::now();
    outputs.drain();  // never ahead of the outputs before it
    io::Checkpoint ck = checkpoint_of(c, opts.version);
    d.save(ck);
    write_checkpoint_of<T>(c, ck, opts.out_dir / kCheckpointFile);
    ph.output_s += seconds_since(t_out);
  };

  // Every stop: an observation (its log row when due; a diverged state
  // stops the run before anything of it is written), then the outputs,
  // checkpoint and frame due there. At the end (the last count, finished, or
  // Ctrl-C): the checkpoint (the state before finish()), finish(), the final
  // output and frame.
  // A stop comes again at the same count when Ctrl-C cut the advance short
  // before its first step: what was written there is not written twice.
  const bool checkpoints = c.output.checkpoint_every > 0;
  bool interrupted = false;
  std::int64_t visited = -1, last_row = -1;
  while (true) {
    const std::int64_t n = d.count();
    const bool again = n == visited;
    visited = n;
    interrupted = stop_requested();  // over MPI ranks: all agree
    const bool end = interrupted || d.finished() || n >= d.last();
    const Observation ob = d.observe();
    const bool log_row = plan.log_every_stop || end || plan.log.due(n) || plan.output.due(n);
    if ((log_row || !ob.diverged.empty()) && n != last_row) {
      log.row(ob.row);
      last_row = n;
    }
    if (!ob.diverged.empty()) {
      log.flush();
      // The outputs taken before this check are good ones: written first.
      if (const std::string err = outputs.drain_quietly(); !err.empty()) spdlog::error("{}", err);
      const std::int64_t last = last_output;
      throw SolverError(fmt::format(
          "diverged: {}; {} in {}", ob.diverged,
          last < 0 ? std::string("no output was written")
                   : fmt::format("the last good output ({} {}) is kept",
                                 workload_entry(c.workload).unit, last),
          opts.out_dir.string()));
    }
    progress.update(n, ob.note, ob.fraction);
    const bool frame = frames && frame_at.due(n) && !interrupted;
    const std::array<double, 2>* range = ob.range ? &*ob.range : nullptr;
    if (end) {
      if (checkpoints) checkpoint();
      timer->start();
      d.finish();
      compute_ms += timer->stop_ms();
      if (n != last_written) write_output();
      if (frame && !again) ph.output_s += frames->write(n, frame_of(), queue, range);
      break;
    }
    if (!again) {
      if (plan.output.due(n)) write_output();
      if (n > start && plan.checkpoint.due(n)) checkpoint();
      if (frame) ph.output_s += frames->write(n, frame_of(), queue, range);
    }
    const std::int64_t stop =
        next_stop(n, d.last(), plan.output, plan.checkpoint, plan.log, plan.check, frame_at);
    timer->start();
    d.advance(stop - n);
    const double ms = timer->stop_ms();
    compute_ms += ms;
    chunks.push_back({ms, d.count() - n});
  }
  progress.finish();
  const auto t_drain = Clock::now();
  outputs.drain();  // the outputs still being written; throws their error
  ph.output_s += seconds_since(t_drain);
  series.finish();
  log.flush();

  ph.compute_s = compute_ms / 1e3;
  ph.download_s = outputs.download_ms() / 1e3;
  std::tie(ph.startup_s, ph.total_s) = whole_process(t_start);
  // Throughput over the counts run (fewer than planned when interrupted).
  nlohmann::json timing =
      timing_record(c, backend, d.count() - start, ph, chunks, d.bytes_per_count());
  d.add_timing(timing, start, interrupted);
  if (frames) timing["render"] = frames->summary();
  timing["output_writer"] = outputs.summary();
  if (c.output.vtk) timing["vtk_output"] = vtk_record(c, series.vtk_stats());
  if (c.output.hdf5) timing["hdf5_output"] = h5_record(c, series.h5_stats());
  io::write_json_atomic(opts.out_dir / "timing.json", timing);
  if (interrupted)
    throw InterruptedError(fmt::format("interrupted at {} is written in {}{}", d.stopped_at(),
                                       opts.out_dir.string(), restart_hint(c, opts)));
  d.check_outcome(opts.out_dir,
                  c.output.checkpoint_every > 0 ? opts.resume : std::string());
  return timing;
}

template nlohmann::json drive(const Case&, Backend<float>&, const RunOptions&, Driven<float>&,
                              const DrivePlan&, Clock::time_point);
template nlohmann::json drive(const Case&, Backend<double>&, const RunOptions&, Driven<double>&,
                              const DrivePlan&, Clock::time_point);

}  // namespace gf
