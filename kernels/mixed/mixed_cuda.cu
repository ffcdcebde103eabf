// The CUDA kernels of mixed-precision refinement (mixed_ops.hpp): the defect
// as a term of the float64 backend's deterministic reduction, the
// correction one thread a point; both on the float64 backend's stream.
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/laplace/laplace_kernels.cuh"
#include "kernels/mixed/mixed_exec.hpp"

namespace gf {
namespace {

template <int D>
struct DefectFn {
  LaplaceArgs<double> a;
  FieldView<const double> u;
  FieldView<float> d;
  double s;
  __device__ double operator()(std::int64_t idx) const {
    std::int64_t i, j, k;
    u.locate(idx, i, j, k);
    if (i >= u.n[0]) return 0.0;  // a padded row's padding
    return mixed_defect_point<D>(a, u, i, j, k, s, d(i, j, k));
  }
};

__global__ void __launch_bounds__(256) correct_kernel(FieldView<const float> e, double inv_s,
                                                      FieldView<double> u) {
  const std::int64_t nx = u.n[0], ny = u.n[1], nz = u.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      const std::int64_t idx = u.index(i, j, k);
      u[idx] = mixed_corrected(u[idx], e(i, j, k), inv_s);
    }
}

class MixedCuda final : public MixedExec {
 public:
  explicit MixedCuda(CudaBackend<double>& be) : be_(be) {}
  double defect(const LaplaceArgs<double>& a, const Field<double>& u, double s,
                Field<float>& d) override {
    double sum = 0;
    const auto run = [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      sum = be_.reduce_field(DefectFn<D>{a, u.view(), d.view(), s}, u.grid(), u.layout());
    };
    if (a.ndim == 1) run(std::integral_constant<int, 1>{});
    else if (a.ndim == 2) run(std::integral_constant<int, 2>{});
    else run(std::integral_constant<int, 3>{});
    return sum;
  }
  void correct(const Field<float>& e, double s, Field<double>& u) override {
    dim3 grid, block;
    point_launch(u.grid().ndim, u.layout().n, grid, block);
    correct_kernel<<<grid, block, 0, be_.stream()>>>(e.view(), 1.0 / s, u.view());
    GF_CUDA_CHECK_LAUNCH();
  }

 private:
  CudaBackend<double>& be_;
};

}  // namespace

std::unique_ptr<MixedExec> make_mixed_cuda(Backend<double>& be) {
  return std::make_unique<MixedCuda>(cuda_core(be));
}

}  // namespace gf
