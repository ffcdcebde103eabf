// 16 bytes of T as one vector type: the widest load and store a thread can
// issue, used by the kernels that move whole rows (heat, Jacobi, the pde
// march: this header is part of the pde kernels NVRTC compiles, whose
// built-in vector types stand in for <cuda_runtime.h>).
#pragma once
#include <cuda_runtime.h>

namespace gf {

template <class T>
struct Vec16;  // 16 bytes of T, loaded and stored as one access
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int n = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int n = 2;
};

}  // namespace gf
