// Explicit (FTCS) heat step for one grid point: the one formula that both the
// CPU reference loop and the CUDA kernels call.
//
//   uⁿ⁺¹ = uⁿ + Σ_axes c_a · (u_{-a} + u_{+a} − 2uⁿ) + s,   c_a = α·dt/h_a²,  s = dt·source(x)
#pragma once
#include "kernels/ops/boundary.hpp"

namespace gf {

template <class T>
struct HeatArgs {
  int ndim = 1;
  std::int64_t n[3] = {1, 1, 1};
  T c[3] = {0, 0, 0};      // α·dt/h² per axis
  AxisBc<T> bc[3];
  T dt = 0;                    // this step's dt (the last step of a t_end run is shorter)
  const T* source = nullptr;  // s(x) per point, or nullptr: then source_const
  T source_const = 0;          // s when it is a constant
};

// The formula. m[a], p[a]: neighbours at −1 and +1 along axis a.
template <int D, class T>
GF_HD T ftcs_point(T u, const T* m, const T* p, const T* c, T s) {
  // Products through mul_rn: no kernel fuses them into its sums (hd.hpp).
  T acc = mul_rn(c[0], (m[0] + p[0]) - (u + u));
  if constexpr (D > 1) acc += mul_rn(c[1], (m[1] + p[1]) - (u + u));
  if constexpr (D > 2) acc += mul_rn(c[2], (m[2] + p[2]) - (u + u));
  return u + acc + s;
}

template <class T>
GF_HD T heat_source(const HeatArgs<T>& a, std::int64_t idx) {
  return mul_rn(a.dt, a.source ? a.source[idx] : a.source_const);
}

// Where a column or a plane sits against the walls, worked out once: held
// (a Dirichlet point), and which faces take the mirrored neighbour.
struct TbWalls {
  bool held, lo, hi;
};

template <class T>
GF_HD TbWalls tb_walls(int i, int n, bool periodic, const AxisBc<T>& bc) {
  if (periodic) return {false, false, false};
  return {on_dirichlet<T>(i, n, bc), i == 0, i == n - 1};
}

// One point of a time level from the level below, for the temporally blocked
// passes (the CUDA kernels in heat_tb_kernels.cuh and the CPU's wavefront):
// u its value; xl, xr, yl, yr, zm, zp its neighbours as the pass holds them
// (wrapped on a periodic axis); s its source term (heat_source's value).
// With WALLS, the wall rules of heat_point_bc where the point sits on a wall
// face (the neighbour beyond the wall is not used). The neighbours go into
// ftcs_point in the order heat_point_bc gives them.
template <bool WALLS, class T>
GF_HD T tb_point(const HeatArgs<T>& a, TbWalls wx, TbWalls wy, TbWalls wz, T s, T u, T xl, T xr,
                 T yl, T yr, T zm, T zp) {
  T m[3], p[3];
  if constexpr (WALLS) {
    if (wx.held || wy.held || wz.held) return u;
    m[0] = wx.lo ? xr + a.bc[0].ghost_lo : xl;
    p[0] = wx.hi ? xl + a.bc[0].ghost_hi : xr;
    m[1] = wy.lo ? yr + a.bc[1].ghost_lo : yl;
    p[1] = wy.hi ? yl + a.bc[1].ghost_hi : yr;
    m[2] = wz.lo ? zp + a.bc[2].ghost_lo : zm;
    p[2] = wz.hi ? zm + a.bc[2].ghost_hi : zp;
  } else {
    m[0] = xl, p[0] = xr, m[1] = yl, p[1] = yr, m[2] = zm, p[2] = zp;
  }
  return ftcs_point<3>(u, m, p, a.c, s);
}

// Update of point (i, j, k) with boundary rules on every axis: used by the CPU
// reference for every point and by the CUDA kernels for points near a face.
template <int D, class T>
GF_HD T heat_point_bc(const HeatArgs<T>& a, const T* u, std::int64_t i, std::int64_t j,
                      std::int64_t k) {
  const std::int64_t nx = a.n[0], ny = a.n[1];
  const std::int64_t idx = i + nx * (j + ny * k);
  const std::int64_t pos[3] = {i, j, k};
  const std::int64_t stride[3] = {1, nx, nx * ny};
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], a.n[ax], a.bc[ax])) return u[idx];
  T m[3], p[3];
  for (int ax = 0; ax < D; ++ax) {
    m[ax] = neighbour(u, idx, pos[ax], a.n[ax], stride[ax], -1, a.bc[ax]);
    p[ax] = neighbour(u, idx, pos[ax], a.n[ax], stride[ax], +1, a.bc[ax]);
  }
  return ftcs_point<D>(u[idx], m, p, a.c, heat_source(a, idx));
}

}  // namespace gf
