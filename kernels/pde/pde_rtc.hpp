// Compiling a pde stage kernel at run time (NVRTC) and the cache of compiled
// kernels (pde_cuda.cu): host declarations, so tests can compile a program's
// source without a GPU.
#pragma once
#include <filesystem>
#include <string>

namespace gf {

struct RtcBinary {
  std::string image;     // CUBIN (or PTX for a GPU newer than NVRTC knows)
  bool ptx = false;
  std::string key;       // the cache key: pde-<hash>-sm_XX
  bool cached = false;   // read from the cache
  std::string where;     // the cache file ("" when none)
  double compile_s = 0;  // NVRTC's time (0 when cached)
};

// The source compiled for compute capability `arch` (e.g. 90), through the
// cache. Throws std::logic_error with NVRTC's log when it does not compile
// (the generated code is at fault, not the case) and DeviceError when NVRTC
// fails otherwise.
RtcBinary pde_rtc_compile(const std::string& source, int arch);

// Where compiled kernels are kept: GRIDFORGE_KERNEL_CACHE (0: nowhere), else
// $XDG_CACHE_HOME/gridforge/kernels, else ~/.cache/gridforge/kernels.
std::filesystem::path pde_kernel_cache_dir();

}  // namespace gf
