// The ray marcher's march through a 3D texture (raymarch_kernel.cuh says why
// it is a file of its own): the hardware's trilinear filtering of a float
// volume, texel centres at i + 0.5, clamped addressing (the faces repeat, as
// the software sampler's clamp does).
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/raymarch/raymarch_kernel.cuh"

namespace gf {
namespace {

struct TexSampler {
  cudaTextureObject_t tex;
  __device__ float operator()(const float u[3]) const {
    return tex3D<float>(tex, u[0] + 0.5f, u[1] + 0.5f, u[2] + 0.5f);
  }
};

}  // namespace

void launch_texture_march(const RayArgs<float>& a, cudaTextureObject_t tex, const Layout& l,
                          const Bricks<float>& br, float* img, bool skip, dim3 grid, dim3 block,
                          cudaStream_t stream) {
  const TexSampler s{tex};
  if (skip)
    raymarch_kernel<float, std::int32_t, TexSampler, true><<<grid, block, 0, stream>>>(a, s, l, br,
                                                                                       img);
  else
    raymarch_kernel<float, std::int32_t, TexSampler, false><<<grid, block, 0, stream>>>(a, s, l,
                                                                                        br, img);
  GF_CUDA_CHECK_LAUNCH();
}

}  // namespace gf
