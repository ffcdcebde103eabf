// The CPU reference executor of the ray marcher, and the factory.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

#include "kernels/exec.hpp"
#include "core/threads.hpp"
#include "kernels/device.hpp"
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

RayExecOptions raymarch_options_from_env() {
  RayExecOptions o;
  switch (env_int("GRIDFORGE_RM_SKIP", -1, 0, 1, "1 (skip empty bricks in every frame) or 0")) {
    case 0: o.skip = RaySkip::Off; break;
    case 1: o.skip = RaySkip::On; break;
    default: o.skip = RaySkip::Auto;
  }
  o.chunk = env_int("GRIDFORGE_RM_CHUNK", 0, 1, 256,
                     "the samples of a skipping march's chunk, a power of two from 1 to 256");
  if (o.chunk != 0 && (o.chunk & (o.chunk - 1)))
    throw UsageError("GRIDFORGE_RM_CHUNK='" + std::to_string(o.chunk) +
                     "': give the samples of a chunk, a power of two from 1 to 256");
  o.brick = env_int("GRIDFORGE_RM_BRICK", 0, 4, 64,
                     "the bricks' edge in cells, a power of two from 4 to 64");
  if (o.brick != 0 && (o.brick & (o.brick - 1)))
    throw UsageError("GRIDFORGE_RM_BRICK='" + std::to_string(o.brick) +
                     "': give the bricks' edge in cells, a power of two from 4 to 64");
  switch (env_int("GRIDFORGE_RM_TEXTURE", -1, 0, 1, "1 (hardware-filtered 3D texture) or 0")) {
    case 0: o.texture = RayTexture::Off; break;
    case 1: o.texture = RayTexture::On; break;
    default: o.texture = RayTexture::Auto;
  }
  if (const char* e = std::getenv("GRIDFORGE_RM_TILE"); e && *e) {
    int w = 0, h = 0;
    char x = 0, extra = 0;
    const int got = std::sscanf(e, "%d%c%d%c", &w, &x, &h, &extra);
    if (got != 3 || x != 'x' || w < 1 || h < 1 || w * h < 32 || w * h > 256)
      throw UsageError(std::string("GRIDFORGE_RM_TILE='") + e +
                       "': give WxH pixels a block, W·H from 32 to 256 (e.g. 8x8, 16x8)");
    o.tile_x = w;
    o.tile_y = h;
  }
  return o;
}

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
