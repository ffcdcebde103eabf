// GF_HD marks code shared by host and device: __host__ __device__ under nvcc,
// nothing under a plain C++ compiler. It sits in core/ because every floor
// uses it: the field view (grid/view.hpp) as much as the point formulas
// (kernels/ops).
#pragma once

#if defined(__CUDACC__)
#define GF_HD __host__ __device__ __forceinline__
#else
#define GF_HD inline
#endif
