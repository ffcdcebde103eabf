// What the run driver and validate need from a time-stepping workload (heat,
// stencil): written once, against Backend<T>.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "io/checkpoint.hpp"
#include "kernels/backend.hpp"
#include "kernels/ops/boundary.hpp"
#include "solvers/schedule.hpp"

namespace gf {

template <class T>
class Stepper {
 public:
  virtual ~Stepper() = default;
  // Advances n steps (never past the last step), fewer when interrupted.
  virtual void advance(std::int64_t n) = 0;
  virtual std::int64_t step() const = 0;
  virtual double time() const = 0;  // simulation time (the step number for stencils)
  virtual std::int64_t total_steps() const = 0;
  virtual const Field<T>& field() const = 0;
  // Every field its outputs hold, field() first (one, "u", but for pde).
  virtual std::vector<NamedField<T>> fields() const { return {{"u", &field()}}; }
  // Bytes one step must move (each field read or written once: T_eff).
  virtual std::size_t bytes_per_step() const = 0;
  virtual double upload_ms() const = 0;
  // Iterations of an inner solver over the run (CG of the implicit heat schemes), or 0.
  virtual std::int64_t solver_iterations() const { return 0; }
  // Explicit steps per pass over memory (temporal blocking; 1 without it).
  virtual int time_block() const { return 1; }
  // Its own entries of timing.json (heat: solver_iterations or time_block;
  // stencil: time_block).
  virtual void add_timing(nlohmann::json& timing) const { (void)timing; }
  // Checkpoint/restart: everything the next steps depend on (step, time, the
  // fields, downloaded) into ck; restore() puts it back (uploaded), on a
  // stepper just made for the same case, on either device.
  virtual void save(io::Checkpoint& ck) = 0;
  virtual void restore(const io::Checkpoint& ck) = 0;
};

// A field through the host as raw values of T (checkpoints), and back.
template <class T>
std::vector<unsigned char> download_bytes(Backend<T>& backend, const Field<T>& f);
template <class T>
void upload_bytes(Backend<T>& backend, const std::vector<unsigned char>& host, Field<T>& f);

// The stepper of the case's workload, initial state uploaded (its entry in
// solvers/registry.hpp).
template <class T>
std::unique_ptr<Stepper<T>> make_stepper(const Case& c, Backend<T>& backend);

// Memory a run of this case needs on its device: `fields` grid-sized arrays
// of T plus reduction scratch, `bytes` in all.
struct MemoryNeed {
  int fields = 0;
  std::size_t bytes = 0;
  // What else than the fields takes a large share of `bytes`, and how much
  // (CG's sparse matrix, the FFT's spectra); 0: nothing worth naming.
  std::string other;
  std::size_t other_bytes = 0;
};
template <class T>
MemoryNeed stepper_memory_needed(const Case& c);
// The memory of the case's workload alone (its entry in solvers/registry.hpp).
template <class T>
MemoryNeed workload_memory_needed(const Case& c);

// The case's initial state in f, on f's backend: the initial condition
// (a value or an expression, evaluated where f lives: kernels/expr/; a file,
// read on the host and uploaded), then the Dirichlet values on their faces
// (faces in the order x- x+ y- y+ z- z+, so where two Dirichlet faces meet
// the later one's value stands). Returns how long an upload took (ms; 0
// when nothing was uploaded: the evaluation is setup, not a transfer).
template <class T>
double set_initial_state(const Case& c, Backend<T>& backend, Field<T>& f);

// The same on the host (the CPU executor), as one array x-fastest: tests,
// and whoever needs the values there.
template <class T>
std::vector<T> initial_state(const Case& c);

// The case's boundary conditions, per axis of the grid, as the kernels take them.
template <class T>
void axis_boundaries(const Case& c, AxisBc<T> (&bc)[3]);

// Temporal blocking's auto: of the depths 1..deepest, the one whose pass(k)
// (k steps a pass; k = 1 the single step) runs fastest here, timed as a
// warm-up and 3 timed passes of each (on the GPU their total; on the CPU the
// fastest, the least disturbed by other work on its cores). A depth is taken
// only when it beats the best before it by 5 %; runs of fewer than
// kAutoTimeBlockMinSteps (200) steps, too short to repay the timing, take 1.
// On the CPU nothing is timed, and 1 taken, where cpu_time_block_tuning says
// so. Over MPI ranks each depth counts at the slowest rank's time, so that
// every rank takes the same. The passes must leave the run's state untouched
// (they write a scratch field). `points`: the field's (the rank's block).
// Logs what it chose and why, for `what` ("heat: ...").
struct TimeBlockPick {
  int k = 1;             // steps a pass
  bool measured = false;  // the depths were timed
  double tuning_s = 0;    // the time that took (in the run's setup)
};
template <class T>
TimeBlockPick fastest_time_block(Backend<T>& backend, int deepest, std::int64_t steps,
                                 std::int64_t points, const char* what,
                                 const std::function<void(int)>& pass);

// Whether the CPU times the depths at all (measure), and why not: not when
// both fields (2 × points × value_bytes) fit in half the last-level cache,
// where a pass of several steps saves no memory traffic; not when the run
// has fewer than kCpuTuningShare times the steps the timing takes (so that
// it costs at most 1/kCpuTuningShare of the run). On a busy machine a pass
// of a few milliseconds can take a scheduler's quantum more, and the timing
// of small grids said nothing but added seconds (issue 25).
inline constexpr std::int64_t kCpuTuningShare = 20;
struct CpuTuning {
  bool measure = false;
  std::size_t fields_bytes = 0;
  std::string why;
};
CpuTuning cpu_time_block_tuning(std::int64_t points, std::size_t value_bytes, std::int64_t steps,
                                int deepest, std::size_t cache_bytes);
// Records a time_block auto's choice in timing.json: time_block_auto
// {measured, tuning_s}.
void add_time_block_pick(nlohmann::json& t, const TimeBlockPick& p);

// The steps at which a run writes its fields: 0, every, 2·every, ... and the
// last step (only the last when every is 0), as a schedule (a run of 10⁹
// steps with an output at each holds no list of them).
Schedule output_schedule(std::int64_t total_steps, std::int64_t every);

}  // namespace gf
