// Shared by the subcommands: logging set-up, device choice, precision dispatch.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/case.hpp"
#include "kernels/backend.hpp"

namespace gf::app {

// Logs go to stderr; quiet keeps errors only.
void setup_logging(bool quiet);

// What `--device` / the case key `device` asks for, resolved: -1 is the CPU.
struct DeviceChoice {
  int gpu = -1;
  std::string why;  // how it was chosen, for the log
};
// auto | cpu | cuda | cuda:N. Throws DeviceError when a GPU is asked for and
// none is usable, UsageError for a malformed name.
DeviceChoice choose_device(const std::string& request);
// What to say after "'X' is not a device name": "; use cuda or cuda:N" for
// gpu, gpu:N; "; did you mean 'cuda'?" for a typo; else "".
std::string device_name_hint(const std::string& request);

// Where tables go: stdout, or stderr when stdout carries --json.
std::ostream& table_out();
void set_json_stdout(bool json);
// One --json summary on stdout; an IoError (exit 1) when stdout refuses it.
void print_json_summary(const nlohmann::json& j);

template <class T>
std::unique_ptr<Backend<T>> make_backend(const DeviceChoice& d);

// The command line as typed, for run.json.
std::string joined_command_line(int argc, char** argv);

// ISO 8601 local time with offset.
std::string now_iso8601();

std::string human_bytes(double bytes);

// How far `got` is from `ref` (SPEC §2): the max abs difference and the
// relative L2 error ‖got − ref‖₂ / max(‖ref‖₂, floor); a NaN anywhere makes
// both infinite. validate and compare share it.
struct FieldDiff {
  double max_abs = 0, rel_l2 = 0;
};
template <class T>
FieldDiff field_diff(const std::vector<T>& got, const std::vector<T>& ref,
                     double floor = std::numeric_limits<T>::min()) {
  double num = 0, den = 0, mx = 0;
  bool nan = false;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double c = ref[i], g = got[i], d = std::fabs(g - c);
    if (std::isnan(d)) nan = true;
    mx = std::max(mx, d);
    num += d * d;
    den += c * c;
  }
  if (nan) return {INFINITY, INFINITY};
  return {mx, std::sqrt(num) / std::max(std::sqrt(den), floor)};
}

// --threads N (run, validate, bench, info): the most threads the CPU path
// takes, for this process (OpenMP's omp_set_num_threads; without it,
// OMP_NUM_THREADS or one per core). A loop takes fewer on a small grid
// (core/threads.hpp). A UsageError (exit 2) for anything but a whole
// number from 1 to kMaxThreads.
inline constexpr int kMaxThreads = 4096;
void apply_threads(const std::optional<std::string>& threads);
// {"max": the most threads, "from": "--threads", "OMP_NUM_THREADS" or
// "cores"}: for run.json, bench.json and info.
nlohmann::json threads_json(const std::optional<std::string>& threads);

// The case with its overrides and, when given, --time-block as the override
// heat.time_block=VALUE or stencil.time_block=VALUE (a UsageError for a case
// of another workload), prepared for the solvers (solvers/prepare.hpp)
// unless `prepare` is false (run checks memory first: the preparation may
// evaluate expressions over the whole grid).
// `text`, when given, is the case itself (a checkpoint's), `path` its label.
Case load_case_with(const std::string& path, std::vector<std::string> overrides,
                    const std::optional<std::string>& time_block, bool prepare = true,
                    const std::string* text = nullptr);

}  // namespace gf::app
