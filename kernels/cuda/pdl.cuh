// Programmatic dependent launch (Hopper and later): a kernel launched with
// it may be scheduled while the kernel before it in the stream finishes its
// last blocks, and waits (griddepcontrol.wait) for that kernel's completion
// and memory before it reads anything. The launch latency and the block
// dispatch of one step are then hidden behind the tail of the step before:
// what a step of a small grid (a few µs of memory traffic) loses to the gap
// between two kernels. GRIDFORGE_PDL=0 launches the ordinary way, `early`
// and `late` force either below (for measurement; the values are the same
// either way: kernels/device.hpp).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/griddep.cuh"
#include "kernels/device.hpp"

namespace gf {

// How a step of a field of `bytes` is launched (GRIDFORGE_PDL forces one way):
//  - Early, from 16 MiB a field: every block lets the next kernel be
//    scheduled as it starts, so the next step's blocks fill the SMs as this
//    step's last wave drains. Measured on an H100 (one-step kernels,
//    float32): 256³ heat 0.90 → 0.94 of copy bandwidth, 320 × 200 × 100
//    0.88 → 0.99, 2049² 0.97 → 1.14 (in L2), 4097² 0.86 → 0.90; 512³ and
//    513³ within 1 %.
//  - Late, below: a block lets it once its points are written. A grid of a
//    few MiB is one wave of blocks; scheduled early, the next step's blocks
//    sat on the SMs beside it (fields of 4-10 MiB ran 2-25 % slower than
//    ordinary launches) and then ran unevenly spread. Scheduled late, only
//    the launch's latency is hidden (a microbenchmark of the same march in
//    a CUDA graph, H100: 256 × 64 × 64 0.88 → 0.94 of copy, 1025² 0.92 →
//    1.00, against 0.96 and 0.64 scheduled early).
enum class Pdl { Off, Early, Late };

inline Pdl pdl_for(std::int64_t bytes) {
  switch (gpu_dependent_launch()) {
    case PdlPolicy::Off: return Pdl::Off;
    case PdlPolicy::Early: return Pdl::Early;
    case PdlPolicy::Late: return Pdl::Late;
    case PdlPolicy::Auto: break;
  }
  return bytes >= (std::int64_t(16) << 20) ? Pdl::Early : Pdl::Late;
}

// The launch configuration of a step: programmatic stream serialization
// allowed unless `mode` is Off (attr: its storage).
inline cudaLaunchConfig_t pdl_config(dim3 g, dim3 b, cudaStream_t s, Pdl mode,
                                     cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = g;
  cfg.blockDim = b;
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = mode != Pdl::Off ? 1 : 0;
  return cfg;
}

// kernel<<<g, b, 0, s>>>(args...), as pdl_config says; the kernel calls
// pdl_begin first either way.
template <class... KArgs, class... Args>
void launch_pdl(void (*kernel)(KArgs...), dim3 g, dim3 b, cudaStream_t s, Pdl mode,
                Args&&... args) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = pdl_config(g, b, s, mode, attr);
  GF_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

// The same for a kernel loaded at run time (NVRTC's), its arguments by address.
inline void launch_pdl(const void* kernel, dim3 g, dim3 b, cudaStream_t s, Pdl mode,
                       void** args) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = pdl_config(g, b, s, mode, attr);
  GF_CUDA_CHECK(cudaLaunchKernelExC(&cfg, kernel, args));
}

}  // namespace gf
