#include "solvers/decompose.hpp"

#include <algorithm>
#include <string>

#include <fmt/core.h>

#include "core/error.hpp"
#include "io/workload.hpp"
#include "solvers/registry.hpp"

namespace gf {

namespace {

std::string list_str(const std::array<int, 3>& d, int ndim) {
  std::string s = "[";
  for (int a = 0; a < ndim; ++a) s += (a ? ", " : "") + std::to_string(d[a]);
  return s + "]";
}

// What the halo's width is made of, for the messages.
std::string halo_why(const Decomp& d) {
  if (d.time_block == 1) return "the stencil radius";
  return fmt::format("time_block {} × the stencil radius {}", d.time_block, d.radius);
}

}  // namespace

int time_block_depth(const Case& c) {
  const WorkloadInfo& info = workload_info(c.workload);
  if (!info.blockable || !info.blockable(c)) return 1;
  if (time_block_asked(c) > 0) return time_block_asked(c);
  return info.steps(c) >= kAutoTimeBlockMinSteps ? kAutoTimeBlockDeepest : 1;
}

int halo_width(const Case& c) {
  return workload_entry(c.workload).halo_width(c);
}

Decomp decompose(const Case& c, int nranks, int rank) {
  Decomp d;
  d.nranks = nranks;
  d.rank = rank;
  d.global = c.grid;
  d.radius = halo_width(c);
  // set: that deep, or the error below; auto: first for one step (the split
  // is chosen for its cut), then as deep as the split's blocks allow
  const int depth = time_block_depth(c);
  const bool forced = depth > 1 && time_block_asked(c) > 0;
  d.time_block = forced ? depth : 1;
  d.halo = d.radius * d.time_block;
  const Grid& g = c.grid;
  const SourceLoc file{c.file};
  if (nranks == 1) return d;
  if (const auto check = workload_entry(c.workload).check_ranks) check(c, nranks);
  if (!c.ranks.empty()) {
    std::int64_t prod = 1;
    for (int a = 0; a < g.ndim; ++a) {
      d.dims[a] = c.ranks[a];
      prod *= c.ranks[a];
    }
    if (prod != nranks)
      throw CaseError(c.ranks_loc, "grid.ranks",
                      fmt::format("{} makes {} ranks, but the run has {} (mpirun -np {})",
                                  list_str(d.dims, g.ndim), prod, nranks, nranks));
    for (int a = 0; a < g.ndim; ++a) {
      if (d.dims[a] > g.n[a])
        throw CaseError(c.ranks_loc, "grid.ranks",
                        fmt::format("{} ranks on axis {} but grid.dims[{}] is {}: more ranks "
                                    "than points",
                                    d.dims[a], char('x' + a), a, g.n[a]));
      if (d.dims[a] > 1 && g.n[a] / d.dims[a] < d.halo)
        throw CaseError(c.ranks_loc, "grid.ranks",
                        fmt::format("{} ranks on axis {} give blocks of {} points, narrower than "
                                    "the halo of {} ({})",
                                    d.dims[a], char('x' + a), g.n[a] / d.dims[a], d.halo,
                                    halo_why(d)));
    }
  } else {
    d.dims = choose_rank_dims(g, nranks, d.halo);
    if (d.dims[0] == 0)
      throw CaseError(file, "grid.dims",
                      fmt::format("the grid {} cannot be split over {} ranks with blocks at "
                                  "least {} points wide (the halo: {}); use fewer ranks",
                                  g.shape_str(), nranks, d.halo, halo_why(d)));
  }
  if (!forced && depth > 1) {  // auto: the deepest pass the thinnest block holds
    std::int64_t thinnest = std::numeric_limits<std::int64_t>::max();
    for (int a = 0; a < g.ndim; ++a)
      if (d.dims[a] > 1) thinnest = std::min<std::int64_t>(thinnest, g.n[a] / d.dims[a]);
    d.time_block = int(std::clamp<std::int64_t>(thinnest / d.radius, 1, depth));
    d.halo = d.radius * d.time_block;
  }
  d.coords = d.coords_of(rank);
  return d;
}

Case local_case(const Case& c, const Decomp& d) {
  Case lc = c;
  if (d.nranks == 1) return lc;
  lc.grid = d.local_grid();
  lc.decomp = std::make_shared<const Decomp>(d);
  // every boundary of the case: its own, and each pde field's (which may differ)
  for (int a = 0; a < c.grid.ndim; ++a)
    for (int dir = 0; dir < 2; ++dir) {
      if (d.neighbour(a, dir ? 1 : -1) < 0) continue;
      lc.boundary[2 * a + dir].type = BcType::Periodic;
      for (PdeFieldSpec& f : lc.pde.fields) f.boundary[2 * a + dir].type = BcType::Periodic;
    }
  return lc;
}

}  // namespace gf
