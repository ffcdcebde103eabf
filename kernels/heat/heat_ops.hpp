// Explicit (FTCS) heat step for one grid point: the one formula that both the
// CPU reference loop and the CUDA kernels call.
//
//   uⁿ⁺¹ = uⁿ + Σ_axes c_a · (u_{-a} + u_{+a} − 2uⁿ) + s,   c_a = α·dt/h_a²,  s = dt·source(x)
//
// in one of two forms, chosen per run by the grid (HeatForm, heat_form):
//   anisotropic: uⁿ + Σ_a c_a · ((u_{-a} + u_{+a}) − 2uⁿ)
//   isotropic (the same c on every axis, 2D and 3D):
//                uⁿ + c · (Σ_a (u_{-a} + u_{+a}) − 2D·uⁿ), 4 floating-point
//                operations fewer in 3D;
// and + s only when the case has a source (a field, or a constant other than 0).
// Both forms keep a constant field exactly constant (the sum of 2D equal
// neighbours is 2D·u rounded once, as 2D·u is). Products are rounded on their
// own (mul_rn), so every kernel and the CPU round alike (hd.hpp).
#pragma once
#include "kernels/ops/boundary.hpp"
#include "kernels/ops/time_block.hpp"

namespace gf {

// The step's coefficients and boundary rules; the grid's extents and layout
// come with the fields' views (grid/view.hpp).
template <class T>
struct HeatArgs {
  int ndim = 1;
  T c[3] = {0, 0, 0};      // α·dt/h² per axis
  AxisBc<T> bc[3];
  T dt = 0;                    // this step's dt (the last step of a t_end run is shorter)
  const T* source = nullptr;  // s(x) per point (laid out as the fields), or nullptr: then source_const
  T source_const = 0;          // s when it is a constant
};

// Which form of the formula a run takes: iso (c the same on every axis of a
// 2D or 3D grid) and src (a source term to add).
struct HeatForm {
  bool iso, src;
};

template <int D, class T>
GF_HD HeatForm heat_form(const HeatArgs<T>& a) {
  bool iso = D >= 2 && a.c[0] == a.c[1];
  if constexpr (D > 2) iso = iso && a.c[1] == a.c[2];
  return {iso, a.source != nullptr || a.source_const != T(0)};
}

// The formula in a form known at compile time. m[a], p[a]: neighbours at −1
// and +1 along axis a; s: the source term (not read when SRC is false).
template <int D, bool ISO, bool SRC, class T>
GF_HD T ftcs_point_as(T u, const T* m, const T* p, const T* c, T s) {
  T r;
  if constexpr (ISO && D > 1) {
    T sum = (m[0] + p[0]) + (m[1] + p[1]);
    if constexpr (D > 2) sum = sum + (m[2] + p[2]);
    r = u + mul_rn(c[0], sum - mul_rn(T(2 * D), u));
  } else {
    T acc = mul_rn(c[0], (m[0] + p[0]) - (u + u));
    if constexpr (D > 1) acc += mul_rn(c[1], (m[1] + p[1]) - (u + u));
    if constexpr (D > 2) acc += mul_rn(c[2], (m[2] + p[2]) - (u + u));
    r = u + acc;
  }
  if constexpr (SRC) return r + s;
  else return r;
}

// The formula in the run's form f.
template <int D, class T>
GF_HD T ftcs_point(T u, const T* m, const T* p, const T* c, T s, HeatForm f) {
  if (f.iso) return f.src ? ftcs_point_as<D, true, true>(u, m, p, c, s)
                          : ftcs_point_as<D, true, false>(u, m, p, c, s);
  return f.src ? ftcs_point_as<D, false, true>(u, m, p, c, s)
               : ftcs_point_as<D, false, false>(u, m, p, c, s);
}

// s = dt·source from a source value (a field's or the constant).
template <class T>
GF_HD T heat_source_term(const HeatArgs<T>& a, T raw) {
  return mul_rn(a.dt, raw);
}

template <class T>
GF_HD T heat_source(const HeatArgs<T>& a, std::int64_t idx) {
  return heat_source_term(a, a.source ? a.source[idx] : a.source_const);
}

// Update of point (i, j, k) of u with boundary rules on every axis: used by
// the CPU reference for every point and by the CUDA kernels for points near a face.
template <int D, class T>
GF_HD T heat_point_bc(const HeatArgs<T>& a, const FieldView<const T>& u, std::int64_t i,
                      std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], u.n[ax], a.bc[ax])) return u[idx];
  T m[3], p[3];
  for (int ax = 0; ax < D; ++ax) {
    m[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), -1, a.bc[ax]);
    p[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), +1, a.bc[ax]);
  }
  return ftcs_point<D>(u[idx], m, p, a.c, heat_source(a, idx), heat_form<D>(a));
}

// Explicit heat (FTCS): heat_point_bc's formula, in the run's form
// (heat_form). ISO_NO_SOURCE: the form known at compile time to be the
// isotropic one without a source (the form most runs take, and the cheapest).
template <class T, bool ISO_NO_SOURCE = false, int D = 3>
struct TbHeat : HeatArgs<T> {
  using value_type = T;
  static constexpr int kDim = D;
  static constexpr bool kSource = !ISO_NO_SOURCE;
  HeatForm form{};
  TbHeat() = default;
  explicit TbHeat(const HeatArgs<T>& a) : HeatArgs<T>(a), form(heat_form<D>(a)) {}
  GF_HD T point(T u, const T* m, const T* p, T s) const {
    if constexpr (ISO_NO_SOURCE) return ftcs_point_as<D, true, false>(u, m, p, this->c, s);
    else return ftcs_point<D>(u, m, p, this->c, s, form);
  }
  GF_HD T source_term(T raw) const { return heat_source_term(*this, raw); }
};

// The passes of a heat step: f(op) with the TbHeat that fits the args.
template <class T, class F>
void with_tb_heat(const HeatArgs<T>& a, F&& f) {
  with_tb_dim(a.ndim, [&](auto d) {
    constexpr int D = decltype(d)::value;
    const HeatForm form = heat_form<D>(a);
    if (form.iso && !form.src) f(TbHeat<T, true, D>(a));
    else f(TbHeat<T, false, D>(a));
  });
}

}  // namespace gf
