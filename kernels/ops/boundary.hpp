// Boundary conditions on a node-centred grid, as the point formulas see them.
//
// Dirichlet: the boundary point holds its value and is never updated.
// Neumann:   the boundary point is updated like any other, with the missing
//            neighbour replaced by the ghost value u_mirror + 2·h·g, where g is
//            ∂u/∂n along the outward normal (second-order central difference).
// Periodic:  the axis wraps; point n would be point 0 again and is not stored.
#pragma once
#include "kernels/ops/hd.hpp"

namespace gf {

enum class BcType : std::uint8_t { Dirichlet = 0, Neumann = 1, Periodic = 2 };

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

// True when point i of an axis lies on a Dirichlet face of that axis.
template <class T>
GF_HD bool on_dirichlet(std::int64_t i, std::int64_t n, const AxisBc<T>& bc) {
  return (i == 0 && bc.lo == BcType::Dirichlet) || (i == n - 1 && bc.hi == BcType::Dirichlet);
}

}  // namespace gf
