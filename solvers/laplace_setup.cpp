#include "solvers/laplace_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "io/expression.hpp"
#include "solvers/expr_fill.hpp"
#include "core/threads.hpp"

namespace gf {

double optimal_sor_omega(const Grid& g, const std::array<FaceBc, kFaces>& bc) {
  const double pi = 3.14159265358979323846;
  double lowest[3] = {0, 0, 0}, nonzero[3] = {0, 0, 0}, sum = 0;
  bool constant_everywhere = true;  // every axis admits a constant mode
  for (int a = 0; a < g.ndim; ++a) {
    const BcType lo = bc[2 * a].type, hi = bc[2 * a + 1].type;
    const double n = double(g.n[a]);
    if (lo == BcType::Periodic) {
      nonzero[a] = 2 * pi / n;
    } else if (lo == BcType::Dirichlet && hi == BcType::Dirichlet) {
      lowest[a] = nonzero[a] = pi / (n - 1);
    } else if (lo == BcType::Neumann && hi == BcType::Neumann) {
      nonzero[a] = pi / (n - 1);
    } else {
      lowest[a] = nonzero[a] = pi / (2 * (n - 1));
    }
    if (lowest[a] > 0) constant_everywhere = false;
    sum += 1 / (g.h[a] * g.h[a]);
  }
  auto rho_of = [&](const double* theta) {
    double r = 0;
    for (int a = 0; a < g.ndim; ++a) r += std::cos(theta[a]) / (g.h[a] * g.h[a]);
    return r / sum;
  };
  double rho = rho_of(lowest);
  if (constant_everywhere) {  // the constant is the null space: the next mode counts
    rho = 0;
    for (int b = 0; b < g.ndim; ++b) {
      double theta[3] = {0, 0, 0};
      theta[b] = nonzero[b];
      rho = std::max(rho, rho_of(theta));
    }
  }
  return 2 / (1 + std::sqrt(std::max(0.0, 1 - rho * rho)));
}

template <class T>
double incompatible_mean(const Grid& g, const std::array<FaceBc, kFaces>& bc, const T* f) {
  double swf = 0, sw = 0;
  const std::int64_t nx = g.n[0], ny = g.n[1], nz = g.n[2];
#pragma omp parallel for collapse(2) reduction(+ : swf, sw) schedule(static) \
    num_threads(cpu::threads_for(g.size()))
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t pos[3] = {i, j, k};
        double w = 1, c = 0;
        for (int a = 0; a < g.ndim; ++a)
          for (int side = 0; side < 2; ++side) {
            const FaceBc& b = bc[2 * a + side];
            if (b.type == BcType::Neumann && pos[a] == (side ? g.n[a] - 1 : 0)) {
              w *= 0.5;
              c += 2 * b.gradient / g.h[a];
            }
          }
        swf += w * (double(f[g.index(i, j, k)]) - c);
        sw += w;
      }
  return swf / sw;
}
template double incompatible_mean<float>(const Grid&, const std::array<FaceBc, kFaces>&,
                                         const float*);
template double incompatible_mean<double>(const Grid&, const std::array<FaceBc, kFaces>&,
                                          const double*);

// With no Dirichlet face, ∇²u = f fixes u up to a constant only, and has a
// solution only when f balances the boundary flux: Σ W·(f − c) = 0, c the
// Neumann terms. The check samples f once, in double.
void resolve_laplace(Case& c) {
  LaplaceSpec& L = c.laplace;
  if (L.omega_auto) L.omega = optimal_sor_omega(c.grid, c.boundary);
  if (!L.singular) return;
  std::vector<double> f(static_cast<std::size_t>(c.grid.size()));
  sample_expression<double>(L.rhs, c.parameters, c.grid, f.data());
  L.incompatible_mean = incompatible_mean(c.grid, c.boundary, f.data());
  double scale = 0;
  for (double v : f) scale = std::max(scale, std::abs(v));
  for (int face = 0; face < 2 * c.grid.ndim; ++face)
    if (c.boundary[face].type == BcType::Neumann)
      scale = std::max(scale, std::abs(c.boundary[face].gradient) * 2.0 / c.grid.h[face / 2]);
  if (L.remove_mean || !(std::abs(L.incompatible_mean) > 1e-9 * scale)) return;
  bool periodic = true;
  for (int a = 0; a < c.grid.ndim; ++a) periodic = periodic && c.grid.periodic[a];
  if (periodic)
    throw CaseError(L.balance_loc, L.balance_key,
                    fmt::format("the right-hand side has mean {:.6g}, not 0: with every face "
                                "periodic ∇²u = f has no solution; make its mean 0 or set "
                                "laplace.remove_mean: true",
                                L.incompatible_mean));
  throw CaseError(L.balance_loc, L.balance_key,
                  fmt::format("the right-hand side does not balance the Neumann fluxes (they "
                              "differ by a mean of {:.6g}): with no Dirichlet face ∇²u = f has no "
                              "solution; change f or the gradients, or set "
                              "laplace.remove_mean: true",
                              L.incompatible_mean));
}

}  // namespace gf
