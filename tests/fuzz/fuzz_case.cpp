// libFuzzer target over the case loader and validator (io/ + core/ only).
// Every input must either load or be refused with a gf::CaseError; anything
// else (another exception, a crash, a sanitizer report, a leak, a hang) is a
// bug. Input format: fuzz_input.hpp. How to run: tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Relative initial.file paths resolve against the bad-case folder, as in
  // the seeds (../cases/heat2d.yaml and the like).
  gf::fuzz::load_input(std::string_view(reinterpret_cast<const char*>(data), size),
                       GF_SOURCE_DIR "/tests/data/bad_cases");
  return 0;
}
