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
  bool dry_run = false, quiet = false, json = false;
  std::string command_line;
};
int cmd_run(const RunArgs& a);

struct ValidateArgs {
  std::string case_path;
  std::vector<std::string> overrides;
  std::optional<double> rtol, atol;
  std::optional<long long> steps;
  bool quiet = false;
};
int cmd_validate(const ValidateArgs& a);

int cmd_info(bool json);

}  // namespace gf::app
