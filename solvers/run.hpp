// A whole run of a case: time loop, output cadence, logs and timing, on one
// backend. app/ picks the backend and the folder; this writes the files.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "kernels/backend.hpp"

namespace gf {

struct RunOptions {
  std::filesystem::path out_dir;  // exists
  bool progress = true;           // draw the progress line / periodic log lines
  std::string version;
};

// Runs the case and returns the timing record (timing.json). Writes log.csv,
// the field series and timing.json into opts.out_dir. Throws SolverError on
// divergence (the outputs written so far are kept).
template <class T>
nlohmann::json run_case(const Case& c, Backend<T>& backend, const RunOptions& opts);

}  // namespace gf
