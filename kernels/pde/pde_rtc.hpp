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

// Whether the pde march of values of elem_bytes on the current device asks
// L2 for the plane after the next (pde_kernel_source's prefetch):
// GRIDFORGE_PDE_PREFETCH where set, else yes but for float32 on a device
// whose DRAM peaks at kPdeNoPrefetchDram or more. Measured (Gray–Scott,
// forward Euler, one step, session 22, bytes a second against the prefetch):
// on an H200 (4.8e12 peak) float32 without it moved 5-9 % more at every size
// from 257³ to 513³ and on 1025 × 129 × 65, 289 × 203 × 177 and 449 × 97 × 130
// (fraction of copy bandwidth: 512³ 0.81 → 0.89, 257³ 0.70 → 0.74); float64
// up to 5 % less (257³). On an H100 (3.35e12) the prefetch was 0.91 against
// 0.84 at 512³ float32 (an earlier march; not measured again since).
inline constexpr double kPdeNoPrefetchDram = 4e12;
bool pde_march_prefetch(int elem_bytes);

}  // namespace gf
