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
  // The reductions give (i, j, k) without a division a point. Off the faces
  // mg_residual_point's formula on the neighbours read directly, W = 1.
  __device__ double at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) const {
    if (lap_interior<D>(u.n, i, j, k)) {
      double m[3], p[3];
      gather_interior<D>(static_cast<const Layout&>(u), u.p, idx, m, p);
      const double r = mg_residual_formula<D>(a, u[idx], m, p, rhs_at(a, idx));
      return mixed_defect_term(r, 1.0, s, d(i, j, k));
    }
    return mixed_defect_point<D>(a, u, i, j, k, s, d(i, j, k));
  }
};

// u += e/s, two points of a row a thread. Vec: a double2 of u and a float2
// of e, for rows of an even number of values starting on 16-byte (u) and
// 8-byte (e) boundaries, as the padded GPU fields' are; else (dense rows of
// an odd length) the two points one by one. I: the index type (32 bits below
// 2³¹ values). One point a thread with 64-bit indices took 1.3 ms at 513³ on
// an H100, 0.69 of the copy bandwidth.
template <class I, bool Vec>
__global__ void __launch_bounds__(256) correct_pairs_kernel(FieldView<const float> e, double inv_s,
                                                            FieldView<double> u) {
  const I nx = I(u.n[0]), ny = I(u.n[1]), nz = I(u.n[2]);
  const I i = 2 * (I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x));
  if (i >= nx) return;
  for (I k = I(blockIdx.z); k < nz; k += I(gridDim.z))
    for (I j = I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y); j < ny;
         j += I(gridDim.y) * I(blockDim.y)) {
      double* up = u.p + u.template index_as<I>(i, j, k);
      const float* ep = e.p + e.template index_as<I>(i, j, k);
      if (Vec && i + 1 < nx) {
        double2 uv = *reinterpret_cast<const double2*>(up);
        const float2 ev = *reinterpret_cast<const float2*>(ep);
        uv.x = mixed_corrected(uv.x, ev.x, inv_s);
        uv.y = mixed_corrected(uv.y, ev.y, inv_s);
        *reinterpret_cast<double2*>(up) = uv;
      } else {
        up[0] = mixed_corrected(up[0], ep[0], inv_s);
        if (i + 1 < nx) up[1] = mixed_corrected(up[1], ep[1], inv_s);
      }
    }
}

class MixedCuda final : public MixedExec {
 public:
  explicit MixedCuda(CudaBackend<double>& be) : be_(be) {}
  double defect(const LaplaceArgs<double>& a, const Field<double>& u, double s,
                Field<float>& d, bool decides) override {
    double sum = 0;
    const auto run = [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      const DefectFn<D> fn{a, u.view(), d.view(), s};
      sum = decides ? be_.reduce_field_tiles(fn, u.grid(), u.layout())
                    : be_.reduce_field(fn, u.grid(), u.layout());
    };
    if (a.ndim == 1) run(std::integral_constant<int, 1>{});
    else if (a.ndim == 2) run(std::integral_constant<int, 2>{});
    else run(std::integral_constant<int, 3>{});
    return sum;
  }
  void correct(const Field<float>& e, double s, Field<double>& u) override {
    dim3 grid, block;
    const Layout& lu = u.layout();
    const Layout& le = e.layout();
    const auto at = [](const void* p, std::uintptr_t b) {
      return reinterpret_cast<std::uintptr_t>(p) % b == 0;
    };
    const bool vec = lu.sy % 2 == 0 && lu.sz % 2 == 0 && le.sy % 2 == 0 && le.sz % 2 == 0 &&
                     at(u.data(), 16) && at(e.data(), 8);
    const bool i32 = lu.span() < (std::int64_t(1) << 31) && le.span() < (std::int64_t(1) << 31);
    const std::int64_t pairs[3] = {(lu.n[0] + 1) / 2, lu.n[1], lu.n[2]};
    point_launch(u.grid().ndim, pairs, grid, block);
    const auto launch = [&](auto kernel) {
      kernel<<<grid, block, 0, be_.stream()>>>(e.view(), 1.0 / s, u.view());
    };
    if (i32)
      vec ? launch(correct_pairs_kernel<std::int32_t, true>)
          : launch(correct_pairs_kernel<std::int32_t, false>);
    else
      vec ? launch(correct_pairs_kernel<std::int64_t, true>)
          : launch(correct_pairs_kernel<std::int64_t, false>);
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
