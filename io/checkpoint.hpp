// checkpoint.h5 (SPEC §4): every value a run needs to continue bit for bit.
// The layout is in docs/design.md ("checkpoint.h5"). Solvers fill a
// Checkpoint from their state (fields downloaded from the backend, raw); the
// run driver writes it; `gridforge run --restart` reads it back.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/precision.hpp"
#include "io/case.hpp"

namespace gf::io {

struct Checkpoint {
  // Identity: what a restart compares with its case.
  std::string version;    // gridforge version that wrote it
  std::string workload;   // "heat", "stencil", "laplace"
  Precision precision = Precision::Float64;
  int ndim = 0;
  std::array<std::int64_t, 3> dims{1, 1, 1};
  std::array<double, 3> spacing{0, 0, 0}, origin{0, 0, 0};
  std::string case_yaml;  // the resolved case

  // Where the run stands.
  std::int64_t step = 0;  // steps (iterations for laplace) done
  double time = 0;
  // The solver's other state, by name (e.g. "dt", "cg_rr"): written and read
  // back bit for bit (doubles as doubles, integers as int64).
  std::vector<std::pair<std::string, double>> reals;
  std::vector<std::pair<std::string, std::int64_t>> integers;
  // Grid-sized arrays (x fastest), as raw values in `precision` (float or
  // double): one host copy of each field, stored and read back as they are.
  std::vector<std::pair<std::string, std::vector<unsigned char>>> fields;

  double real(const std::string& name) const;           // throws IoError when absent
  std::int64_t integer(const std::string& name) const;  // throws IoError when absent
  const std::vector<unsigned char>& field(const std::string& name) const;  // throws IoError
};

// What keeps ck from continuing case c, as "key X in the checkpoint, Y in the
// case" ("" when nothing): the workload, precision and grid first, then any
// key of the resolved case except those a restart may change (name, device,
// initial, output.*, heat.steps, heat.t_end, stencil.steps, laplace.max_iters,
// laplace.tolerance, laplace.check_every), and a step past the case's last.
std::string checkpoint_mismatch(const Checkpoint& ck, const Case& c);

// The first key (dotted) where two resolved cases differ, of those a restart
// may not change: "key X in the checkpoint, Y in <other_is>"; "" when the
// checkpoint's case continues the other (a run folder's run.json).
std::string case_difference(const std::string& checkpoint_case, const std::string& other_case,
                            const std::string& other_is);

// Writes path atomically (".<name>.tmp" in the same folder, then rename).
// Throws IoError.
void write_checkpoint(const std::filesystem::path& path, const Checkpoint& ck);

// Reads a checkpoint written by write_checkpoint. Throws IoError naming the
// file and what is wrong with it (missing, not HDF5, not a checkpoint).
Checkpoint read_checkpoint(const std::filesystem::path& path);

}  // namespace gf::io
