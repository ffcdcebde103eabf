// Temporal blocking's point: what the blocked passes (the CUDA kernels in
// kernels/cuda/time_block*_kernels.cuh and the CPU's wavefront in
// kernels/cpu/loops.hpp) compute at one point of a time level from the level
// below. Each workload that has such passes defines its operator beside its
// formula (TbHeat in heat_ops.hpp, TbStar in stencil_ops.hpp, TbJacobi in
// laplace_ops.hpp). An operator is the workload's args plus
//   kDim:              the grid's dimensions, 2 or 3 (the passes march
//                      along the last axis: z in 3D, y in 2D);
//   point(u, m, p, s): the workload's own formula in kDim dimensions (heat:
//                      ftcs_point; a star stencil of radius 1: star_point; a
//                      Jacobi sweep: jacobi_formula), m[a], p[a] the
//                      neighbours at −1 and +1 along axis a, s the source term;
//   kSource:           whether it has a source term (heat's s(x), Jacobi's
//                      right-hand side f): then source (a field or nullptr),
//                      source_const and source_term(raw), the term from a
//                      value of either; the passes read it through tb_source
//                      or those.
// All are radius 1, hold Dirichlet points, and take the mirrored neighbour
// plus the ghost beyond a Neumann face: the walls below are theirs alike.
#pragma once
#include <stdexcept>
#include <type_traits>

#include "kernels/ops/boundary.hpp"

namespace gf {

// The grids the passes run on: 2D and 3D (the executors add their own
// limits: the CPU at least 2 planes, the GPU fewer than 2³¹ points).
inline bool tb_has_dims(int ndim) { return ndim == 2 || ndim == 3; }

// f(std::integral_constant<int, D>) for a grid of ndim dimensions that has
// passes (tb_has_dims).
template <class F>
void with_tb_dim(int ndim, F&& f) {
  if (!tb_has_dims(ndim)) throw std::logic_error("temporally blocked passes are for 2D and 3D grids");
  if (ndim == 2) f(std::integral_constant<int, 2>{});
  else f(std::integral_constant<int, 3>{});
}

// The source term at grid index idx (heat: heat_source's value; Jacobi:
// rhs_at's), 0 without one.
template <class Op>
GF_HD typename Op::value_type tb_source(const Op& a, std::int64_t idx) {
  if constexpr (Op::kSource) return a.source_term(a.source ? a.source[idx] : a.source_const);
  else return typename Op::value_type(0);
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

// One point of a time level from the level below: u its value; xl, xr, yl,
// yr, zm, zp its neighbours as the pass holds them (wrapped on a periodic
// axis; in 2D, wz has no walls and zm, zp are not used); s its source term
// (tb_source's value). With WALLS, the wall rules
// of heat_point_bc and stencil_point_bc where the point sits on a wall face
// (the neighbour beyond the wall is not used). The neighbours go into the
// operator's point in the order those functions give them.
template <bool WALLS, class Op, class T>
GF_HD T tb_point(const Op& a, TbWalls wx, TbWalls wy, TbWalls wz, T s, T u, T xl, T xr, T yl,
                 T yr, T zm, T zp) {
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
  return a.point(u, m, p, s);
}

}  // namespace gf
