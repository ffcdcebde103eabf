// The expressions' executor over MPI ranks (kernels/dist/): the rank's own
// executor fills its padded block, each point from its global index (the
// grid's offset: ExprPoints), then the field's whole halo is refreshed as
// after an upload; and the factory of expression executors.
#include "kernels/exec.hpp"
#include "kernels/expr/expr_exec.hpp"

namespace gf {
namespace {

template <class T>
class ExprDist final : public ExprExec<T> {
 public:
  ExprDist(std::unique_ptr<ExprExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  std::vector<std::int64_t> fill(const std::vector<ExprPart>& parts, const ExprPoints& at,
                                 Field<T>& out) override {
    std::vector<std::int64_t> bad = in_->fill(parts, at, out);
    be_.refresh_whole(out);
    return bad;
  }

 private:
  std::unique_ptr<ExprExec<T>> in_;
  DistributedBackend<T>& be_;
};

template <class T>
std::unique_ptr<ExprExec<T>> make_expr_dist(std::unique_ptr<ExprExec<T>> in,
                                            DistributedBackend<T>& be) {
  return std::make_unique<ExprDist<T>>(std::move(in), be);
}

}  // namespace

template <class T>
std::unique_ptr<ExprExec<T>> make_expr_exec(Backend<T>& be) {
  return make_exec<ExprExec<T>, T>(
      be, {make_expr_cpu<T>, GF_CUDA_MAKER(make_expr_cuda<T>), make_expr_dist<T>});
}
template std::unique_ptr<ExprExec<float>> make_expr_exec<float>(Backend<float>&);
template std::unique_ptr<ExprExec<double>> make_expr_exec<double>(Backend<double>&);

}  // namespace gf
