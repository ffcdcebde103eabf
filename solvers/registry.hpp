// One home per workload, on the solvers' floor: what the run driver,
// validate, bench, the memory check and the decomposition need to know of a
// workload, in one table (solvers/registry.cpp) that a new workload joins
// with one entry. The case-level part (its section's keys, steps) is the
// case reader's (io/case.hpp).
#pragma once
#include <memory>
#include <string>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "solvers/bench.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// How a workload's run goes: time steps through a Stepper (heat, stencil,
// wave), an iterative solve to a tolerance (laplace), or frames of a
// volume (raymarch).
enum class RunKind { Steps, Solve, Render };

struct WorkloadEntry {
  Workload workload;
  RunKind run;
  const char* unit;    // what its log counts: "step", "iteration", "frame"
  bool time_block;     // has <workload>.time_block (and --time-block)
  // Layers of neighbours one step reads (the halo over MPI ranks).
  int (*halo_width)(const Case&);
  // The numerics in one line (stability limit, method), logged at the start
  // of a run and printed by --dry-run; null: none.
  std::string (*setup_line)(const Case&);
  // The tolerance of an inner iterative solver (validate's tolerance is at
  // least 10× it), or 0.
  double (*solver_tolerance)(const Case&);
  // Device memory a run of the case needs.
  MemoryNeed (*memory_f32)(const Case&);
  MemoryNeed (*memory_f64)(const Case&);
  // gridforge bench: the method a row takes by default on a grid of `dims`
  // axes (null: not benchable), whether the rows' labels name it, and the
  // workload's section of a row's case (solvers/bench.cpp, bench_case).
  const char* (*bench_method)(int dims);
  bool bench_label_method;
  std::string (*bench_section)(const BenchItem& it);
  // RunKind::Steps: the stepper, initial state uploaded.
  std::unique_ptr<Stepper<float>> (*stepper_f32)(const Case&, Backend<float>&);
  std::unique_ptr<Stepper<double>> (*stepper_f64)(const Case&, Backend<double>&);
  // What the case needs resolved before it runs (laplace: the SOR ω, the
  // singular system), its resolved_yaml emitted again; null: nothing.
  void (*prepare)(Case&) = nullptr;
  // Refuses (CaseError) a split over nranks > 1 ranks that the workload
  // cannot run; null: any split.
  void (*check_ranks)(const Case&, int nranks) = nullptr;
  // Its bench rows are in `gridforge bench`'s default set (else asked for by
  // name: raymarch's modes and images, pde's interpreted CPU reference).
  bool bench_default = true;
};

const WorkloadEntry& workload_entry(Workload w);

}  // namespace gf
