// Domain decomposition (SPEC §1 grids over MPI ranks): a Cartesian split of
// the global grid into one block per rank, x fastest in the rank numbering
// (rank = cx + px·(cy + py·cz)), blocks as even as they go (the first n mod p
// blocks of an axis get one point more). Each rank holds its block padded by
// a halo, as wide as the stencil radius times the deepest temporally blocked
// pass the run may take (time_block_depth: 1 for most runs), on every face it
// shares with another rank (periodic axes wrap across ranks); faces on the
// grid's own walls keep their boundary rules and have no halo. A step
// refreshes the `radius` layers next to the owned points, a pass of k steps
// k·radius layers (kernels/dist/dist_backend.hpp): the points the pass computes in the halo
// are wrong only within k·radius layers of its outer edge after k steps,
// never on the owned points.
//
// Plain data, no MPI: the halo exchange is kernels/dist/. The solvers run on
// the rank-local case (local_case): its grid is the padded block (offset and
// halo set, see grid.hpp) and its shared faces are marked periodic, so the
// point formulas read the halo like any neighbour and apply no rule there.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "grid/grid.hpp"

namespace gf {


struct Decomp {
  int nranks = 1, rank = 0;
  std::array<int, 3> dims{1, 1, 1};    // ranks per axis
  std::array<int, 3> coords{0, 0, 0};  // this rank's place
  Grid global;                         // the whole grid
  int halo = 1;                        // halo width on shared faces: radius · time_block
  int radius = 1;                      // the stencil radius: the layers one step reads
  int time_block = 1;                  // the deepest pass the halos allow (halo / radius)

  static std::int64_t block_start(std::int64_t n, int p, int c) {
    return c * (n / p) + std::min<std::int64_t>(c, n % p);
  }
  static std::int64_t block_count(std::int64_t n, int p, int c) {
    return n / p + (c < n % p ? 1 : 0);
  }
  std::array<int, 3> coords_of(int r) const {
    return {r % dims[0], (r / dims[0]) % dims[1], r / (dims[0] * dims[1])};
  }
  int rank_of(const std::array<int, 3>& c) const { return c[0] + dims[0] * (c[1] + dims[1] * c[2]); }
  // Owned block of rank r: first global index and count per axis.
  std::array<std::int64_t, 3> start_of(int r) const {
    const auto c = coords_of(r);
    std::array<std::int64_t, 3> s{0, 0, 0};
    for (int a = 0; a < 3; ++a) s[a] = block_start(global.n[a], dims[a], c[a]);
    return s;
  }
  std::array<std::int64_t, 3> count_of(int r) const {
    const auto c = coords_of(r);
    std::array<std::int64_t, 3> s{1, 1, 1};
    for (int a = 0; a < 3; ++a) s[a] = block_count(global.n[a], dims[a], c[a]);
    return s;
  }
  // The rank across face (axis, dir = −1 or +1) of this rank, or −1 where the
  // face is the grid's own wall (an axis not split has no neighbour either:
  // a periodic axis of one rank wraps onto itself without a halo).
  int neighbour(int axis, int dir) const {
    if (dims[axis] == 1) return -1;
    std::array<int, 3> c = coords;
    c[axis] += dir;
    if (c[axis] < 0 || c[axis] >= dims[axis]) {
      if (!global.periodic[axis]) return -1;
      c[axis] = (c[axis] + dims[axis]) % dims[axis];
    }
    return rank_of(c);
  }
  // This rank's padded block: the grid the rank's fields live on.
  Grid local_grid() const {
    Grid g = global;
    const auto s = start_of(rank), n = count_of(rank);
    for (int a = 0; a < 3; ++a) {
      g.halo_lo[a] = neighbour(a, -1) >= 0 ? halo : 0;
      g.halo_hi[a] = neighbour(a, +1) >= 0 ? halo : 0;
      g.n[a] = n[a] + g.halo_lo[a] + g.halo_hi[a];
      g.offset[a] = s[a] - g.halo_lo[a];
    }
    return g;
  }
  // The overlapped halo exchange (kernels/dist/dist_backend.hpp): the core of this rank's
  // padded block, the points that are neither in the halo nor within `halo`
  // layers of a shared face (so none of them is sent to a neighbour, and
  // none is received). A step updates the rest (the shell) first, starts
  // the exchange of its faces and updates the core meanwhile.
  Box core_box() const {
    const Grid g = local_grid();
    Box b = Box::whole(g.n.data());
    for (int a = 0; a < 3; ++a) {
      if (g.halo_lo[a]) b.lo[a] = g.halo_lo[a] + halo;
      if (g.halo_hi[a]) b.hi[a] = g.n[a] - g.halo_hi[a] - halo;
    }
    return b;
  }
  // Whether the overlap is worth it: the thinnest block of every split axis
  // (the same on every rank) is at least 3 halo widths thick, so that each
  // core is at least as thick as the layers sent on either side of it.
  bool overlap_fits() const {
    for (int a = 0; a < 3; ++a)
      if (dims[a] > 1 && global.n[a] / dims[a] < 3 * std::int64_t(halo)) return false;
    return true;
  }
};

// The ranks per axis for nranks ranks on grid g with halos of width `halo`:
// the split with the smallest total cut surface (the bytes a halo exchange
// moves) among those whose blocks are at least `halo` points wide, slower
// axes split first on a tie (their faces are contiguous in memory). {0,0,0}
// when no split fits.
std::array<int, 3> choose_rank_dims(const Grid& g, int nranks, int halo);

}  // namespace gf
