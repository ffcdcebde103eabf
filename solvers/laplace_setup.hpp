// The values of a laplace case that need the numerics, worked out once the
// case is loaded (io/ reads and checks the file; solvers/prepare.hpp calls
// resolve_laplace): the optimal SOR ω of the grid, and the part of f that the
// boundaries cannot balance when no face is Dirichlet.
#pragma once
#include <array>

#include "grid/grid.hpp"
#include "io/case.hpp"

namespace gf {

// The optimal SOR ω for the grid and its boundaries: 2/(1 + √(1 − ρ²)) with
// ρ the Jacobi iteration's spectral radius on the unknowns (the smallest
// mode allowed on each axis: π/(n−1) between walls, π/(2(n−1)) between a
// Dirichlet and a Neumann face, 2π/n periodic, 0 when the axis admits a
// constant and another axis does not).
double optimal_sor_omega(const Grid& g, const std::array<FaceBc, kFaces>& bc);

// With no Dirichlet face: the part of f that the boundaries cannot balance,
// (Σᵢ Wᵢ·(fᵢ − cᵢ)) / Σᵢ Wᵢ, with W the symmetrising weights and c the Neumann
// terms 2g/h of ops/laplace.hpp; f holds one value per grid point. ∇²u = f
// has a solution only when it is 0 (a plain mean of f when every axis is periodic).
template <class T>
double incompatible_mean(const Grid& g, const std::array<FaceBc, kFaces>& bc, const T* f);

// Of a laplace case: laplace.omega when auto, and with no Dirichlet face
// laplace.incompatible_mean, sampling f once in double; a CaseError at
// laplace.rhs (balance_loc) when f does not balance the boundaries and
// remove_mean is false.
void resolve_laplace(Case& c);

}  // namespace gf
