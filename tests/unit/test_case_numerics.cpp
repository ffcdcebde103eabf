// The values of a case that need the numerics, worked out on the solvers'
// floor after loading: the optimal SOR ω and the incompatible mean of f
// (solvers/laplace_setup.hpp), prepare_case (solvers/prepare.hpp), and the
// depth of a temporally blocked pass (time_block_depth, solvers/decompose.hpp).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "solvers/decompose.hpp"
#include "solvers/laplace.hpp"
#include "solvers/laplace_setup.hpp"
#include "solvers/prepare.hpp"
#include "tests/unit/case_test_util.hpp"

using gf::test::error_of;

namespace {

const double kPi = 3.14159265358979323846;

// Loaded by io/ alone: not prepared.
gf::Case loaded(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return gf::load_case_text(text, "case.yaml", overrides);
}

// The ω of 2/(1 + √(1 − ρ²)).
double omega_of(double rho) { return 2 / (1 + std::sqrt(1 - rho * rho)); }

}  // namespace

TEST_CASE("optimal_sor_omega: the Jacobi spectral radius of each boundary mix", "[prepare]") {
  // Dirichlet walls, equal spacing: ρ = cos(π/(n−1)), ω = 2/(1 + sin(π/(n−1)))
  gf::Case c = loaded("workload: laplace\ngrid: {dims: [33]}\n");
  CHECK(gf::optimal_sor_omega(c.grid, c.boundary) ==
        Approx(2 / (1 + std::sin(kPi / 32))).epsilon(1e-14));
  // unequal spacing in 2D: the cosines weighted by 1/h²
  c = loaded("workload: laplace\ngrid: {dims: [17, 9], extent: [1, 2]}\n");
  const double wx = 1 / (c.grid.h[0] * c.grid.h[0]), wy = 1 / (c.grid.h[1] * c.grid.h[1]);
  CHECK(gf::optimal_sor_omega(c.grid, c.boundary) ==
        Approx(omega_of((wx * std::cos(kPi / 16) + wy * std::cos(kPi / 8)) / (wx + wy)))
            .epsilon(1e-14));
  // a Dirichlet face against a Neumann one: a quarter wave, π/(2(n−1))
  c = loaded("workload: laplace\ngrid: {dims: [21]}\nboundary: {x+: {type: neumann}}\n");
  CHECK(gf::optimal_sor_omega(c.grid, c.boundary) ==
        Approx(omega_of(std::cos(kPi / 40))).epsilon(1e-14));
  // a periodic axis beside a walled one admits the constant along it (θ = 0)
  c = loaded("workload: laplace\ngrid: {dims: [16, 11]}\nboundary: {x: {type: periodic}}\n");
  const double px = 1 / (c.grid.h[0] * c.grid.h[0]), py = 1 / (c.grid.h[1] * c.grid.h[1]);
  CHECK(gf::optimal_sor_omega(c.grid, c.boundary) ==
        Approx(omega_of((px + py * std::cos(kPi / 10)) / (px + py))).epsilon(1e-14));
  // every axis admits a constant (Neumann and periodic): the next mode counts,
  // the slowest of one axis at a time
  c = loaded(
      "workload: laplace\ngrid: {dims: [16, 11]}\n"
      "boundary: {x: {type: periodic}, y: {type: neumann}}\n");
  const double rho_x = (px * std::cos(2 * kPi / 16) + py) / (px + py);
  const double rho_y = (px + py * std::cos(kPi / 10)) / (px + py);
  CHECK(gf::optimal_sor_omega(c.grid, c.boundary) ==
        Approx(omega_of(std::max(rho_x, rho_y))).epsilon(1e-14));
}

TEST_CASE("incompatible_mean: the mean of f the boundaries cannot balance", "[prepare]") {
  // every axis periodic: the plain mean, in either precision
  gf::Case c =
      loaded("workload: laplace\ngrid: {dims: [4, 3]}\nboundary: {default: {type: periodic}}\n");
  const std::vector<double> f = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> ff(f.begin(), f.end());
  CHECK(gf::incompatible_mean(c.grid, c.boundary, f.data()) == Approx(6.5).epsilon(1e-15));
  CHECK(gf::incompatible_mean(c.grid, c.boundary, ff.data()) == Approx(6.5).epsilon(1e-7));
  // Neumann ends weigh half and bring 2g/h: f = 1 on [0, 1] with ∂u/∂n = 0.5 at
  // both ends balances (∫f = ∮∂u/∂n); with g = 0 the mismatch is all of f's mean
  c = loaded(
      "workload: laplace\ngrid: {dims: [11]}\n"
      "boundary: {default: {type: neumann, gradient: 0.5}}\n");
  const std::vector<double> ones(11, 1.0);
  CHECK(std::fabs(gf::incompatible_mean(c.grid, c.boundary, ones.data())) < 1e-14);
  c = loaded("workload: laplace\ngrid: {dims: [11]}\nboundary: {default: {type: neumann}}\n");
  CHECK(gf::incompatible_mean(c.grid, c.boundary, ones.data()) == Approx(1).epsilon(1e-15));
}

