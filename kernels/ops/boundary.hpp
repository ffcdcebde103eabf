// Boundary conditions on a node-centred grid, as the point formulas see them.
//
// Dirichlet: the boundary point holds its value and is never updated.
// Neumann:   the boundary point is updated like any other, with the missing
//            neighbour replaced by the ghost value u_mirror + 2·h·g, where g is
//            ∂u/∂n along the outward normal (second-order central difference).
// Periodic:  the axis wraps; point n would be point 0 again and is not stored.
#pragma once
#include "grid/bc_type.hpp"
#include "grid/view.hpp"
#include "kernels/ops/hd.hpp"

namespace gf {

// Per-axis boundary description for kernels: plain data, copied by value.
template <class T>
struct AxisBc {
  BcType lo = BcType::Dirichlet, hi = BcType::Dirichlet;
  T ghost_lo = 0, ghost_hi = 0;  // 2·h·g for Neumann faces
};

// Value of the neighbour of point i (index idx) at i + dir (dir = ±1) along an
// axis of n points with the given stride, applying the axis' boundary rule
// where the neighbour falls off the grid. Never called for Dirichlet points.
template <class T>
GF_HD T neighbour(const T* u, std::int64_t idx, std::int64_t i, std::int64_t n,
                  std::int64_t stride, int dir, const AxisBc<T>& bc) {
  if (dir < 0) {
    if (i > 0) return u[idx - stride];
    if (bc.lo == BcType::Periodic) return u[idx + (n - 1) * stride];
    return u[idx + stride] + bc.ghost_lo;  // Neumann mirror
  }
  if (i < n - 1) return u[idx + stride];
  if (bc.hi == BcType::Periodic) return u[idx - (n - 1) * stride];
  return u[idx - stride] + bc.ghost_hi;
}

// Value at grid position (p0, p1, p2) of view u, where a coordinate may lie
// up to a few points beyond its axis' ends, by the axis rules, applied axis
// by axis from A on: a periodic axis wraps; beyond a Neumann face the value
// mirrors with the gradient, u(−k) = u(k) + k·(2h·g); beyond a Dirichlet face
// it reflects oddly about the boundary value, u(−k) = 2·u_b − u(k). For k = 1
// the Neumann rule is neighbour()'s. Used by stencils wider than one point.
template <int A, int D, class T>
GF_HD T value_at(const FieldView<const T>& u, const AxisBc<T>* bc, std::int64_t p0,
                 std::int64_t p1, std::int64_t p2) {
  if constexpr (A == D) {
    return u(p0, p1, p2);
  } else {
    std::int64_t p[3] = {p0, p1, p2};
    const std::int64_t q = p[A], nn = u.n[A];
    if (q >= 0 && q < nn) return value_at<A + 1, D>(u, bc, p0, p1, p2);
    const bool lo = q < 0;
    const BcType t = lo ? bc[A].lo : bc[A].hi;
    if (t == BcType::Periodic) {
      p[A] = lo ? q + nn : q - nn;
      return value_at<A + 1, D>(u, bc, p[0], p[1], p[2]);
    }
    const std::int64_t k = lo ? -q : q - (nn - 1);  // how far beyond the face
    p[A] = lo ? k : nn - 1 - k;
    const T mirrored = value_at<A + 1, D>(u, bc, p[0], p[1], p[2]);
    if (t == BcType::Neumann) return mirrored + T(k) * (lo ? bc[A].ghost_lo : bc[A].ghost_hi);
    p[A] = lo ? 0 : nn - 1;
    const T wall = value_at<A + 1, D>(u, bc, p[0], p[1], p[2]);
    return (wall + wall) - mirrored;
  }
}

// True when point i of an axis lies on a Dirichlet face of that axis.
template <class T>
GF_HD bool on_dirichlet(std::int64_t i, std::int64_t n, const AxisBc<T>& bc) {
  return (i == 0 && bc.lo == BcType::Dirichlet) || (i == n - 1 && bc.hi == BcType::Dirichlet);
}

}  // namespace gf
