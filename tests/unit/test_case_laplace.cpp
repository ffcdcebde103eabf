// The laplace section of the case loader, and the implicit heat schemes:
// defaults, resolution (ω, float32 tolerance), each new case error with its
// exact message, and the scheme and method names parsed into enums.
#include <catch2/catch.hpp>

#include <cmath>
#include <iterator>
#include <string>
#include <string_view>

#include "io/case.hpp"
#include "io/case_schema.hpp"
#include "solvers/heat.hpp"
#include "tests/unit/case_test_util.hpp"

using gf::test::error_of;
using gf::test::load;

namespace {

// A valid 2D laplace case whose laplace lines the tests replace.
//   1 workload: laplace
//   2 grid: {dims: [9, 9]}
//   3 boundary:
//   4   default: ...
//   5 laplace:
//   6   <lines>
std::string lap(const std::string& lines, const std::string& bc = "{type: dirichlet, value: 0}",
                const std::string& dims = "[9, 9]") {
  return "workload: laplace\ngrid: {dims: " + dims + "}\nboundary:\n  default: " + bc +
         "\nlaplace:\n" + lines + "\n";
}

}  // namespace

TEST_CASE("laplace defaults and the resolved case", "[laplace-case]") {
  const gf::Case c = load("workload: laplace\ngrid: {dims: [129, 129]}\n");
  CHECK(c.workload == gf::Workload::Laplace);
  CHECK(c.laplace.method == gf::LaplaceMethod::Jacobi);
  CHECK(c.laplace.rhs.text == "0");
  CHECK(c.laplace.tolerance == 1e-8);
  CHECK(c.laplace.max_iters == 100000);
  CHECK(c.laplace.check_every == 50);
  CHECK(c.laplace.omega_auto);
  CHECK(c.laplace.omega == Approx(2 / (1 + std::sin(M_PI / 128))).epsilon(1e-14));
  CHECK_FALSE(c.laplace.remove_mean);
  CHECK_FALSE(c.laplace.singular);
  // the resolved case loads back into the same case
  const gf::Case again = load(c.resolved_yaml);
  CHECK(again.laplace.method == c.laplace.method);
  CHECK(again.laplace.omega == c.laplace.omega);
  CHECK(again.resolved_yaml == c.resolved_yaml);
  CHECK(c.resolved_yaml.find("omega: auto  # 1.95") != std::string::npos);
}

TEST_CASE("laplace keys are read and checked", "[laplace-case]") {
  const gf::Case c = load(lap("  method: sor\n  rhs: \"x*y\"\n  tolerance: 1.0e-6\n  max_iters: 77\n"
                              "  check_every: 7\n  omega: 1.5\n  remove_mean: false"));
  CHECK(c.laplace.method == gf::LaplaceMethod::Sor);
  CHECK(c.laplace.rhs.text == "x*y");
  CHECK(c.laplace.tolerance == 1e-6);
  CHECK(c.laplace.max_iters == 77);
  CHECK(c.laplace.check_every == 7);
  CHECK_FALSE(c.laplace.omega_auto);
  CHECK(c.laplace.omega == 1.5);
  // float32 cannot reach 1e-8: the tolerance is raised, and the resolved case says so
  const gf::Case f = load(lap("  method: cg") + "precision: float32\n");
  CHECK(f.laplace.tolerance == gf::kFloat32ToleranceFloor);
  CHECK(f.laplace.tolerance_asked == 1e-8);
  CHECK(f.resolved_yaml.find("tolerance: 1e-05  # float32: raised from 1e-08") != std::string::npos);
  // cg's operator: matrix-free unless csr is asked; echoed for cg
  CHECK(f.laplace.op == gf::LaplaceOperator::MatrixFree);
  CHECK(f.resolved_yaml.find("operator: matrix-free") != std::string::npos);
  const gf::Case o = load(lap("  method: cg\n  operator: csr"));
  CHECK(o.laplace.op == gf::LaplaceOperator::Csr);
  CHECK(o.resolved_yaml.find("operator: csr") != std::string::npos);
  CHECK(load(o.resolved_yaml).resolved_yaml == o.resolved_yaml);
  // multigrid's precision: uniform unless mixed is asked; echoed for multigrid
  const gf::Case mg = load(lap("  method: multigrid\n  precision: mixed"));
  CHECK(mg.laplace.mixed);
  CHECK(mg.resolved_yaml.find("precision: mixed") != std::string::npos);
  CHECK(load(mg.resolved_yaml).resolved_yaml == mg.resolved_yaml);
  CHECK_FALSE(load(lap("  method: multigrid")).laplace.mixed);
  // periodic with a zero-mean f; remove_mean accepts a non-zero one
  const gf::Case p = load(lap("  method: fft\n  rhs: \"sin(2*pi*x)\"", "{type: periodic}", "[8, 8]"));
  CHECK(p.laplace.singular);
  CHECK(std::fabs(p.laplace.incompatible_mean) < 1e-15);
  const gf::Case m = load(lap("  method: fft\n  rhs: \"1 + x\"\n  remove_mean: true",
                              "{type: periodic}", "[8, 8]"));
  CHECK(m.laplace.incompatible_mean == Approx(1 + 3.5 / 8));
}

