// The CUDA executor of the ray marcher: one thread per pixel in 8×8 blocks
// (neighbouring rays walk neighbouring cells, so their samples share cache
// lines), render_pixel of raymarch_ops.hpp. This file is compiled without
// FMA contraction (--fmad=false, CMakeLists.txt) so that its arithmetic
// rounds as the CPU reference's does: isosurface silhouettes and early ray
// termination are yes/no decisions that one ulp can flip. The volume is read
// through plain loads, not texture filtering, whose 8-bit interpolation
// weights would differ from the CPU's too.
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/raymarch/raymarch_exec.hpp"

namespace gf {
namespace {

// 8×8 pixels per block; image sizes need not be multiples of 8.
constexpr int kTile = 8;

template <class T>
__global__ void raymarch_kernel(const RayArgs<T> a, const T* __restrict__ volume, Layout l,
                                float* __restrict__ img) {
  const int px = int(blockIdx.x) * kTile + int(threadIdx.x);
  const int py = int(blockIdx.y) * kTile + int(threadIdx.y);
  if (px >= a.width || py >= a.height) return;
  float out[4];
  render_pixel(a, FieldView<const T>(volume, l), px, py, out);
  float4* dst = reinterpret_cast<float4*>(img) + (std::int64_t(py) * a.width + px);
  *dst = make_float4(out[0], out[1], out[2], out[3]);
}

template <class T>
class RaymarchCuda final : public RaymarchExec<T> {
 public:
  explicit RaymarchCuda(CudaBackend<T>& be) : be_(be) {}
  void render(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img,
              const std::function<bool()>&) override {
    const dim3 block(kTile, kTile);
    const dim3 grid(unsigned((a.width + kTile - 1) / kTile),
                    unsigned((a.height + kTile - 1) / kTile));
    raymarch_kernel<T><<<grid, block, 0, be_.stream()>>>(a, volume.data(), volume.layout(),
                                                         img.data());
    GF_CUDA_CHECK_LAUNCH();
  }

 private:
  CudaBackend<T>& be_;
};

}  // namespace

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cuda(Backend<T>& be) {
  return std::make_unique<RaymarchCuda<T>>(cuda_core(be));
}
template std::unique_ptr<RaymarchExec<float>> make_raymarch_cuda<float>(Backend<float>&);
template std::unique_ptr<RaymarchExec<double>> make_raymarch_cuda<double>(Backend<double>&);

}  // namespace gf
