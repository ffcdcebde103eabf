// A whole run of a case: time loop, output cadence, logs and timing, on one
// backend. app/ picks the backend and the folder; this writes the files.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "io/checkpoint.hpp"
#include "kernels/backend.hpp"

namespace gf {

struct RunOptions {
  std::filesystem::path out_dir;  // exists
  bool progress = true;           // draw the progress line / periodic log lines
  std::string version;
  // Continue from this checkpoint (checked against the case by the caller):
  // the state is restored, log.csv and the field series in out_dir are
  // continued from its step.
  const io::Checkpoint* restart = nullptr;
  // Write the fields and frames in the time loop itself instead of on a
  // background thread (GRIDFORGE_SYNC_OUTPUT=1; tests compare the two).
  bool sync_output = false;
  // The command that continues this run from its checkpoint.h5 ("gridforge
  // run --restart DIR/checkpoint.h5 ..."), for the messages of a run that
  // stops before its end (Ctrl-C, laplace at max_iters); "": none.
  std::string resume;
  // Called once the run is set up (allocation, expressions, the time-block
  // choice done), before its first output: a replacing run lets go of the
  // files it replaces there.
  std::function<void()> started;
};

// checkpoint.h5 in the output folder.
inline constexpr const char* kCheckpointFile = "checkpoint.h5";

// Runs the case and returns the timing record (timing.json). Writes log.csv,
// the field series and timing.json into opts.out_dir. Throws SolverError on
// divergence (the outputs written so far are kept). With
// output.checkpoint_every > 0 it writes checkpoint.h5 every that many steps,
// at the end and when interrupted.
template <class T>
nlohmann::json run_case(const Case& c, Backend<T>& backend, const RunOptions& opts);

}  // namespace gf
