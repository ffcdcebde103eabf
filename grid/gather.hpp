// Checkpoints over ranks hold global arrays (the same file as one rank
// writes, so a restart may use another number of ranks): a field's owned
// blocks gathered into the global array on rank 0 (empty on the others)
// from each rank's padded block of `elem`-byte values, and a rank's padded
// block cut out of a global array (halo indices wrap around periodic axes).
// Host bytes in the dense layout (Grid::layout). Multigrid over ranks
// (solvers/multigrid.cpp) gathers its fine residual and scatters the
// correction back through the same two.
#pragma once
#include <cstddef>
#include <vector>

#include "grid/decomp.hpp"

namespace gf {

std::vector<unsigned char> gather_global(const Decomp& d, const std::vector<unsigned char>& local,
                                         std::size_t elem);
std::vector<unsigned char> local_block(const Decomp& d, const std::vector<unsigned char>& global,
                                       std::size_t elem);
// The inverse of gather_global: rank 0 holds the global array (the others
// pass anything) and every rank gets its padded block of it, halo included
// (local_block of each rank, cut on rank 0 and sent).
std::vector<unsigned char> scatter_global(const Decomp& d, const std::vector<unsigned char>& global,
                                          std::size_t elem);

}  // namespace gf
