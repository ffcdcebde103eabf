// Every CUDA call and every kernel launch is checked; a failure becomes a
// gf::DeviceError naming the call and where it was made.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

#define GF_CUDA_CHECK(call)                                                              \
  do {                                                                                   \
    cudaError_t gf_err_ = (call);                                                        \
    if (gf_err_ != cudaSuccess)                                                          \
      throw ::gf::DeviceError(std::string("CUDA error in ") + #call + " (" + __FILE__ +  \
                              ":" + std::to_string(__LINE__) + "): " +                  \
                              cudaGetErrorString(gf_err_));                              \
  } while (0)

#define GF_CUDA_CHECK_LAUNCH() GF_CUDA_CHECK(cudaGetLastError())
