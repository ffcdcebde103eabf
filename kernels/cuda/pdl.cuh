// Programmatic dependent launch (Hopper and later): a kernel launched with
// it may be scheduled while the kernel before it in the stream finishes its
// last blocks, and waits (griddepcontrol.wait) for that kernel's completion
// and memory before it reads anything. The launch latency and the block
// dispatch of one step are then hidden behind the tail of the step before:
// what a step of a small grid (a few µs of memory traffic) loses to the gap
// between two kernels. GRIDFORGE_PDL=0 launches the ordinary way (for
// measurement; the values are the same either way: kernels/device.hpp).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device.hpp"

namespace gf {

inline bool pdl_enabled() { return gpu_dependent_launch(); }

// Whether a step over a field of `bytes` takes the dependent launch: from
// 16 MiB a field. Measured on an H100 (one-step kernels, float32): 256³
// heat 0.90 → 0.94 of copy bandwidth, 320 × 200 × 100 0.88 → 0.99, 2049²
// 0.97 → 1.14 (in L2), 4097² 0.86 → 0.90; 512³ and 513³ within 1 %. Below,
// fields of 4-10 MiB (256 × 64 × 64 to 384 × 96 × 64, 1025²) ran 2-25 %
// slower with it: the whole grid is one wave, and the next step's blocks
// then wait on the SMs beside it.
inline bool pdl_pays(std::int64_t bytes) {
  return pdl_enabled() && bytes >= (std::int64_t(16) << 20);
}

// Called first by every thread of a kernel launched with launch_pdl: waits
// for the kernel before this one (its completion and its memory), then lets
// the next kernel be scheduled once every block of this one is past here.
// Both are no-ops in a kernel launched the ordinary way.
__device__ __forceinline__ void pdl_begin() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The wait alone: a kernel that needs nothing of the kernel before it (the
// faces of a step, launched after the step's march) calls it last, so that
// its own completion means the march's too.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// kernel<<<g, b, 0, s>>>(args...), with programmatic stream serialization
// allowed when `dependent`; the kernel calls pdl_begin() first either way.
template <class... KArgs, class... Args>
void launch_pdl(void (*kernel)(KArgs...), dim3 g, dim3 b, cudaStream_t s, bool dependent,
                Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = g;
  cfg.blockDim = b;
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = dependent ? 1 : 0;
  GF_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace gf
