// The structured, node-centred grid of SPEC §1: dims points per axis, spacing
// h = extent/(n−1) on walled axes and extent/n on periodic ones, point i at
// origin + i·h, arrays x-fastest.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "kernels/ops/boundary.hpp"

namespace gf {

struct Grid {
  int ndim = 1;
  std::array<std::int64_t, 3> n{1, 1, 1};  // points per axis; 1 on missing axes
  std::array<double, 3> h{1, 1, 1};        // spacing
  std::array<double, 3> origin{0, 0, 0};
  std::array<bool, 3> periodic{false, false, false};
  // One rank's part of a grid split over MPI ranks (grid/decomp.hpp): the
  // global index of local point 0 (coordinates are taken from it, so that a
  // point's coordinate is the same on every rank count), and the layers of
  // points on each side that other ranks own (the halo, filled by the halo
  // exchange). All 0 on one rank.
  std::array<std::int64_t, 3> offset{0, 0, 0};
  std::array<std::int64_t, 3> halo_lo{0, 0, 0}, halo_hi{0, 0, 0};

  std::int64_t size() const { return n[0] * n[1] * n[2]; }
  std::int64_t index(std::int64_t i, std::int64_t j = 0, std::int64_t k = 0) const {
    return i + n[0] * (j + n[1] * k);
  }
  double coord(int axis, std::int64_t i) const {
    return origin[axis] + double(i + offset[axis]) * h[axis];
  }
  bool has_halo() const {
    for (int a = 0; a < 3; ++a)
      if (halo_lo[a] || halo_hi[a]) return true;
    return false;
  }
  // Points this rank owns (n less the halo), per axis and in all.
  std::int64_t owned(int a) const { return n[a] - halo_lo[a] - halo_hi[a]; }
  std::int64_t owned_size() const { return owned(0) * owned(1) * owned(2); }
  double min_h() const {
    double m = h[0];
    for (int a = 1; a < ndim; ++a) m = h[a] < m ? h[a] : m;
    return m;
  }
  // "512^3", "256x128", "1000"
  std::string shape_str() const {
    if (ndim == 3 && n[0] == n[1] && n[1] == n[2]) return std::to_string(n[0]) + "^3";
    if (ndim == 2 && n[0] == n[1]) return std::to_string(n[0]) + "^2";
    std::string s = std::to_string(n[0]);
    for (int a = 1; a < ndim; ++a) s += "x" + std::to_string(n[a]);
    return s;
  }
};

// Face numbering: x- x+ y- y+ z- z+.
constexpr int kFaces = 6;
inline const char* face_name(int f) {
  static const char* names[kFaces] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  return names[f];
}

}  // namespace gf
