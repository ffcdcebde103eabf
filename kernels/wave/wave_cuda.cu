// The CUDA executor of the wave step: the marches with WaveOp
// (wave_kernels.cuh) and steps split for the overlapped halo exchange
// (kernels/cuda/part_kernels.cuh).
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/cuda/part_kernels.cuh"
#include "kernels/wave/wave_exec.hpp"
#include "kernels/wave/wave_kernels.cuh"

namespace gf {
namespace {

template <class T>
class WaveCuda final : public WaveExec<T> {
 public:
  explicit WaveCuda(CudaBackend<T>& be) : be_(be) {}

  void step(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out) override {
    launch_wave_step(a, u.view(), out.view(), be_.stream());
    GF_CUDA_CHECK_LAUNCH();
  }
  // Split where the marches run and no x face absorbs (the marches' parts
  // read x faces by neighbour()'s rules).
  bool step_part(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out, const Box& core,
                 StepPart part) override {
    if (absorbs_x(a)) return false;
    const cudaStream_t s = part == StepPart::Shell ? be_.exchange_stream() : be_.stream();
    const bool src = wave_has_source(a);
    const bool done = src ? launch_split<false>(a.ndim, u.view(), out.view(), core, part, s,
                                                [&](auto d) {
                                                  return WaveOp<T, decltype(d)::value, true>{a};
                                                })
                          : launch_split<false>(a.ndim, u.view(), out.view(), core, part, s,
                                                [&](auto d) {
                                                  return WaveOp<T, decltype(d)::value, false>{a};
                                                });
    if (!done) return false;
    GF_CUDA_CHECK_LAUNCH();
    return true;
  }

 private:
  CudaBackend<T>& be_;
};

}  // namespace

template <class T>
std::unique_ptr<WaveExec<T>> make_wave_cuda(Backend<T>& be) {
  return std::make_unique<WaveCuda<T>>(cuda_core(be));
}
template std::unique_ptr<WaveExec<float>> make_wave_cuda<float>(Backend<float>&);
template std::unique_ptr<WaveExec<double>> make_wave_cuda<double>(Backend<double>&);

}  // namespace gf
