// The subcommands. Each returns an exit code or throws a gf::Error, which
// main() turns into a message and the exit code of SPEC §2.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gf::app {

struct RunArgs {
  std::string case_path;
  std::vector<std::string> overrides;
  std::optional<std::string> device;
  std::optional<std::string> out;
  std::optional<std::string> restart;  // checkpoint.h5 to continue from
  std::optional<std::string> time_block;  // heat.time_block or stencil.time_block
  std::optional<std::string> threads;     // --threads: the CPU path's most threads
  bool dry_run = false, quiet = false, json = false;
  bool overwrite = false;  // replace the files of another run in the output folder
  std::string command_line;
  std::string program;  // argv[0], for the command that continues the run
};
int cmd_run(const RunArgs& a);

struct ValidateArgs {
  std::string case_path;
  std::vector<std::string> overrides;
  std::optional<double> rtol, atol;
  std::optional<long long> steps;
  std::optional<std::string> time_block;  // heat.time_block or stencil.time_block
  std::optional<std::string> device;  // the GPU side: cuda | cuda:N
  std::optional<std::string> out;     // folder of validation.json
  std::optional<std::string> threads;  // --threads: the CPU side's most threads
  bool quiet = false, json = false;
};
int cmd_validate(const ValidateArgs& a);

struct BenchArgs {
  std::string workload = "heat";     // comma list, or all
  std::string dims = "3";            // comma list of 2, 3
  std::optional<std::string> sizes;  // points per axis, comma list; default per dims
  std::string precision = "float32"; // comma list
  std::optional<std::string> devices;  // default cpu,cuda (cpu when no GPU is usable)
  std::optional<long long> steps;    // timed steps a repetition; default auto
  int repeat = 5;                    // repetitions (the median is reported)
  std::optional<std::string> stencil;  // stencil preset; default star5 (2D) / star7 (3D)
  std::string time_block = "1";      // heat: comma list of explicit steps per pass
  std::string modes = "emission-absorption,mip,isosurface";  // raymarch rows
  std::string images = "1920x1080";  // raymarch rows: WxH, comma list
  std::optional<std::string> methods;  // poisson rows: comma list; default every method
  double max_seconds = 20;           // poisson rows: a row's solve budget
  double tolerance = 1e-8;           // poisson rows: laplace.tolerance
  std::string out = "out/bench";
  std::optional<std::string> threads;  // --threads: the CPU rows' most threads
  bool quiet = false, json = false;
  std::string command_line;
};
int cmd_bench(const BenchArgs& a);

struct CompareArgs {
  std::string a, b;  // fields.h5 files, or run folders holding one
  std::optional<double> rtol, atol;
  bool quiet = false, json = false;
};
int cmd_compare(const CompareArgs& a);

int cmd_info(bool json, const std::optional<std::string>& threads);

}  // namespace gf::app
