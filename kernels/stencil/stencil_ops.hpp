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
#include "kernels/ops/time_block.hpp"

namespace gf {

// One stencil point: offset and weight.
template <class T>
struct StencilTap {
  int d[3];
  T w;
};

constexpr int kMaxStencilTaps = 729;  // 9³: radius 4 in every direction

// The stencil's form and boundary rules; extents and layout come with the views.
template <class T>
struct StencilArgs {
  int ndim = 1;
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
// sum stencil_point_bc forms.
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

// A radius-1 star's point anywhere on the grid (the marches' y and z faces):
// held on a Dirichlet face, else its neighbours by the axis rules (neighbour(),
// which for one point beyond a face is value_at's rule: no other point takes a
// value from beyond a face, since a point on a Dirichlet face is held) summed
// by star_point: for the star presets' taps, stencil_point_bc's value
// operation for operation, cheap enough to inline in the march (its launch
// then makes the faces too), as heat_point_bc is.
template <int D, class T>
GF_HD T star_point_bc(const StencilArgs<T>& a, const T* w, const FieldView<const T>& u,
                      std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], u.n[ax], a.bc[ax])) return u[idx];
  T m[D], p[D];
  for (int ax = 0; ax < D; ++ax) {
    m[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), -1, a.bc[ax]);
    p[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), +1, a.bc[ax]);
  }
  return star_point<D>(a, w, u[idx], m, p);
}

// Any point of u, with the boundary rules for taps that fall off the grid.
// `Tap` is StencilTap<T> or an executor's own layout of it (weight w, offset d).
template <int D, class T, class Tap>
GF_HD T stencil_point_bc(const StencilArgs<T>& a, const Tap* taps, const FieldView<const T>& u,
                         std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], u.n[ax], a.bc[ax])) return u(i, j, k);
  T acc = 0;
  for (int t = 0; t < a.ntaps; ++t)
    acc += taps[t].w *
           value_at<0, D>(u, a.bc, i + taps[t].d[0], j + taps[t].d[1], k + taps[t].d[2]);
  return stencil_combine(a, u(i, j, k), acc);
}

// True when every tap of point (i, j, k) of a grid of n points per axis lands inside it.
template <class T>
GF_HD bool stencil_interior(const StencilArgs<T>& a, const std::int64_t* n, std::int64_t i,
                            std::int64_t j, std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  const int r = a.radius > 0 ? a.radius : 1;  // face points are never interior (Dirichlet holds)
  for (int ax = 0; ax < a.ndim; ++ax)
    if (pos[ax] < r || pos[ax] >= n[ax] - r) return false;
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

// A star of radius 1 in the presets' tap order (fixed_stencil's Star: star5
// in 2D, star7 in 3D), with its 2D + 1 weights: stencil_point_bc's sum for
// such taps.
template <class T, int D = 3>
struct TbStar : StencilArgs<T> {
  using value_type = T;
  static constexpr int kDim = D;
  static constexpr bool kSource = false;
  T w[2 * D + 1] = {};
  TbStar() = default;
  TbStar(const StencilArgs<T>& a, const FixedStencil<T>& f) : StencilArgs<T>(a) {
    for (int t = 0; t < 2 * D + 1; ++t) w[t] = f.w[t];
  }
  GF_HD T point(T u, const T* m, const T* p, T) const { return star_point<D>(*this, w, u, m, p); }
};

}  // namespace gf
