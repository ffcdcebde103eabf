// The CUDA executor of the raymarch: one thread per pixel, render_pixel of
// kernels/ops. Defined in raymarch.cu, which is compiled without FMA
// contraction (--fmad=false) so that its arithmetic rounds as the CPU
// reference's does: isosurface silhouettes and early ray termination are
// yes/no decisions that one ulp can flip.
#pragma once
#include <cuda_runtime.h>

#include "kernels/ops/raymarch.hpp"

namespace gf {

// img: a.width·a.height RGBA floats in device memory; volume: a.n points on
// the device. Asynchronous on `stream`; the launch is checked.
template <class T>
void launch_raymarch(const RayArgs<T>& a, const T* volume, float* img, cudaStream_t stream);

}  // namespace gf
