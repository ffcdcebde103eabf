// gridforge info: what this build is and what it can run on.
#include <omp.h>

#include <iostream>

#include <fmt/core.h>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "gf_version.hpp"
#include "io/versions.hpp"
#include "kernels/device.hpp"

namespace gf::app {

namespace {
std::string cuda_version_str(int v) {
  if (v <= 0) return "none";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}
}  // namespace

int cmd_info(bool json, const std::optional<std::string>& threads) {
  const CudaStatus& st = cuda_status();
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuInfo& g : st.gpus)
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_capability", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
                    {"multiprocessors", g.multiprocessors},
                    {"memory_total_bytes", g.memory_total},
                    {"memory_free_bytes", g.memory_free}});
  nlohmann::json j = {
      {"version", GF_VERSION},
      {"git_commit", GF_GIT_COMMIT},
      {"build_type", GF_BUILD_TYPE},
      {"compiler", GF_COMPILER},
      {"cuda_compiled", st.compiled},
      {"cuda_runtime", cuda_version_str(st.runtime_version)},
      {"cuda_driver", cuda_version_str(st.driver_version)},
      {"gpus", gpus},
      {"gpu_unusable_reason", st.why_unusable},
      {"cpu_threads", omp_get_max_threads()},
      {"cpu_threads_from", threads_json(threads)["from"]},
      {"libraries", io::library_versions()},
  };
  if (json) {
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::cout << fmt::format("gridforge {} (commit {}, {} build, {})\n", GF_VERSION, GF_GIT_COMMIT,
                           GF_BUILD_TYPE, GF_COMPILER);
  std::cout << fmt::format("CUDA: {}; runtime {}, driver {}\n",
                           st.compiled ? "compiled in" : "not compiled in",
                           cuda_version_str(st.runtime_version),
                           cuda_version_str(st.driver_version));
  if (st.gpus.empty()) std::cout << "GPUs: none usable (" << st.why_unusable << ")\n";
  for (const GpuInfo& g : st.gpus)
    std::cout << fmt::format("GPU {}: {}, compute capability {}.{}, {} multiprocessors, "
                             "{:.1f} GiB total, {:.1f} GiB free\n",
                             g.index, g.name, g.cc_major, g.cc_minor, g.multiprocessors,
                             g.memory_total / 1073741824.0, g.memory_free / 1073741824.0);
  std::cout << fmt::format("CPU threads: {} (from {}; small grids take fewer)\n",
                           omp_get_max_threads(), j["cpu_threads_from"].get<std::string>());
  const auto& lib = j["libraries"];
  std::cout << fmt::format("HDF5 {}, VTK {}, yaml-cpp {}\n", lib["hdf5"].get<std::string>(),
                           lib["vtk"].get<std::string>(), lib["yaml-cpp"].get<std::string>());
  return 0;
}

}  // namespace gf::app