TEST_CASE("laplace case errors", "[laplace-case]") {
  CHECK(error_of(lap("  method: fft")) ==
        "case.yaml:6:11: laplace.method: fft needs every axis periodic (the FFT solve is "
        "periodic); boundary x- is dirichlet");
  CHECK(error_of(lap("  method: fft", "{type: periodic}\n  y: {type: neumann}")) ==
        "case.yaml:7:11: laplace.method: fft needs every axis periodic (the FFT solve is "
        "periodic); boundary y- is neumann");
  CHECK(error_of(lap("  method: fft\n  rhs: \"1 + sin(2*pi*x)\"", "{type: periodic}", "[8, 8]")) ==
        "case.yaml:7:8: laplace.rhs: the right-hand side has mean 1, not 0: with every face "
        "periodic ∇²u = f has no solution; make its mean 0 or set laplace.remove_mean: true");
  CHECK(error_of(lap("  method: cg\n  rhs: \"1\"", "{type: neumann}")) ==
        "case.yaml:7:8: laplace.rhs: the right-hand side does not balance the Neumann fluxes "
        "(they differ by a mean of 1): with no Dirichlet face ∇²u = f has no solution; change f "
        "or the gradients, or set laplace.remove_mean: true");
  CHECK(error_of(lap("  tolerance: -1")) ==
        "case.yaml:6:14: laplace.tolerance: expected a number > 0, got -1");
  CHECK(error_of(lap("  tolerance: 0")) ==
        "case.yaml:6:14: laplace.tolerance: expected a number > 0, got 0");
  CHECK(error_of(lap("  method: sor\n  omega: 2")) ==
        "case.yaml:7:10: laplace.omega: expected auto or a number in (0, 2), got '2'");
  CHECK(error_of(lap("  method: sor\n  omega: -0.5")) ==
        "case.yaml:7:10: laplace.omega: expected auto or a number in (0, 2), got '-0.5'");
  CHECK(error_of(lap("  omega: fast")) ==
        "case.yaml:6:10: laplace.omega: expected auto or a number in (0, 2), got 'fast'");
  CHECK(error_of(lap("  method: sor", "{type: periodic}", "[9, 8]")) ==
        "case.yaml:6:11: laplace.method: sor colours the grid red-black, which needs an even "
        "number of points on a periodic axis; grid.dims[0] is 9");
  CHECK(error_of(lap("  method: multigrids")) ==
        "case.yaml:6:11: laplace.method: expected one of jacobi, sor, cg, fft, multigrid, got "
        "'multigrids'; did you mean 'multigrid'?");
  CHECK(error_of(lap("  max_iters: 0")) ==
        "case.yaml:6:14: laplace.max_iters: expected an integer ≥ 1, got 0");
  CHECK(error_of(lap("  check_every: 0")) ==
        "case.yaml:6:16: laplace.check_every: expected an integer ≥ 1, got 0");
  CHECK(error_of(lap("  remove_mean: maybe")) ==
        "case.yaml:6:16: laplace.remove_mean: expected true or false, got 'maybe'");
  CHECK(error_of(lap("  tolerence: 1e-6")) ==
        "case.yaml:6:3: laplace.tolerence: unknown key; did you mean 'tolerance'?");
  CHECK(error_of(lap("  rhs: \"sin(q)\"")) ==
        "case.yaml:6:8: laplace.rhs: cannot parse \"sin(q)\": unknown name 'q'");
  CHECK(error_of(lap("  method: multigrid\n  operator: csr")) ==
        "case.yaml:7:13: laplace.operator: operator is for the cg method, not multigrid");
  CHECK(error_of(lap("  method: cg\n  operator: sparse")) ==
        "case.yaml:7:13: laplace.operator: expected one of matrix-free, csr, got 'sparse'");
  CHECK(error_of(lap("  method: cg\n  precision: mixed")) ==
        "case.yaml:7:14: laplace.precision: mixed is for the multigrid method, not cg");
  CHECK(error_of(lap("  method: multigrid\n  precision: mixed", "{type: neumann}")) ==
        "case.yaml:7:14: laplace.precision: mixed needs a Dirichlet face (a solution fixed up to a "
        "constant is solved in the case's precision)");
  CHECK(error_of(lap("  method: multigrid\n  precision: double")) ==
        "case.yaml:7:14: laplace.precision: expected one of uniform, mixed, got 'double'");
  CHECK(error_of(lap("  method: cg") + "heat: {alpha: 1, steps: 1}\n") ==
        "case.yaml:7:1: heat: section 'heat' does not apply to workload laplace");
}

