#include "kernels/cpu/raymarch_cpu.hpp"

namespace gf {

template <class T>
void raymarch_cpu(const RayArgs<T>& a, const T* volume, float* img) {
  // Rays differ in length (early termination, misses): rows are handed out dynamically.
#pragma omp parallel for schedule(dynamic, 1)
  for (int py = 0; py < a.height; ++py)
    for (int px = 0; px < a.width; ++px)
      render_pixel(a, volume, px, py, img + 4 * (std::int64_t(py) * a.width + px));
}

template void raymarch_cpu<float>(const RayArgs<float>&, const float*, float*);
template void raymarch_cpu<double>(const RayArgs<double>&, const double*, float*);

}  // namespace gf
