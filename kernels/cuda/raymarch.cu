#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/raymarch_kernels.cuh"

namespace gf {

namespace {

// 8×8 pixels per block: neighbouring rays walk neighbouring cells, so their
// samples share cache lines; image sizes need not be multiples of 8.
constexpr int kTile = 8;

template <class T>
__global__ void raymarch_kernel(const RayArgs<T> a, const T* __restrict__ volume,
                                float* __restrict__ img) {
  const int px = int(blockIdx.x) * kTile + int(threadIdx.x);
  const int py = int(blockIdx.y) * kTile + int(threadIdx.y);
  if (px >= a.width || py >= a.height) return;
  float out[4];
  render_pixel(a, volume, px, py, out);
  float4* dst = reinterpret_cast<float4*>(img) + (std::int64_t(py) * a.width + px);
  *dst = make_float4(out[0], out[1], out[2], out[3]);
}

}  // namespace

template <class T>
void launch_raymarch(const RayArgs<T>& a, const T* volume, float* img, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid(unsigned((a.width + kTile - 1) / kTile),
                  unsigned((a.height + kTile - 1) / kTile));
  raymarch_kernel<T><<<grid, block, 0, stream>>>(a, volume, img);
  GF_CUDA_CHECK_LAUNCH();
}

template void launch_raymarch<float>(const RayArgs<float>&, const float*, float*, cudaStream_t);
template void launch_raymarch<double>(const RayArgs<double>&, const double*, float*, cudaStream_t);

}  // namespace gf
