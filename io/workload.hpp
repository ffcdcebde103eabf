// One home per workload, on the case's floor: what the case reader, the
// checkpoints and the commands need to know of a workload's section, in one
// table (io/workload.cpp) that a new workload joins with one entry. The
// solver-level part (its stepper, memory, halo) is solvers/registry.hpp.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "io/case.hpp"

namespace YAML {
class Emitter;
}

namespace gf {

namespace schema {
class Map;
}

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
  // A field on the grid (initial:, boundary:, render:): all but raymarch,
  // which samples a volume of its own.
  bool has_field;
  // Reads its section into c (grid, boundary, parameters and, with a
  // field, initial are read already), and emits it in the resolved case.
  void (*read)(const schema::Map& top, Case& c, const std::filesystem::path& base_dir);
  void (*emit)(YAML::Emitter& out, const Case& c);
  // <name>.time_block as the case gives it (0: auto); null: it has none.
  int (*time_block)(const Case&);
  // Whether this case can take several steps a pass over memory
  // (temporally blocked passes); null: never.
  bool (*blockable)(const Case&);
  // Its faces may be `absorbing` (boundary type); the other workloads refuse it.
  bool absorbing_faces = false;
  // Its Dirichlet values may read t (values that change in time).
  bool time_in_boundary = false;
  // The fields its outputs hold, in their order (log.csv, fields.h5, the
  // solver's fields()), the ones render.field may name; null: one, "u".
  std::vector<std::string> (*output_fields)(const Case&) = nullptr;
};

// The fields a run of case c writes, in order (WorkloadInfo::output_fields).
std::vector<std::string> output_field_names(const Case& c);

// The entry of workload w; every entry, in the order of Workload.
const WorkloadInfo& workload_info(Workload w);
std::span<const WorkloadInfo> workloads();
// The entry whose name is `name`; null when none is.
const WorkloadInfo* workload_named(std::string_view name);

}  // namespace gf
