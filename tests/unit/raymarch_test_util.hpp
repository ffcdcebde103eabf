// Random volumes and cameras of the raymarch tests (the CPU's skipping test,
// tests/unit/test_raymarch_skip.cpp, and the GPU's, tests/gpu/test_raymarch_gpu.cpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "grid/grid.hpp"
#include "kernels/raymarch/raymarch_ops.hpp"

namespace gf::test {

// Smooth blobs (with `cut` ≥ 0: their sum less cut, floored at 0, so that
// most of the box is empty space) or white noise.
template <class T>
std::vector<T> random_volume(const Grid& g, bool noise, std::mt19937_64& rng, double cut = -1) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> v(static_cast<std::size_t>(g.size()));
  if (noise) {
    for (auto& x : v) x = static_cast<T>(u(rng));
    return v;
  }
  // A few Gaussian blobs: smooth, with isosurfaces to find.
  double c[4][3], w[4], a[4];
  for (int b = 0; b < 4; ++b) {
    for (int k = 0; k < 3; ++k)
      c[b][k] = g.origin[k] + (0.2 + 0.6 * u(rng)) * (g.n[k] - 1) * g.h[k];
    w[b] = 0.05 + 0.1 * u(rng);
    a[b] = 0.5 + u(rng);
  }
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const double p[3] = {g.coord(0, i), g.coord(1, j), g.coord(2, k)};
        double s = 0;
        for (int b = 0; b < 4; ++b) {
          double r2 = 0;
          for (int q = 0; q < 3; ++q) r2 += (p[q] - c[b][q]) * (p[q] - c[b][q]);
          s += a[b] * std::exp(-r2 / w[b]);
        }
        v[g.index(i, j, k)] = static_cast<T>(cut >= 0 ? std::max(s - cut, 0.0) : s);
      }
  return v;
}

// A camera at distance 1.2–3 from the volume's centre, looking near it, with
// a random up (never along the view).
template <class T>
RayArgs<T> random_args(const Grid& g, int width, int height, RayMode mode, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  RayArgs<T> a;
  double centre[3], ext = 0;
  for (int k = 0; k < 3; ++k) {
    a.origin[k] = T(g.origin[k]);
    a.h[k] = T(g.h[k]);
    centre[k] = g.origin[k] + 0.5 * (g.n[k] - 1) * g.h[k];
    ext = std::max(ext, (g.n[k] - 1) * g.h[k]);
  }
  double dir[3], len = 0;
  for (double& d : dir) d = 2 * u(rng) - 1, len += d * d;
  len = std::sqrt(len);
  const double dist = ext * (1.2 + 1.8 * u(rng));
  double eye[3], fwd[3];
  for (int k = 0; k < 3; ++k) {
    eye[k] = centre[k] + dist * dir[k] / len;
    fwd[k] = centre[k] + 0.1 * ext * (u(rng) - 0.5) - eye[k];
  }
  auto normalize = [](double* v) {
    const double l = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; ++k) v[k] /= l;
  };
  normalize(fwd);
  double up[3] = {u(rng) - 0.5, u(rng) - 0.5, 1.0}, right[3];
  right[0] = fwd[1] * up[2] - fwd[2] * up[1];
  right[1] = fwd[2] * up[0] - fwd[0] * up[2];
  right[2] = fwd[0] * up[1] - fwd[1] * up[0];
  normalize(right);
  up[0] = right[1] * fwd[2] - right[2] * fwd[1];
  up[1] = right[2] * fwd[0] - right[0] * fwd[2];
  up[2] = right[0] * fwd[1] - right[1] * fwd[0];
  double light[3] = {-fwd[0] + 0.6 * up[0], -fwd[1] + 0.6 * up[1], -fwd[2] + 0.6 * up[2]};
  normalize(light);
  for (int k = 0; k < 3; ++k) {
    a.eye[k] = T(eye[k]);
    a.fwd[k] = T(fwd[k]);
    a.right[k] = T(right[k]);
    a.up[k] = T(up[k]);
    a.light[k] = T(light[k]);
    a.background[k] = float(u(rng));
  }
  a.tan_half = T(std::tan((20 + 40 * u(rng)) * 3.14159265358979 / 360));
  a.width = width;
  a.height = height;
  a.mode = mode;
  a.colormap = Colormap(int(u(rng) * 4) % 4);
  a.lo = T(0.1 * u(rng));
  a.hi = T(0.8 + 0.5 * u(rng));
  a.density = T(5 + 30 * u(rng));
  a.isovalue = T(0.3 + 0.3 * u(rng));
  a.step = T((0.3 + 0.7 * u(rng)) * g.min_h());
  return a;
}

inline Grid grid_of(std::int64_t nx, std::int64_t ny, std::int64_t nz, double h) {
  Grid g;
  g.ndim = 3;
  g.n = {nx, ny, nz};
  g.h = {h, h * 1.1, h * 0.9};
  g.origin = {-0.3, 0.2, 0.1};
  return g;
}


}  // namespace gf::test
