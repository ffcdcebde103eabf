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

// cuSPARSE and cuFFT return their own status types; the same rule applies.
#include <cufft.h>
#include <cusparse.h>

#define GF_CUSPARSE_CHECK(call)                                                          \
  do {                                                                                   \
    cusparseStatus_t gf_st_ = (call);                                                    \
    if (gf_st_ != CUSPARSE_STATUS_SUCCESS)                                               \
      throw ::gf::DeviceError(std::string("cuSPARSE error in ") + #call + " (" +         \
                              __FILE__ + ":" + std::to_string(__LINE__) + "): " +        \
                              cusparseGetErrorString(gf_st_));                           \
  } while (0)

namespace gf {
inline const char* cufft_error_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED (out of device memory)";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cuFFT error";
  }
}
}  // namespace gf

#define GF_CUFFT_CHECK(call)                                                             \
  do {                                                                                   \
    cufftResult gf_fr_ = (call);                                                         \
    if (gf_fr_ != CUFFT_SUCCESS)                                                         \
      throw ::gf::DeviceError(std::string("cuFFT error in ") + #call + " (" + __FILE__ + \
                              ":" + std::to_string(__LINE__) + "): " +                  \
                              ::gf::cufft_error_name(gf_fr_) + " (" +                    \
                              std::to_string(int(gf_fr_)) + ")");                        \
  } while (0)
