// The structured, node-centred grid of SPEC §1: dims points per axis, spacing
// h = extent/(n−1) on walled axes and extent/n on periodic ones, point i at
// origin + i·h, arrays x-fastest.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "grid/bc_type.hpp"
#include "grid/view.hpp"

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
  // The dense layout (rows n[0] apart): how host arrays and files hold the
  // grid's values. A Field's own layout may pad its rows (Field::layout).
  Layout layout() const { return Layout::dense(n.data()); }
  std::int64_t index(std::int64_t i, std::int64_t j = 0, std::int64_t k = 0) const {
    return layout().index(i, j, k);
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
    for (int a = 1; a < ndim; ++a) {
      // appended in two steps: "x" + std::to_string(...) draws a false
      // -Wrestrict warning from GCC 12's inlined std::string (GCC PR 105329)
      s += 'x';
      s += std::to_string(n[a]);
    }
    return s;
  }
};

// A box of grid points: [lo, hi) on each axis (x fastest; {0, 1} on missing axes).
struct Box {
  std::array<std::int64_t, 3> lo{0, 0, 0}, hi{1, 1, 1};
  // Every point of an array of n points per axis.
  static Box whole(const std::int64_t* n) {
    Box b;
    for (int a = 0; a < 3; ++a) b.hi[a] = n[a];
    return b;
  }
  std::int64_t size() const {
    std::int64_t s = 1;
    for (int a = 0; a < 3; ++a) s *= std::max<std::int64_t>(0, hi[a] - lo[a]);
    return s;
  }
  bool empty() const { return size() == 0; }
};

// The points of face f (x- x+ y- y+ z- z+) of grid g.
inline Box face_box(const Grid& g, int f) {
  Box b = Box::whole(g.n.data());
  const int axis = f / 2;
  b.lo[axis] = (f % 2 == 0) ? 0 : g.n[axis] - 1;
  b.hi[axis] = b.lo[axis] + 1;
  return b;
}

// The points of `outer` that are not in `inner` (clipped to outer), as at most
// six disjoint boxes: the slabs below and above inner in z (whole in x and y),
// then in y within inner's z range, then in x within inner's y and z ranges;
// empty ones left out. The overlapped halo exchange updates these first
// (kernels/dist/dist_backend.hpp).
inline std::vector<Box> shell_boxes(const Box& outer, const Box& inner) {
  Box in = inner;
  for (int a = 0; a < 3; ++a) {
    in.lo[a] = std::clamp(in.lo[a], outer.lo[a], outer.hi[a]);
    in.hi[a] = std::clamp(in.hi[a], in.lo[a], outer.hi[a]);
  }
  std::vector<Box> out;
  if (in.empty()) {
    if (!outer.empty()) out.push_back(outer);
    return out;
  }
  Box rest = outer;  // what is left to cut, shrunk axis by axis from z down
  for (int a = 2; a >= 0; --a) {
    Box below = rest, above = rest;
    below.hi[a] = in.lo[a];
    above.lo[a] = in.hi[a];
    if (!below.empty()) out.push_back(below);
    if (!above.empty()) out.push_back(above);
    rest.lo[a] = in.lo[a];
    rest.hi[a] = in.hi[a];
  }
  return out;
}

// Face numbering: x- x+ y- y+ z- z+.
constexpr int kFaces = 6;
inline const char* face_name(int f) {
  static const char* names[kFaces] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  return names[f];
}

}  // namespace gf
