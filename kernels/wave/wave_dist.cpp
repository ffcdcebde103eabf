// The wave executor over MPI ranks (kernels/dist/): the rank's executor on
// its padded block, the halo of the level written refreshed after each step
// (overlapped with the core's update where the step splits); and the
// factory of wave executors. The earlier level (WaveArgs::w) is read at a
// point's own index only, so its halo needs nothing.
#include "kernels/exec.hpp"
#include "kernels/wave/wave_exec.hpp"

namespace gf {
namespace {

template <class T>
class WaveDist final : public WaveExec<T> {
 public:
  WaveDist(std::unique_ptr<WaveExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  void step(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out) override {
    be_.one_step(
        "wave steps", u, out,
        [&](StepPart p) { return in_->step_part(a, u, out, be_.core(), p); },
        [&] { in_->step(a, u, out); });
  }

 private:
  std::unique_ptr<WaveExec<T>> in_;
  DistributedBackend<T>& be_;
};

template <class T>
std::unique_ptr<WaveExec<T>> make_wave_dist(std::unique_ptr<WaveExec<T>> in,
                                            DistributedBackend<T>& be) {
  return std::make_unique<WaveDist<T>>(std::move(in), be);
}

}  // namespace

template <class T>
std::unique_ptr<WaveExec<T>> make_wave_exec(Backend<T>& be) {
  return make_exec<WaveExec<T>, T>(
      be, {make_wave_cpu<T>, GF_CUDA_MAKER(make_wave_cuda<T>), make_wave_dist<T>});
}
template std::unique_ptr<WaveExec<float>> make_wave_exec<float>(Backend<float>&);
template std::unique_ptr<WaveExec<double>> make_wave_exec<double>(Backend<double>&);

}  // namespace gf
