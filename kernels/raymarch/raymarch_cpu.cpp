// The CPU reference executor of the ray marcher, and the factory.
#include <stdexcept>

#include "kernels/exec.hpp"
#include "core/threads.hpp"
#include "kernels/raymarch/raymarch_exec.hpp"

namespace gf {
namespace {

template <class T>
class RaymarchCpu final : public RaymarchExec<T> {
 public:
  void render(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img,
              const std::function<bool()>& stop) override {
    const FieldView<const T> v = volume.view();
    float* out = img.data();
    // Rays differ in length (early termination, misses): rows are handed out dynamically.
#pragma omp parallel for schedule(dynamic, 1) \
    num_threads(cpu::threads_for_rays(std::int64_t(a.width) * a.height))
    for (int py = 0; py < a.height; ++py) {
      if (stop && stop()) continue;
      for (int px = 0; px < a.width; ++px)
        render_pixel(a, v, px, py, out + 4 * (std::int64_t(py) * a.width + px));
    }
  }
};

template <class T>
std::unique_ptr<RaymarchExec<T>> refuse_ranks(std::unique_ptr<RaymarchExec<T>>,
                                              DistributedBackend<T>&) {
  throw std::logic_error("raymarch over several ranks: rank 0 renders on its own backend");
}

}  // namespace

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cpu(Backend<T>&) {
  return std::make_unique<RaymarchCpu<T>>();
}

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_exec(Backend<T>& be) {
  if (be.kind() == BackendKind::Distributed) return make_raymarch_exec(be.rank_backend());
  return make_exec<RaymarchExec<T>, T>(
      be, {make_raymarch_cpu<T>, GF_CUDA_MAKER(make_raymarch_cuda<T>), refuse_ranks<T>});
}

template std::unique_ptr<RaymarchExec<float>> make_raymarch_cpu<float>(Backend<float>&);
template std::unique_ptr<RaymarchExec<double>> make_raymarch_cpu<double>(Backend<double>&);
template std::unique_ptr<RaymarchExec<float>> make_raymarch_exec<float>(Backend<float>&);
template std::unique_ptr<RaymarchExec<double>> make_raymarch_exec<double>(Backend<double>&);

}  // namespace gf
