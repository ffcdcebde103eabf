// `gridforge bench`: the cases it times, how a row is timed, the bandwidth
// ceilings it measures in the same run, and the rows' arithmetic and files.
// Written against Backend<T>; app/cmd_bench.cpp picks devices and sizes.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "kernels/backend.hpp"

namespace gf {

// One thing a row times: a workload on a box of shape[0] × shape[1] (× shape[2])
// points; a cube (a square in 2D) when every axis has the same count.
struct BenchItem {
  std::string workload = "heat";  // heat | stencil | laplace
  std::string method;             // explicit | a stencil preset | jacobi
  int dims = 3;
  std::vector<std::int64_t> shape = {64, 64, 64};  // points per axis, x first; dims entries
  Precision precision = Precision::Float32;
  int time_block = 1;  // heat, stencil star7, laplace jacobi: steps per pass (<workload>.time_block)
  int width = 0, height = 0;  // raymarch: the image (method: the mode)

  // bench.json's "size": points along x (the points per axis of a cube).
  std::int64_t size() const { return shape.empty() ? 0 : shape[0]; }
  bool cubic() const;
  std::int64_t points() const;
};
// n points on each of dims axes.
std::vector<std::int64_t> cube_shape(int dims, std::int64_t n);

// The workloads bench knows and their method ("" for the stencil: the preset
// for dims, star5 in 2D and star7 in 3D, unless one is given).
const std::vector<std::string>& bench_workloads();
// The workload of a name bench_workloads() gives.
Workload workload_of(const std::string& name);

// More steps than any bench runs: the timing loop, not the case, ends a row.
inline constexpr std::int64_t kUnlimitedSteps = 1'000'000'000'000;
std::string default_bench_method(const std::string& workload, int dims);

// The case a row runs (raymarch: the cloud of cases/raymarch_cloud.yaml,
// the peer's camera, 0.5-cell steps, the item's mode and image; the
// isosurface at 0.3): unit extent, walls held at 2 (Dirichlet) around a
// field that starts at 1, no source, right-hand side 0; values stay in [1, 2]
// so no subnormal numbers slow the CPU; no output. Steps (iterations) are
// unlimited: the timing loop decides how many to run. Throws CaseError.
Case bench_case(const BenchItem& item);

// How many steps a repetition times and how many repetitions (median).
struct TimingPlan {
  std::int64_t steps = 0;        // 0: auto, about target_ms per repetition
  int repetitions = 5;
  double target_ms = 100;        // auto: a repetition's length
  std::int64_t max_steps = 1000; // auto: at most this many steps a repetition
};

struct BenchTiming {
  std::int64_t steps = 0;           // timed steps per repetition
  std::vector<double> ms_per_step;  // one per repetition, in the order run
  std::size_t bytes_per_step = 0;   // T_eff: each field read or written once a step
  std::int64_t points = 0;
  // raymarch: rays a frame (pixels) and the samples a frame's plain march
  // takes without early termination (the peer's count, raymarch_peer.py)
  std::int64_t rays = 0;
  double samples = 0;
};

// Times a row: one step (pass) to warm up (first touch, lazy set-up), one
// timed step (pass) to size an auto repetition, a warm-up repetition when that is short, then
// the repetitions, each timed with the backend's timer (CUDA events on the GPU).
template <class T>
BenchTiming time_bench_case(const Case& c, Backend<T>& backend, const TimingPlan& plan);

// The same loop over any advance(n) (exposed for tests). granule: the steps
// one pass takes (a temporally blocked run's time_block); every advance is a
// whole number of them, so that the passes timed are the blocked ones.
BenchTiming time_steps(const std::function<void(std::int64_t)>& advance, Timer& timer,
                       const TimingPlan& plan, int granule = 1);

// A bandwidth ceiling measured on a backend: the GPU's device-to-device copy
// (2 × bytes moved), the CPU's STREAM triad a = b + s·c (3 × bytes moved).
struct Bandwidth {
  std::string kind;            // "copy" or "triad"
  double GBps = 0;             // bytes moved / median time / 1e9
  std::size_t array_bytes = 0; // one array
  int repetitions = 0;
};
template <class T>
Bandwidth measure_copy_bandwidth(Backend<T>& backend, std::size_t array_bytes, int repetitions);
template <class T>
Bandwidth measure_triad_bandwidth(Backend<T>& backend, std::size_t array_bytes, int repetitions);
// Array sizes: the CPU's triad arrays each at least the last-level cache (so
// the three together are 3× it; streaming through them reuses nothing), and
// 64 MiB at least; capped at an eighth of the free host memory. The GPU's
// copy buffers are 2 GiB each (peers.py's size), less when a quarter of the
// free memory is less.
std::size_t triad_array_bytes();
std::size_t copy_array_bytes(std::size_t device_free);

double median(std::vector<double> v);

// A time-to-solution row's outcome (`--workload poisson`, solvers/bench_solve.hpp).
struct SolveOutcome {
  std::string problem;          // "dirichlet" (walls at 0) or "periodic" (fft)
  // the case keys the method stands for; "" where they do not apply
  std::string preconditioner;   // cg: none | jacobi | multigrid
  std::string cycle;            // multigrid: v | f
  std::string laplace_precision;  // multigrid: uniform | mixed
  double tolerance = 0;         // the one solved to (float32: at least 1e-5)
  std::int64_t iterations = 0;  // sweeps, CG iterations or cycles; fft: 1
  int time_block = 1;           // jacobi: sweeps a pass (auto, as a run picks)
  double setup_s = 0, solve_s = 0;
  double residual0 = 1, residual = 0;  // relative: of the first guess, at the end
  bool converged = false;
  std::string reason;  // converged | direct | max_iters | stalled | time_limit | failed
  double max_error = 0;                  // max |u − u_exact| over the grid
  std::optional<double> factor;          // (residual / residual0)^(1/iterations)
  std::size_t bytes_per_iteration = 0;
};

// One row of the table, bench.json and bench.csv.
struct BenchRow {
  BenchItem item;
  std::string device;       // "cpu" or "cuda"
  std::string device_name;  // the backend's name
  std::int64_t points = 0;
  std::int64_t steps = 0;
  int repetitions = 0;
  double ms_per_step = 0, ms_per_step_min = 0, ms_per_step_max = 0;
  std::size_t bytes_per_step = 0;
  double points_per_s = 0, effective_GBps = 0;
  Bandwidth bandwidth;            // the device's ceiling, from the same run
  double fraction_of_bandwidth = 0;
  std::optional<double> speedup_vs_cpu;  // CPU time / this time; 1 on CPU rows
  // raymarch rows: a step is a frame; rays and samples (BenchTiming's) a second
  std::optional<double> rays_per_s, samples_per_s;
  // poisson rows: the solve (null keys on the others)
  std::optional<SolveOutcome> solve;
};

// points/s = points / (ms_per_step / 1e3); GB/s = bytes_per_step / s_per_step / 1e9;
// fraction = GB/s / the bandwidth (median ms over the repetitions).
BenchRow make_bench_row(const BenchItem& item, const std::string& device,
                        const std::string& device_name, const BenchTiming& t,
                        const Bandwidth& bw);
// Fills speedup_vs_cpu from the CPU row of the same workload, method, dims,
// shape and precision (left empty where there is none).
void fill_speedups(std::vector<BenchRow>& rows);

// The columns of bench.csv and the keys of each row in bench.json, in order.
// "size" is points along x (all there was before non-cubic rows); "shape" the
// points per axis: a JSON array [nx, ny(, nz)], in the CSV "NXxNY(xNZ)".
const std::vector<std::string>& bench_row_fields();
nlohmann::json bench_row_json(const BenchRow& r);
std::string bench_csv(const std::vector<BenchRow>& rows);
// The table of SPEC §2 (one header line, one line a row).
std::string bench_table(const std::vector<BenchRow>& rows);

}  // namespace gf
