// Stencils for the tests: the radius-1 presets' shapes with random weights.
#pragma once
#include <random>
#include <vector>

#include "kernels/stencil/stencil_ops.hpp"

namespace gf::test {

// The radius-1 presets' offsets in the presets' order (centre, −x, +x, −y, +y,
// −z, +z; the box with dz, dy, dx from −1 to 1), with random weights: the
// shapes the CUDA backend runs through its marches.
template <class T>
std::vector<StencilTap<T>> preset_shaped(int ndim, bool box, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<StencilTap<T>> taps;
  auto add = [&](int dx, int dy, int dz) {
    StencilTap<T> t{};
    t.d[0] = dx, t.d[1] = dy, t.d[2] = dz;
    t.w = static_cast<T>(d(rng) / 9);
    taps.push_back(t);
  };
  if (box) {
    for (int dz = ndim == 3 ? -1 : 0; dz <= (ndim == 3 ? 1 : 0); ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) add(dx, dy, dz);
  } else {
    add(0, 0, 0);
    for (int ax = 0; ax < ndim; ++ax)
      for (int sign : {-1, 1}) add(ax == 0 ? sign : 0, ax == 1 ? sign : 0, ax == 2 ? sign : 0);
  }
  return taps;
}

}  // namespace gf::test
