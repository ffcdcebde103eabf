// The stencil executor over MPI ranks (kernels/dist/), and the factory of
// stencil executors.
#include "kernels/exec.hpp"
#include "kernels/stencil/stencil_exec.hpp"

namespace gf {
namespace {

template <class T>
class StencilDist final : public StencilExec<T> {
 public:
  StencilDist(std::unique_ptr<StencilExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  void set_taps(const std::vector<StencilTap<T>>& taps) override { in_->set_taps(taps); }
  void step(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    be_.one_step(
        "stencil steps", in, out,
        [&](StepPart p) { return in_->step_part(a, in, out, be_.core(), p); },
        [&] { in_->step(a, in, out); });
  }
  int time_block(const StencilArgs<T>& a, const Layout& l, int asked) const override {
    return be_.blocked_depth(in_->time_block(be_.pass_args(a), l, asked));
  }
  void steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    be_.blocked(k, in, out, [&] { in_->steps(be_.pass_args(a), k, in, out); });
  }

 private:
  std::unique_ptr<StencilExec<T>> in_;
  DistributedBackend<T>& be_;
};

template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_dist(std::unique_ptr<StencilExec<T>> in,
                                                  DistributedBackend<T>& be) {
  return std::make_unique<StencilDist<T>>(std::move(in), be);
}

}  // namespace

template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_exec(Backend<T>& be) {
  return make_exec<StencilExec<T>, T>(
      be, {make_stencil_cpu<T>, GF_CUDA_MAKER(make_stencil_cuda<T>), make_stencil_dist<T>});
}
template std::unique_ptr<StencilExec<float>> make_stencil_exec<float>(Backend<float>&);
template std::unique_ptr<StencilExec<double>> make_stencil_exec<double>(Backend<double>&);

}  // namespace gf
