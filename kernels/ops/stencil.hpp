// The generic stencil update for one grid point: the one formula that both
// the CPU reference loop and the CUDA kernels call.
//
//   update:  uⁿ⁺¹ = uⁿ + coeff · Σₖ wₖ uⁿ(x + oₖ)
//   replace: uⁿ⁺¹ = Σₖ wₖ uⁿ(x + oₖ)
//
// Points on a Dirichlet face are held. Taps are summed in the order given.
#pragma once
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

// Σₖ wₖ·vₖ in tap order, from tap values an executor gathered itself: the
// sum stencil_point_interior forms.
template <int N, class T>
GF_HD T stencil_sum(const T* w, const T* v) {
  T acc = 0;
  for (int t = 0; t < N; ++t) acc += w[t] * v[t];
  return acc;
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

}  // namespace gf
