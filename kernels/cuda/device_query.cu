// Which GPUs are usable, and why not when none is.
#include <cuda_runtime.h>

#include <string>

#include "kernels/device.hpp"

namespace gf {

const CudaStatus& cuda_status() {
  static const CudaStatus status = [] {
    CudaStatus s;
    s.compiled = true;
    cudaRuntimeGetVersion(&s.runtime_version);
    cudaDriverGetVersion(&s.driver_version);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      if (s.driver_version == 0 || err == cudaErrorNoDevice)
        s.why_unusable = "no CUDA device found (no NVIDIA driver or GPU on this machine)";
      else if (err == cudaErrorInsufficientDriver)
        s.why_unusable = "the CUDA driver (" + std::to_string(s.driver_version) +
                         ") is older than the runtime (" + std::to_string(s.runtime_version) + ")";
      else
        s.why_unusable = std::string("CUDA could not be initialised: ") + cudaGetErrorString(err);
      cudaGetLastError();
      return s;
    }
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
      GpuInfo g;
      g.index = i;
      g.name = p.name;
      g.cc_major = p.major;
      g.cc_minor = p.minor;
      g.multiprocessors = p.multiProcessorCount;
      g.memory_total = p.totalGlobalMem;
      if (cudaSetDevice(i) == cudaSuccess) cudaMemGetInfo(&g.memory_free, &g.memory_total);
      s.gpus.push_back(g);
    }
    if (s.gpus.empty()) s.why_unusable = "no CUDA device found";
    return s;
  }();
  return status;
}

}  // namespace gf