TEST_CASE("implicit heat schemes: any dt, a number required, the solver resolved", "[laplace-case]") {
  const std::string base = "workload: heat\ngrid: {dims: [11, 11]}\nheat:\n  alpha: 1.0\n  steps: 10\n";
  const gf::Case c = load(base + "  scheme: crank-nicolson\n  dt: 1.0");  // 400× the limit
  CHECK(c.heat.implicit());
  CHECK(c.heat.theta() == 0.5);
  CHECK(c.heat.dt == 1.0);
  CHECK(c.heat.solver_tolerance == 1e-10);
  CHECK(c.heat.solver_max_iters == 1000);
  CHECK(c.resolved_yaml.find("solver: {tolerance: 1e-10, max_iters: 1000, operator: matrix-free, "
                             "preconditioner: auto}") !=
        std::string::npos);
  CHECK(load(c.resolved_yaml).resolved_yaml == c.resolved_yaml);
  const gf::Case b = load(base + "  scheme: implicit\n  dt: 0.1\n  solver: {max_iters: 5}");
  CHECK(b.heat.theta() == 1.0);
  CHECK(b.heat.solver_max_iters == 5);
  CHECK(b.heat.solver_operator == gf::LaplaceOperator::MatrixFree);
  const gf::Case o = load(base + "  scheme: implicit\n  dt: 0.1\n  solver: {operator: csr}");
  CHECK(o.heat.solver_operator == gf::LaplaceOperator::Csr);
  CHECK(o.heat.solver_preconditioner == gf::LaplacePrecond::Auto);
  const gf::Case mg = load(base + "  scheme: implicit\n  dt: 0.1\n  solver: {preconditioner: multigrid}");
  CHECK(mg.heat.solver_preconditioner == gf::LaplacePrecond::Multigrid);
  CHECK(mg.resolved_yaml.find("preconditioner: multigrid}") != std::string::npos);
  CHECK(error_of(base + "  scheme: implicit\n  dt: 0.1\n  solver: {preconditioner: ilu}") ==
        "case.yaml:8:28: heat.solver.preconditioner: expected one of auto, none, jacobi, "
        "multigrid, got 'ilu'");
  // auto, resolved by the solver (heat_preconditioner): multigrid on a GPU from
  // kHeatMultigridPoints points, Jacobi below them, on the CPU and over ranks
  const std::string big = "workload: heat\ngrid: {dims: [128, 128, 128]}\nheat:\n  alpha: 1.0\n"
                          "  steps: 10\n  scheme: implicit\n  dt: 0.1\n";
  const gf::Case large = load(big);
  REQUIRE(large.grid.size() >= gf::kHeatMultigridPoints);
  CHECK(gf::heat_preconditioner(large, true, false) == gf::LaplacePrecond::Multigrid);
  CHECK(gf::heat_preconditioner(large, false, false) == gf::LaplacePrecond::Jacobi);
  CHECK(gf::heat_preconditioner(large, true, true) == gf::LaplacePrecond::Jacobi);
  CHECK(gf::heat_preconditioner(o, true, false) == gf::LaplacePrecond::Jacobi);
  CHECK(gf::heat_preconditioner(mg, false, true) == gf::LaplacePrecond::Multigrid);
  const gf::Case none = load(big + "  solver: {preconditioner: none}");
  CHECK(gf::heat_preconditioner(none, true, false) == gf::LaplacePrecond::None);
  CHECK(gf::heat_setup_line(large).find("preconditioner auto: multigrid on a GPU, jacobi on "
                                        "the CPU") != std::string::npos);
  CHECK(gf::heat_setup_line(o).find("preconditioner auto: jacobi (multigrid on a GPU from "
                                    "2000000 points)") != std::string::npos);
  CHECK(load(o.resolved_yaml).resolved_yaml == o.resolved_yaml);
  CHECK(error_of(base + "  scheme: implicit\n  dt: 0.1\n  solver: {operator: ell}") ==
        "case.yaml:8:22: heat.solver.operator: expected one of matrix-free, csr, got 'ell'");
  CHECK(error_of(base + "  scheme: implicit") ==
        "case.yaml:6:11: heat.scheme: scheme implicit needs a number for dt (auto is for the "
        "explicit scheme); any dt > 0 is stable");
  CHECK(error_of(base + "  scheme: crank-nicolson\n  dt: auto") ==
        "case.yaml:7:7: heat.dt: scheme crank-nicolson needs a number for dt (auto is for the "
        "explicit scheme); any dt > 0 is stable");
  CHECK(error_of(base + "  scheme: implicit\n  dt: 0.1\n  solver: {tolerance: -1}") ==
        "case.yaml:8:23: heat.solver.tolerance: expected a number > 0, got -1");
}

