// Splitting a case over MPI ranks: the halo a case needs, the checked
// decomposition, and the case as one rank runs it. The Decomp itself (the
// blocks, the neighbours) is grid/decomp.hpp; this is the part that reads a
// case, so it sits on the solvers' floor.
#pragma once
#include "grid/decomp.hpp"
#include "io/case.hpp"

namespace gf {

// The most steps a temporally blocked pass of case c may take (the halos of
// a run over MPI ranks are this many stencil radii deep, grid/decomp.hpp):
// heat.time_block, stencil.time_block or laplace.time_block where the case
// sets it; with auto, kAutoTimeBlockDeepest for the cases that have such
// passes (explicit 2D and 3D heat, stencils in star5's or star7's order, 2D
// and 3D Jacobi) and run at least kAutoTimeBlockMinSteps steps (max_iters);
// 1 otherwise.
int time_block_depth(const Case& c);

// The layers of neighbours one step of a case reads: its stencil's radius
// (1 for heat and laplace).
int halo_width(const Case& c);

// The decomposition of case c over nranks ranks (grid.ranks when the case
// gives it, else choose_rank_dims, for halos of one step), checked: a
// CaseError when grid.ranks does not multiply to nranks, splits an axis into
// more blocks than it has points, or gives a block narrower than the halo;
// when the workload cannot run on several ranks (laplace fft). The halo is
// radius × time_block_depth(c) where the case sets time_block (then a block
// narrower than that is the error), and with auto as deep as the thinnest
// split block allows, down to one step. A raymarch case is split like any
// other, though only rank 0 renders (solvers/raymarch.hpp).
Decomp decompose(const Case& c, int nranks, int rank);

// The case as rank d.rank runs it: its grid is the padded block, its faces
// shared with other ranks are marked periodic (read through the halo, no rule),
// in the case's boundary and in each pde field's own.
Case local_case(const Case& c, const Decomp& d);

}  // namespace gf
