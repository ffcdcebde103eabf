// A channel of gridforge's 8-bit images (the PNGs), shared by the PNG
// encoder (io/png_encode.cpp) and the GPU's 8-bit download of in-situ frames
// (Backend::download_image_rgb8): both give the same bytes for a float image.
#pragma once
#include "core/hd.hpp"

namespace gf {

// x clamped to [0, 1] (NaN: 0) and rounded to the nearest of the levels 0-255:
// lround of c·255 (the float product plus a half is exact in double).
GF_HD unsigned char rgb8_level(float x) {
  const float c = x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
#if defined(__CUDA_ARCH__)
  const float p = __fmul_rn(c, 255.0f);  // rounded on its own, as on the host
#else
  const float p = c * 255.0f;
#endif
  return static_cast<unsigned char>(double(p) + 0.5);
}

}  // namespace gf
