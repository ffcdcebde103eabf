// The CPU loops of mixed-precision refinement (mixed_ops.hpp), and the
// factory of mixed executors.
#include <stdexcept>

#include "kernels/cpu/loops.hpp"
#include "kernels/exec.hpp"
#include "kernels/mixed/mixed_exec.hpp"

namespace gf {
namespace {

using namespace cpu;

class MixedCpu final : public MixedExec {
 public:
  double defect(const LaplaceArgs<double>& a, const Field<double>& u, double s,
                Field<float>& d, bool /*decides: one order here*/) override {
    const FieldView<const double> uv = u.view();
    const FieldView<float> dv = d.view();
    double sum = 0;
    by_dim(a.ndim, [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      sum = sum_points(uv, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        return mixed_defect_point<D>(a, uv, i, j, k, s, dv(i, j, k));
      });
    });
    return sum;
  }
  void correct(const Field<float>& e, double s, Field<double>& u) override {
    const FieldView<const float> ev = e.view();
    const FieldView<double> uv = u.view();
    const double inv_s = 1.0 / s;
    for_each_point(uv, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
      uv[idx] = mixed_corrected(uv[idx], ev(i, j, k), inv_s);
    });
  }
};

std::unique_ptr<MixedExec> make_mixed_dist(std::unique_ptr<MixedExec>, DistributedBackend<double>&) {
  throw std::logic_error("mixed precision on several ranks (laplace_check_ranks refuses multigrid)");
}

}  // namespace

std::unique_ptr<MixedExec> make_mixed_cpu(Backend<double>&) { return std::make_unique<MixedCpu>(); }

std::unique_ptr<MixedExec> make_mixed_exec(Backend<double>& be) {
  return make_exec<MixedExec, double>(
      be, {make_mixed_cpu, GF_CUDA_MAKER(make_mixed_cuda), make_mixed_dist});
}

}  // namespace gf
