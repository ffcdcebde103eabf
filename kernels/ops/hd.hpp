// What the point formulas share: GF_HD (core/hd.hpp) and products rounded on
// their own (mul_rn).
#pragma once
#include <cstdint>

#include "core/hd.hpp"

namespace gf {

// a·b rounded on its own. nvcc contracts a product and a sum into one fused
// multiply-add where it sees fit, differently in different kernels; a formula
// whose products go through mul_rn rounds the same way in every kernel that
// calls it (and as the CPU, which fuses nothing at -O2 on x86-64), so that
// two executions of it, e.g. temporally blocked and one step at a time,
// agree to the bit.
template <class T>
GF_HD T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return __fmul_rn(a, b);
  else
    return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// a·b + c, fused (one rounding) on the GPU: a formula that writes its
// fusions out this way rounds the same in every kernel, as with mul_rn, and
// costs one instruction where mul_rn's product and sum cost two. The CPU
// computes a·b + c with two roundings (x86-64 without -mfma has no fused
// instruction, and std::fma would be a library call there), so the CPU and
// the GPU differ in the last bit; validate's tolerances allow it.
template <class T>
GF_HD T fma_rn(T a, T b, T c) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return __fmaf_rn(a, b, c);
  else
    return __fma_rn(a, b, c);
#else
  return a * b + c;
#endif
}

}  // namespace gf
