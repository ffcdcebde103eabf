// The device side of programmatic dependent launch (kernels/cuda/pdl.cuh
// launches): the waits and triggers a kernel makes. Device code with no
// includes: also part of the pde kernels NVRTC compiles.
#pragma once

namespace gf {

// Called first by every thread of a march launched with launch_pdl: waits
// for the kernel before this one (its completion and its memory); unless
// `late`, then lets the next kernel be scheduled once every block of this
// one is past here. No-ops in a kernel launched the ordinary way.
__device__ __forceinline__ void pdl_begin(bool late) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (!late) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Called last by a thread whose march began pdl_begin(late): with `late`,
// lets the next kernel be scheduled once every block is here (or done).
__device__ __forceinline__ void pdl_end(bool late) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (late) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
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

}  // namespace gf
