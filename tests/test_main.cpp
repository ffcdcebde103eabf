// Catch2 runner: a run of the [gpu] tests on a machine without a usable GPU
// says why and exits 77, which ctest reports as skipped (not as passed).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "kernels/device.hpp"

int main(int argc, char** argv) {
  bool gpu_only = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("[gpu]", 0) == 0) gpu_only = true;  // "[gpu]", "[gpu]~[oom]"
  if (gpu_only && !gf::cuda_status().why_unusable.empty()) {
    std::printf("[gpu] tests skipped: %s\n", gf::cuda_status().why_unusable.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
