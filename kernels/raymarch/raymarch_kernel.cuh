// The march kernel of the CUDA ray marcher, shared by its two files:
// raymarch_cuda.cu (the executor, the software trilinear sampler, compiled
// without FMA contraction so that it rounds as the CPU reference does) and
// raymarch_texture_cuda.cu (the texture sampler, whose 8-bit filter weights
// already part it from the CPU's images by more than round-off, compiled
// with contraction: fewer instructions a sample).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/raymarch/raymarch_ops.hpp"
#include "kernels/raymarch/raymarch_skip.hpp"

namespace gf {

// One thread a pixel, a block a tile of pixels.
template <class T, class I, class S, bool SKIP>
__global__ void raymarch_kernel(const RayArgs<T> a, const S sample, const Layout l,
                                const Bricks<T> br, float* __restrict__ img) {
  const int px = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int py = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (px >= a.width || py >= a.height) return;
  float out[4];
  if constexpr (SKIP)
    render_pixel_skip<T, I>(a, sample, l, br, px, py, out);
  else
    render_pixel(a, sample, l, px, py, out);
  float4* dst = reinterpret_cast<float4*>(img) + (std::int64_t(py) * a.width + px);
  *dst = make_float4(out[0], out[1], out[2], out[3]);
}

// The tiles of block's size that cover the image.
template <class T>
dim3 march_grid(const RayArgs<T>& a, dim3 block) {
  return dim3(unsigned((a.width + int(block.x) - 1) / int(block.x)),
              unsigned((a.height + int(block.y) - 1) / int(block.y)));
}

// The march of a float32 volume in a 3D texture (raymarch_texture_cuda.cu),
// 32-bit indices, on `stream`.
void launch_texture_march(const RayArgs<float>& a, cudaTextureObject_t tex, const Layout& l,
                          const Bricks<float>& br, float* img, bool skip, dim3 grid, dim3 block,
                          cudaStream_t stream);

}  // namespace gf
