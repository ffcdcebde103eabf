// The generic stencil update for one grid point: the one formula that both
// the CPU reference loop and the CUDA kernels call.
//
//   update:  uⁿ⁺¹ = uⁿ + coeff · Σₖ wₖ uⁿ(x + oₖ)
//   replace: uⁿ⁺¹ = Σₖ wₖ uⁿ(x + oₖ)
//
// Points on a Dirichlet face are held. Taps are summed in the order given.
#pragma once
#include <array>
#include <vector>

#include "kernels/ops/boundary.hpp"

namespace gf {

// One stencil point: offset, weight, and the offset as a linear index on the
// grid (d0 + nx·(d1 + ny·d2)), for the interior where no rule applies.
template <class T>
struct StencilTap {
  int d[3];
  T w;
  std::int64_t lin;
};

constexpr int kMaxStencilTaps = 729;  // 9³: radius 4 in every direction

template <class T>
struct StencilArgs {
  int ndim = 1;
  std::int64_t n[3] = {1, 1, 1};
  AxisBc<T> bc[3];
  int ntaps = 0;
  int radius = 0;
  bool update = true;
  T coeff = 1;
};

template <class T>
GF_HD T stencil_combine(const StencilArgs<T>& a, T u, T sum) {
  return a.update ? u + a.coeff * sum : sum;
}

// acc + Σₖ wₖ·vₖ, added one tap at a time in tap order: N taps of a longer
// sum, so that an executor may add a stencil's taps in groups as their values
// arrive (the box marches add a plane of 9 taps at a time) and still form
// stencil_sum's sum, operation for operation.
template <int N, class T>
GF_HD T stencil_sum_from(T acc, const T* w, const T* v) {
  for (int t = 0; t < N; ++t) acc += w[t] * v[t];
  return acc;
}

// Σₖ wₖ·vₖ in tap order, from tap values an executor gathered itself: the
// sum stencil_point_interior forms.
template <int N, class T>
GF_HD T stencil_sum(const T* w, const T* v) {
  return stencil_sum_from<N>(T(0), w, v);
}

// A radius-1 star in the star presets' tap order (centre, −x, +x, −y, +y,
// −z, +z), from the neighbours an executor holds: m[a], p[a] at −1 and +1
// along axis a. The same sum, in the same order, as stencil_point_bc takes
// for such taps.
template <int D, class T>
GF_HD T star_point(const StencilArgs<T>& a, const T* w, T u, const T* m, const T* p) {
  T v[2 * D + 1];
  v[0] = u;
  for (int ax = 0; ax < D; ++ax) {
    v[1 + 2 * ax] = m[ax];
    v[2 + 2 * ax] = p[ax];
  }
  return stencil_combine(a, u, stencil_sum<2 * D + 1>(w, v));
}

// Interior point (every tap inside the grid): taps by linear offset.
template <class T>
GF_HD T stencil_point_interior(const StencilArgs<T>& a, const StencilTap<T>* taps, const T* u,
                               std::int64_t idx) {
  T acc = 0;
  for (int t = 0; t < a.ntaps; ++t) acc += taps[t].w * u[idx + taps[t].lin];
  return stencil_combine(a, u[idx], acc);
}

// Any point, with the boundary rules for taps that fall off the grid. `Tap`
// is StencilTap<T> or an executor's own layout of it (weight w, offset d).
template <int D, class T, class Tap>
GF_HD T stencil_point_bc(const StencilArgs<T>& a, const Tap* taps, const T* u,
                         std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::int64_t idx = i + a.n[0] * (j + a.n[1] * k);
  const std::int64_t pos[3] = {i, j, k};
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], a.n[ax], a.bc[ax])) return u[idx];
  T acc = 0;
  for (int t = 0; t < a.ntaps; ++t)
    acc += taps[t].w *
           value_at<0, D>(u, a.n, a.bc, i + taps[t].d[0], j + taps[t].d[1], k + taps[t].d[2]);
  return stencil_combine(a, u[idx], acc);
}

// True when every tap of point (i, j, k) lands inside the grid.
template <class T>
GF_HD bool stencil_interior(const StencilArgs<T>& a, std::int64_t i, std::int64_t j,
                            std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  const int r = a.radius > 0 ? a.radius : 1;  // face points are never interior (Dirichlet holds)
  for (int ax = 0; ax < a.ndim; ++ax)
    if (pos[ax] < r || pos[ax] >= a.n[ax] - r) return false;
  return true;
}

// A stencil whose taps are those of a radius-1 preset in the preset's order
// (star: centre, −x, +x, −y, +y, −z, +z; box: the 3^d box with dz, then dy,
// then dx running from −1 to 1), whatever its weights: such a stencil runs
// through the vectorised marches, with the offsets known at compile time and
// the taps summed in the same order as the generic kernels and the CPU sum
// them (on the GPU; the generic tiled kernel ran 512³ star7 at 0.44 and box27
// at 0.31 of copy bandwidth in float32 on an H200), and, for a 3D star, through
// the temporally blocked passes (ops/time_block.hpp).
enum class FixedShape { None, Star, Box };
template <class T>
struct FixedStencil {
  FixedShape shape = FixedShape::None;
  int ndim = 0;
  T w[27] = {};
};

template <class T>
FixedStencil<T> fixed_stencil(const std::vector<StencilTap<T>>& taps) {
  auto same = [&](const std::vector<std::array<int, 3>>& d) {
    if (taps.size() != d.size()) return false;
    for (std::size_t t = 0; t < d.size(); ++t)
      for (int ax = 0; ax < 3; ++ax)
        if (taps[t].d[ax] != d[t][ax]) return false;
    return true;
  };
  FixedStencil<T> f;
  for (int dims = 2; dims <= 3; ++dims) {
    std::vector<std::array<int, 3>> star(1, {0, 0, 0}), box;
    for (int ax = 0; ax < dims; ++ax)
      for (int sign : {-1, 1}) {
        std::array<int, 3> d{0, 0, 0};
        d[ax] = sign;
        star.push_back(d);
      }
    for (int dz = dims == 3 ? -1 : 0; dz <= (dims == 3 ? 1 : 0); ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) box.push_back({dx, dy, dz});
    if (same(star)) f.shape = FixedShape::Star;
    else if (same(box)) f.shape = FixedShape::Box;
    else continue;
    f.ndim = dims;
    for (std::size_t t = 0; t < taps.size(); ++t) f.w[t] = taps[t].w;
    return f;
  }
  return f;
}

}  // namespace gf
