// One home per workload, on the case's floor: what the case reader, the
// checkpoints and the commands need to know of a workload's section, in one
// table (io/workload.cpp) that a new workload joins with one entry. The
// solver-level part (its stepper, memory, halo) is solvers/registry.hpp.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "io/case.hpp"

namespace gf {

struct WorkloadInfo {
  Workload workload;
  std::string_view name;  // the `workload:` value, and its section's key
  // Time steps: a checkpoint past the case's last step is refused (an
  // iterative solve's max_iters is a cap, not an end).
  bool time_steps;
  // The steps (iterations) the case runs to; null: none (raymarch).
  std::int64_t (*steps)(const Case&);
  // Makes the case run n steps (validate --steps; n ≥ 0); null: none.
  void (*set_steps)(Case&, std::int64_t n);
  // The key a user raises to run further ("steps", "t_end", "max_iters").
  const char* (*end_key)(const Case&);
  // Keys of its section a restart may change (how far it runs, how it
  // blocks its steps): a checkpoint continues the case with other values.
  std::span<const std::string_view> restart_may_change;
  // The fields its checkpoint holds (the solver's save()): a checkpoint
  // without one of them cannot continue the case.
  std::vector<std::string> (*state_fields)(const Case&);
};

// The entry of workload w; every entry, in the order of Workload.
const WorkloadInfo& workload_info(Workload w);
std::span<const WorkloadInfo> workloads();

}  // namespace gf