TEST_CASE("prepare_case resolves the auto ω and checks f's balance after loading", "[prepare]") {
  const std::string sor = "workload: laplace\ngrid: {dims: [9, 9]}\nlaplace: {method: sor}\n";
  const gf::Case raw = loaded(sor);
  CHECK(raw.laplace.omega_auto);
  CHECK(raw.laplace.omega == 0);  // left to prepare_case
  CHECK(raw.resolved_yaml.find("  omega: auto\n") != std::string::npos);
  const gf::Case c = gf::prepare_case(raw);
  CHECK(c.laplace.omega == gf::optimal_sor_omega(c.grid, c.boundary));
  CHECK(c.laplace.omega == Approx(2 / (1 + std::sin(kPi / 8))).epsilon(1e-14));
  CHECK(c.resolved_yaml.find("  omega: auto  # " + fmt::format("{}", c.laplace.omega) + "\n") !=
        std::string::npos);
  // the resolved case, loaded and prepared again, is the same case
  const gf::Case again = gf::prepare_case(loaded(c.resolved_yaml));
  CHECK(again.resolved_yaml == c.resolved_yaml);
  CHECK(again.laplace.omega == c.laplace.omega);
  // a set ω is kept; other workloads pass through as loaded
  CHECK(gf::prepare_case(loaded(sor, {"laplace.omega=1.25"})).laplace.omega == 1.25);
  const std::string heat = "workload: heat\ngrid: {dims: [9]}\nheat: {alpha: 1, steps: 3}\n";
  CHECK(gf::prepare_case(loaded(heat)).resolved_yaml == loaded(heat).resolved_yaml);

  // An unbalanced f loads (io/ does not sample it) and fails in prepare_case,
  // at laplace.rhs, else at the laplace section, else at the case.
  const std::string neumann =
      "workload: laplace\ngrid: {dims: [9, 9]}\n"
      "boundary: {default: {type: neumann, gradient: 1}}\n";
  CHECK_NOTHROW(loaded(neumann + "laplace: {method: cg, rhs: \"1\"}\n"));
  auto unbalanced = [](const std::string& at, const std::string& mean) {
    return at +
           ": the right-hand side does not balance the Neumann fluxes (they differ by a "
           "mean of " +
           mean +
           "): with no Dirichlet face ∇²u = f has no solution; change "
           "f or the gradients, or set laplace.remove_mean: true";
  };
  CHECK(error_of(neumann + "laplace: {method: cg, rhs: \"1\"}\n") ==
        unbalanced("case.yaml:4:28: laplace.rhs", "-3"));
  CHECK(error_of(neumann + "laplace:\n  method: cg\n") ==
        unbalanced("case.yaml:5:3: laplace", "-4"));
  CHECK(error_of(neumann) == unbalanced("case.yaml:1:1", "-4"));
  // remove_mean takes the mismatch out instead
  CHECK(gf::test::load(neumann + "laplace: {remove_mean: true}\n").laplace.incompatible_mean ==
        Approx(-4).epsilon(1e-12));
}

TEST_CASE("an SOR solve of a case that was not prepared is a logic error", "[prepare]") {
  const gf::Case raw = loaded("workload: laplace\ngrid: {dims: [9, 9]}\nlaplace: {method: sor}\n");
  auto be = gf::make_cpu_backend<double>();
  CHECK_THROWS_AS(gf::LaplaceSolver<double>(raw, *be), std::logic_error);
  CHECK_NOTHROW(gf::LaplaceSolver<double>(gf::prepare_case(raw), *be));
}

TEST_CASE("time_block_depth: the deepest pass of the cases that have passes", "[prepare]") {
  const std::string heat2d =
      "workload: heat\ngrid: {dims: [16, 16]}\nheat: {alpha: 1, steps: 200}\n";
  CHECK(gf::time_block_depth(loaded(heat2d)) == gf::kAutoTimeBlockDeepest);
  CHECK(gf::time_block_depth(loaded(heat2d, {"heat.steps=199"})) == 1);  // too few steps for auto
  CHECK(gf::time_block_depth(loaded(heat2d, {"heat.time_block=3"})) == 3);
  CHECK(gf::time_block_depth(loaded(heat2d, {"heat.steps=5", "heat.time_block=2"})) == 2);
  CHECK(gf::time_block_depth(loaded(heat2d, {"heat.scheme=implicit", "heat.dt=0.01"})) == 1);
  CHECK(gf::time_block_depth(loaded(heat2d, {"grid.dims=[16]"})) == 1);  // 1D: no passes
  // stencils: star5 and star7 (or points in their order) only
  const std::string star7 =
      "workload: stencil\ngrid: {dims: [12, 12, 12]}\nstencil: {preset: star7, steps: 300}\n";
  CHECK(gf::time_block_depth(loaded(star7)) == gf::kAutoTimeBlockDeepest);
  CHECK(gf::time_block_depth(loaded(star7, {"stencil.preset=box27"})) == 1);
  CHECK(gf::time_block_depth(loaded(star7, {"grid.dims=[12, 12]", "stencil.preset=star9"})) == 1);
  CHECK(gf::time_block_depth(loaded(star7, {"grid.dims=[12, 12]", "stencil.preset=star5"})) ==
        gf::kAutoTimeBlockDeepest);
  // laplace: Jacobi in 2D and 3D, by max_iters
  const std::string jacobi = "workload: laplace\ngrid: {dims: [9, 9, 9]}\n";
  CHECK(gf::time_block_depth(loaded(jacobi)) == gf::kAutoTimeBlockDeepest);
  CHECK(gf::time_block_depth(loaded(jacobi, {"laplace.max_iters=199"})) == 1);
  CHECK(gf::time_block_depth(loaded(jacobi, {"laplace.method=sor"})) == 1);
  CHECK(gf::time_block_depth(loaded(jacobi, {"grid.dims=[9]"})) == 1);
}