TEST_CASE("heat schemes and laplace methods are parsed once, and named as the case names them",
          "[laplace-case]") {
  using gf::HeatScheme;
  using gf::LaplaceMethod;
  // every value round-trips through its name, and the names are the ones the
  // schema accepts, in its order (its messages list them)
  const HeatScheme schemes[] = {HeatScheme::Explicit, HeatScheme::Implicit,
                                HeatScheme::CrankNicolson};
  REQUIRE(std::size(gf::schema::kSchemes) == std::size(schemes));
  for (std::size_t i = 0; i < std::size(schemes); ++i) {
    CHECK(gf::to_string(schemes[i]) == gf::schema::kSchemes[i]);
    CHECK(gf::parse_heat_scheme(gf::to_string(schemes[i])) == schemes[i]);
  }
  const LaplaceMethod methods[] = {LaplaceMethod::Jacobi, LaplaceMethod::Sor, LaplaceMethod::Cg,
                                   LaplaceMethod::Fft, LaplaceMethod::Multigrid};
  REQUIRE(std::size(gf::schema::kLaplaceMethods) == std::size(methods));
  for (std::size_t i = 0; i < std::size(methods); ++i) {
    CHECK(gf::to_string(methods[i]) == gf::schema::kLaplaceMethods[i]);
    CHECK(gf::parse_laplace_method(gf::to_string(methods[i])) == methods[i]);
  }
  for (std::string_view bad :
       {"", "rk4", "Explicit", "crank_nicolson", "sor ", "multigrids", "FFT"}) {
    CHECK_FALSE(gf::parse_heat_scheme(bad));
    CHECK_FALSE(gf::parse_laplace_method(bad));
  }
  // the loader reads each name into its value and writes the name back
  const std::string heat =
      "workload: heat\ngrid: {dims: [11, 11]}\nheat: {alpha: 1, steps: 2, dt: 0.001}\n";
  const double theta[] = {0.0, 1.0, 0.5};
  for (std::size_t i = 0; i < std::size(schemes); ++i) {
    const std::string name = gf::to_string(schemes[i]);
    const gf::Case c = load(heat, {"heat.scheme=" + name});
    CHECK(c.heat.scheme == schemes[i]);
    CHECK(c.heat.implicit() == (schemes[i] != HeatScheme::Explicit));
    CHECK(c.heat.theta() == theta[i]);
    CHECK(c.resolved_yaml.find("\n  scheme: " + name + "\n") != std::string::npos);
  }
  for (LaplaceMethod m : methods) {
    const std::string name = gf::to_string(m);
    const gf::Case c = load(lap("  method: " + name, "{type: periodic}", "[8, 8]"));
    CHECK(c.laplace.method == m);
    CHECK(c.resolved_yaml.find("\n  method: " + name + "\n") != std::string::npos);
  }
}
