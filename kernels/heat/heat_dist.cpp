// The heat executor over MPI ranks (kernels/dist/): the rank's executor on
// its padded block, the halo of every field written refreshed after each
// step (overlapped with the core's update where the step splits), passes
// of k steps over a halo k layers deep; and the factory of heat executors.
#include "kernels/exec.hpp"
#include "kernels/heat/heat_exec.hpp"

namespace gf {
namespace {

template <class T>
class HeatDist final : public HeatExec<T> {
 public:
  HeatDist(std::unique_ptr<HeatExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  void step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    be_.one_step(
        "explicit heat steps", in, out,
        [&](StepPart p) { return in_->step_part(a, in, out, be_.core(), p); },
        [&] { in_->step(a, in, out); });
  }
  int time_block(const HeatArgs<T>& a, const Layout& l, int asked) const override {
    return be_.blocked_depth(in_->time_block(be_.pass_args(a), l, asked));
  }
  void steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    be_.blocked(k, in, out, [&] { in_->steps(be_.pass_args(a), k, in, out); });
  }

 private:
  std::unique_ptr<HeatExec<T>> in_;
  DistributedBackend<T>& be_;
};

template <class T>
std::unique_ptr<HeatExec<T>> make_heat_dist(std::unique_ptr<HeatExec<T>> in,
                                            DistributedBackend<T>& be) {
  return std::make_unique<HeatDist<T>>(std::move(in), be);
}

}  // namespace

template <class T>
std::unique_ptr<HeatExec<T>> make_heat_exec(Backend<T>& be) {
  return make_exec<HeatExec<T>, T>(
      be, {make_heat_cpu<T>, GF_CUDA_MAKER(make_heat_cuda<T>), make_heat_dist<T>});
}
template std::unique_ptr<HeatExec<float>> make_heat_exec<float>(Backend<float>&);
template std::unique_ptr<HeatExec<double>> make_heat_exec<double>(Backend<double>&);

}  // namespace gf
