// The run driver: one loop for every workload that advances a count, the
// steps of a time stepper (heat, stencil, wave) and the iterations of an
// iterative solve (laplace), in the manner of Oceananigans' run!. What is
// done when (outputs, checkpoints, log rows, NaN/Inf checks, frames) is a
// set of schedules (solvers/schedule.hpp); what is driven is a `Driven<T>`
// (solvers/run.cpp adapts the steppers and LaplaceSolver to it). The loop
// owns the scaffolding they share: the field series, log.csv, restart, the
// in-situ frames, the background output writer, checkpoints, the timing
// record and Ctrl-C.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "io/checkpoint.hpp"
#include "kernels/backend.hpp"
#include "solvers/run.hpp"
#include "solvers/schedule.hpp"

namespace gf {

// A look at the state at a stop of the loop.
struct Observation {
  std::vector<double> row;  // its log.csv row (written when the log is due)
  std::string note;         // the progress line's note ("residual 1e-3")
  // Non-empty: the state is not finite, and this says where ("field u has 3
  // NaN/Inf values at step 40 (t = 0.1)"); the run stops with a SolverError.
  std::string diverged;
  double fraction = -1;  // how far it is, when the count does not say (Progress::update)
  // The least and greatest value of the field the in-situ frames draw
  // (render.field, else the first), when observing reduced them (a
  // stepper's statistics): an in-situ frame's auto range takes them rather
  // than reducing the same field again. Only where finish() leaves the field as it is.
  std::optional<std::array<double, 2>> range;
};

// What the loop drives. count() starts at 0 (or the checkpoint's count) and
// grows by advance(); the loop stops at last(), when finished() or on Ctrl-C.
template <class T>
class Driven {
 public:
  virtual ~Driven() = default;
  virtual std::int64_t count() const = 0;
  // The count at which it ends at the latest (kNever: it decides, finished()).
  virtual std::int64_t last() const = 0;
  virtual bool finished() const = 0;
  // Up to n more steps or iterations (fewer when it finishes or is interrupted).
  virtual void advance(std::int64_t n) = 0;
  // Once, after the last advance and the final checkpoint, before the final
  // output (laplace: the true CG residual, the mean made 0).
  virtual void finish() {}
  virtual double time() const = 0;  // the field series' time of count()
  virtual const Field<T>& field() const = 0;
  // Every field its outputs hold, field() first (one, "u", but for pde).
  virtual std::vector<NamedField<T>> fields() const { return {{"u", &field()}}; }
  virtual Observation observe() = 0;
  virtual double upload_ms() const = 0;
  virtual std::size_t bytes_per_count() const = 0;  // each field read or written once
  virtual void save(io::Checkpoint& ck) = 0;
  virtual void restore(const io::Checkpoint& ck) = 0;
  // Where an interrupted run stopped and what was written ("step 5 of 10
  // (t = 0.5); the state reached").
  virtual std::string stopped_at() const = 0;
  // Its own entries of timing.json (start: the count it began at).
  virtual void add_timing(nlohmann::json& timing, std::int64_t start,
                          bool interrupted) const = 0;
  // After timing.json is written: throws when the run failed its own test
  // (laplace: max_iters reached, SolverError).
  // resume: the command that continues the run from its checkpoint ("" when none).
  virtual void check_outcome(const std::filesystem::path& out_dir,
                             const std::string& resume) const {
    (void)out_dir;
    (void)resume;
  }
};

// The run's schedules, in counts (steps or iterations). Frames follow
// render.every (InSituFrames); the last count is always a stop.
struct DrivePlan {
  std::vector<std::string> log_columns;  // log.csv's header
  Schedule output;                       // field outputs (the final one is always written)
  Schedule checkpoint;                   // none without output.checkpoint_every
  Schedule log;                          // log.csv rows
  Schedule check;                        // further stops for an observation (NaN/Inf, residual)
  bool log_every_stop = false;           // a row at every stop (laplace: each residual check)
  std::int64_t progress_total = 0;
};

// Runs `d` to its end under `plan`, writing the series, log.csv, frames,
// checkpoints and timing.json into opts.out_dir; returns the timing record.
// t_start: when the run began (before `d` was made: its setup counts). Throws
// SolverError on divergence, InterruptedError on Ctrl-C (the state reached
// written), and what check_outcome throws.
template <class T>
nlohmann::json drive(const Case& c, Backend<T>& backend, const RunOptions& opts, Driven<T>& d,
                     const DrivePlan& plan, std::chrono::steady_clock::time_point t_start);

}  // namespace gf
