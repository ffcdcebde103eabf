// GF_HD marks the point formulas shared by the CPU reference executor and the
// CUDA kernels: __host__ __device__ under nvcc, nothing under a C++ compiler.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define GF_HD __host__ __device__ __forceinline__
#else
#define GF_HD inline
#endif
