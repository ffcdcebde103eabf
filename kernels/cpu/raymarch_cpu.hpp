// The CPU reference loop of the raymarch: render_pixel at every pixel.
#pragma once
#include "kernels/ops/raymarch.hpp"

namespace gf {

// img: a.width·a.height RGBA floats, row 0 the top.
template <class T>
void raymarch_cpu(const RayArgs<T>& a, const T* volume, float* img);

}  // namespace gf
