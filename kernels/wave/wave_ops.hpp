// The wave equation's leapfrog step for one grid point: the one formula that
// the CPU reference loop and the CUDA kernels both call.
//
//   u_tt = c²·Δu + f(x)
//   uⁿ⁺¹ = a·uⁿ + b·w + Σ_axes k_a·(u_{-a} + u_{+a} − 2uⁿ) + s·f
//
// with a = 2, b = −1, w = uⁿ⁻¹, k_a = (c·dt/h_a)², s = dt² for the leapfrog
// step, and a = 1, b = −dt, w = v₀ (the initial velocity), k_a/2, s/2 for the
// level before the first, u⁻¹ = u⁰ − dt·v₀ + ½(c·dt)²Δu⁰ + ½dt²f (a Taylor
// step back, second order like the scheme), so that every step after it is
// the same leapfrog step. Products go through mul_rn (kernels/ops/hd.hpp), so
// every kernel and the CPU round alike.
//
// Boundaries: Dirichlet points keep their value; a Neumann face reads the
// mirrored ghost (kernels/ops/boundary.hpp's neighbour()); a periodic axis
// wraps; an absorbing face (first-order Engquist–Majda / Sommerfeld,
// u_t + c·∂u/∂n = 0 with n the outward normal) is updated upwind,
//   uⁿ⁺¹₀ = uⁿ₀ + σ_a·(uⁿ₁ − uⁿ₀),  σ_a = c·dt/h_a,
// where point 1 is the one inside; for the level before the first σ_a is
// −c·dt/h_a (the same step backward). A point on absorbing faces of several
// axes adds their terms.
#pragma once
#include "kernels/ops/boundary.hpp"

namespace gf {

// The step's coefficients and boundary rules; extents and layout come with
// the fields' views (grid/view.hpp).
template <class T>
struct WaveArgs {
  int ndim = 1;
  T a = 2, b = -1;           // weights of uⁿ and of w
  T k[3] = {0, 0, 0};        // (c·dt/h_a)² per axis (halved for the first level)
  T sigma[3] = {0, 0, 0};    // ±c·dt/h_a: the absorbing faces' upwind weights
  AxisBc<T> bc[3];
  const T* w = nullptr;      // uⁿ⁻¹ (or v₀), laid out as the fields
  T s = 0;                   // dt² (halved for the first level)
  const T* source = nullptr; // f(x) per point, or nullptr: then source_const
  T source_const = 0;
};

// Whether the run has a source term to add (a field, or a constant other than 0).
template <class T>
GF_HD bool wave_has_source(const WaveArgs<T>& a) {
  return a.source != nullptr || a.source_const != T(0);
}

// The formula with the neighbours given: m[a], p[a] at −1 and +1 along axis
// a; w the earlier level's value; f the source value (not read unless SRC).
template <int D, bool SRC, class T>
GF_HD T wave_point_as(const WaveArgs<T>& a, T u, T w, const T* m, const T* p, T f) {
  T lap = mul_rn(a.k[0], (m[0] + p[0]) - (u + u));
  if constexpr (D > 1) lap += mul_rn(a.k[1], (m[1] + p[1]) - (u + u));
  if constexpr (D > 2) lap += mul_rn(a.k[2], (m[2] + p[2]) - (u + u));
  const T r = (mul_rn(a.a, u) + mul_rn(a.b, w)) + lap;
  if constexpr (SRC) return r + mul_rn(a.s, f);
  else return r;
}

template <int D, class T>
GF_HD T wave_point(const WaveArgs<T>& a, T u, T w, const T* m, const T* p, T f, bool src) {
  return src ? wave_point_as<D, true>(a, u, w, m, p, f) : wave_point_as<D, false>(a, u, w, m, p, f);
}

template <class T>
GF_HD T wave_source(const WaveArgs<T>& a, std::int64_t idx) {
  return a.source ? a.source[idx] : a.source_const;
}

// True when point i of an axis lies on an absorbing face of that axis.
template <class T>
GF_HD bool on_absorbing(std::int64_t i, std::int64_t n, const AxisBc<T>& bc) {
  return (i == 0 && bc.lo == BcType::Absorbing) || (i == n - 1 && bc.hi == BcType::Absorbing);
}

// Update of point (i, j, k) of u with the boundary rules on every axis: the
// CPU reference for every point, the CUDA kernels for points on a face.
template <int D, class T>
GF_HD T wave_point_bc(const WaveArgs<T>& a, const FieldView<const T>& u, std::int64_t i,
                      std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], u.n[ax], a.bc[ax])) return u[idx];
  bool absorbing = false;
  for (int ax = 0; ax < D; ++ax) absorbing = absorbing || on_absorbing(pos[ax], u.n[ax], a.bc[ax]);
  if (absorbing) {
    T r = u[idx];
    for (int ax = 0; ax < D; ++ax) {
      if (!on_absorbing(pos[ax], u.n[ax], a.bc[ax]) || u.n[ax] < 2) continue;
      const std::int64_t in = pos[ax] == 0 ? idx + u.stride(ax) : idx - u.stride(ax);
      r += mul_rn(a.sigma[ax], u[in] - u[idx]);
    }
    return r;
  }
  T m[3], p[3];
  for (int ax = 0; ax < D; ++ax) {
    m[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), -1, a.bc[ax]);
    p[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), +1, a.bc[ax]);
  }
  return wave_point<D>(a, u[idx], a.w[idx], m, p, wave_source(a, idx), wave_has_source(a));
}

}  // namespace gf
