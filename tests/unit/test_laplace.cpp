// The Laplace/Poisson solvers on the CPU reference executor: every method
// against analytic solutions with observed orders, the iteration counts that
// tell the methods apart, the symmetric operator CG relies on, and the
// implicit heat schemes that share its CG.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "solvers/heat.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"
#include "tests/unit/heat_test_util.hpp"

using namespace gf;

namespace {

const double kPi = 3.14159265358979323846;

std::string fmt_double(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

struct Solved {
  std::vector<double> u;
  std::int64_t iterations = 0;
  LaplaceStatus status = LaplaceStatus::Running;
  double residual = 0, mean_removed = 0;
};

// A case as the app runs it: loaded, then prepared (the auto SOR ω, f's balance).
Case load_prepared(const std::string& text, const std::string& label) {
  return prepare_case(load_case_text(text, label));
}

Solved solve_cpu(const Case& c) {
  auto be = make_cpu_backend<double>();
  LaplaceSolver<double> s(c, *be);
  while (!s.finished()) s.iterate(c.laplace.check_every);
  s.finish();
  Solved out;
  out.u.resize(s.field().size());
  be->download(s.field(), out.u.data());
  out.iterations = s.iterations();
  out.status = s.status();
  out.residual = s.residual();
  out.mean_removed = s.mean_removed();
  return out;
}

double max_error(const Grid& g, const std::vector<double>& u, auto&& exact) {
  double e = 0;
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i)
        e = std::max(e, std::fabs(u[g.index(i, j, k)] -
                                  exact(g.coord(0, i), g.coord(1, j), g.coord(2, k))));
  return e;
}

std::vector<double> orders(const std::vector<double>& err) {
  std::vector<double> p;
  for (std::size_t i = 0; i + 1 < err.size(); ++i) p.push_back(std::log2(err[i] / err[i + 1]));
  return p;
}

std::string dims2(int n) { return "[" + std::to_string(n) + ", " + std::to_string(n) + "]"; }

// u = sin(πx)·sinh(πy)/sinh(π) on the unit square, Dirichlet from u itself.
Case plate_case(const std::string& method, int n, double tol = 1e-11) {
  return load_prepared("workload: laplace\ngrid: {dims: " + dims2(n) +
                            "}\nboundary:\n  default: {type: dirichlet, value: 0}\n"
                            "  y+: {type: dirichlet, value: \"sin(pi*x)\"}\n"
                            "laplace: {method: " + method + ", tolerance: " +
                            fmt_double(tol) + ", check_every: 10, max_iters: 1000000}\n",
                        "plate.yaml");
}

double plate_exact(double x, double y, double) {
  return std::sin(kPi * x) * std::sinh(kPi * y) / std::sinh(kPi);
}

}  // namespace

TEST_CASE("jacobi, sor and cg converge to sin(πx)sinh(πy)/sinh(π) at second order", "[laplace]") {
  for (const std::string method : {"jacobi", "sor", "cg"}) {
    std::vector<double> err;
    for (int n : {9, 17, 33}) {
      const Case c = plate_case(method, n);
      const Solved s = solve_cpu(c);
      REQUIRE(s.status == LaplaceStatus::Converged);
      CHECK(s.residual <= 1e-11);
      err.push_back(max_error(c.grid, s.u, plate_exact));
    }
    INFO(method << ": errors " << err[0] << " " << err[1] << " " << err[2]);
    for (double p : orders(err)) CHECK(p == Approx(2.0).margin(0.1));
    CHECK(err.back() < 3e-4);  // h = 1/32
  }
}

TEST_CASE("Neumann faces with a gradient: x² − y² is reproduced to rounding by every method",
          "[laplace]") {
  // The second-order formula and the mirrored ghost are exact on quadratics:
  // ∂u/∂n = 0 on x-, 2 on x+ (outward), Dirichlet on the y faces.
  for (const std::string method : {"jacobi", "sor", "cg"}) {
    const Case c = load_prepared(
        "workload: laplace\ngrid: {dims: [17, 13]}\nboundary:\n"
        "  x-: {type: neumann, gradient: 0}\n  x+: {type: neumann, gradient: 2}\n"
        "  y: {type: dirichlet, value: \"x^2 - y^2\"}\n"
        "laplace: {method: " + method + ", tolerance: 1.0e-13, check_every: 5}\n",
        "quad.yaml");
    const Solved s = solve_cpu(c);
    REQUIRE(s.status == LaplaceStatus::Converged);
    INFO(method);
    CHECK(max_error(c.grid, s.u, [](double x, double y, double) { return x * x - y * y; }) <
          1e-10);
  }
}

TEST_CASE("Poisson with a right-hand side: u = sin(πx)sin(πy)sin(πz), f = −3π²u, cg in 3D",
          "[laplace]") {
  std::vector<double> err;
  for (int n : {9, 17, 33}) {
    const std::string d = std::to_string(n);
    const Case c = load_prepared("workload: laplace\ngrid: {dims: [" + d + ", " + d + ", " + d +
                                      "]}\nlaplace: {method: cg, rhs: "
                                      "\"-3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)\", "
                                      "tolerance: 1.0e-12}\n",
                                  "poisson3d.yaml");
    const Solved s = solve_cpu(c);
    REQUIRE(s.status == LaplaceStatus::Converged);
    err.push_back(max_error(c.grid, s.u, [](double x, double y, double z) {
      return std::sin(kPi * x) * std::sin(kPi * y) * std::sin(kPi * z);
    }));
  }
  for (double p : orders(err)) CHECK(p == Approx(2.0).margin(0.1));
}

TEST_CASE("fft is spectrally accurate on a periodic manufactured solution", "[laplace]") {
  // u = exp(sin(2πx)) + cos(2πy)·sin(4πx): smooth and periodic, not a finite
  // sum of modes, so the error falls faster than any power of h. On the
  // coarse grids f's grid mean is not quite 0 (aliasing): remove_mean.
  std::vector<double> err;
  for (int n : {8, 16, 32}) {
    const Case c = load_prepared(
        "workload: laplace\ngrid: {dims: " + dims2(n) +
            "}\nboundary: {default: {type: periodic}}\n"
            "laplace:\n  method: fft\n  rhs: \"4*pi^2*(cos(2*pi*x)^2 - sin(2*pi*x))*exp(sin(2*pi*x))"
            " - 20*pi^2*cos(2*pi*y)*sin(4*pi*x)\"\n  remove_mean: true\n",
        "spectral.yaml");
    const Solved s = solve_cpu(c);
    REQUIRE(s.status == LaplaceStatus::Direct);
    CHECK(s.iterations == 1);
    CHECK(s.residual < 1e-13);
    // u is returned with mean 0: compare with the exact u minus its grid mean.
    double mean = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) mean += std::exp(std::sin(2 * kPi * c.grid.coord(0, i)));
    mean /= double(n * n);
    err.push_back(max_error(c.grid, s.u, [&](double x, double y, double) {
      return std::exp(std::sin(2 * kPi * x)) - mean + std::cos(2 * kPi * y) * std::sin(4 * kPi * x);
    }));
  }
  INFO("errors " << err[0] << " " << err[1] << " " << err[2]);
  CHECK(err[1] < 1e-3 * err[0]);
  CHECK(err[2] < 1e-12);
}

TEST_CASE("CG's iteration count grows like n in 2D, not like n²", "[laplace]") {
  std::vector<double> its;
  for (int n : {33, 65, 129}) {
    const Case c = plate_case("cg", n, 1e-8);
    const Solved s = solve_cpu(c);
    REQUIRE(s.status == LaplaceStatus::Converged);
    its.push_back(double(s.iterations));
  }
  INFO("iterations " << its[0] << " " << its[1] << " " << its[2]);
  for (std::size_t i = 0; i + 1 < its.size(); ++i) {
    CHECK(its[i + 1] / its[i] > 1.5);
    CHECK(its[i + 1] / its[i] < 2.6);
  }
}

TEST_CASE("red-black SOR with the optimal ω needs far fewer iterations than Jacobi", "[laplace]") {
  Case jac = plate_case("jacobi", 65, 1e-6), sor = plate_case("sor", 65, 1e-6);
  jac.laplace.check_every = sor.laplace.check_every = 1;
  CHECK(sor.laplace.omega == Approx(2 / (1 + std::sin(kPi / 64))).epsilon(1e-12));
  const Solved a = solve_cpu(jac), b = solve_cpu(sor);
  REQUIRE(a.status == LaplaceStatus::Converged);
  REQUIRE(b.status == LaplaceStatus::Converged);
  INFO("jacobi " << a.iterations << ", sor " << b.iterations);
  CHECK(double(a.iterations) / double(b.iterations) > 20);
  // and a poor ω is slower than the optimal one
  Case slow = sor;
  slow.laplace.omega = 1.5;
  CHECK(solve_cpu(slow).iterations > b.iterations);
}

TEST_CASE("CPU temporally blocked Jacobi equals one sweep at a time, bit for bit", "[laplace]") {
  // every boundary mix of the heat passes' test, an f field or a constant,
  // a periodic last axis shorter than k, rows of 1 and 2 interior points, 3D and 2D
  auto cpu32 = make_cpu_backend<float>();
  auto cpu64 = make_cpu_backend<double>();
  const std::vector<std::vector<std::int64_t>> shapes = {{13, 9, 11}, {3, 4, 3}, {4, 5, 2},
                                                         {13, 11},    {4, 2},    {4099, 3}};
  test::for_each_time_block_case(shapes, [&](int k, const auto& kind, const auto& n, bool field) {
    test::compare_jacobi_time_block<float>(*cpu32, k, n, kind, field);
    test::compare_jacobi_time_block<double>(*cpu64, k, n, kind, field);
  });
  // what it offers: 2D and 3D, k = 2 to 4; auto's deepest is 4
  auto exec = make_laplace_exec(*cpu32);
  LaplaceArgs<float> a;
  a.ndim = 3;
  std::int64_t n[3] = {16, 16, 16};
  CHECK(exec->jacobi_time_block(a, Layout::dense(n), 0) == 4);
  CHECK(exec->jacobi_time_block(a, Layout::dense(n), 5) == 1);
  a.ndim = 2;
  n[2] = 1;
  CHECK(exec->jacobi_time_block(a, Layout::dense(n), 3) == 3);
  a.ndim = 1;
  n[1] = 1;
  CHECK(exec->jacobi_time_block(a, Layout::dense(n), 3) == 1);
}

TEST_CASE("laplace.time_block: the same iterates and residuals as one sweep a pass", "[laplace]") {
  // a box with a Neumann face and a right-hand side field; 130 sweeps in
  // chunks of 50 (passes of 3 and the single sweeps left over)
  const std::string box =
      "workload: laplace\ngrid: {dims: [14, 12, 11]}\nboundary:\n"
      "  default: {type: dirichlet, value: \"x - y\"}\n  z+: {type: neumann, gradient: 0.3}\n"
      "laplace: {method: jacobi, rhs: \"sin(3*x)*z\", max_iters: 130, check_every: 50, "
      "tolerance: 1.0e-14, time_block: ";
  const Solved one = solve_cpu(load_prepared(box + "1}\n", "box.yaml"));
  for (const char* k : {"3", "4", "auto"}) {
    const Case c = load_prepared(box + k + "}\n", "box.yaml");
    auto be = make_cpu_backend<double>();
    LaplaceSolver<double> probe(c, *be);
    // auto: fewer than 200 sweeps are not worth timing depths
    CHECK(probe.time_block() == (std::string(k) == "auto" ? 1 : std::stoi(k)));
    const Solved s = solve_cpu(c);
    INFO("time_block " << k);
    CHECK(s.iterations == one.iterations);
    CHECK(s.residual == one.residual);
    CHECK(s.u == one.u);
  }
}

TEST_CASE("max_iters reached ends the run as max_iters with the residual reached", "[laplace]") {
  Case c = plate_case("jacobi", 33, 1e-10);
  c.laplace.max_iters = 120;
  c.laplace.check_every = 50;
  const Solved s = solve_cpu(c);
  CHECK(s.status == LaplaceStatus::MaxIters);
  CHECK(s.iterations == 120);
  CHECK(s.residual > 1e-10);
  CHECK(s.residual < 1);
}

TEST_CASE("all-periodic and all-Neumann problems: the mean is handled, u has mean 0", "[laplace]") {
  // remove_mean takes the constant 2 out of f = 2 + ∇²(cos 2πx cos 2πy)
  const Case c = load_prepared(
      "workload: laplace\ngrid: {dims: [16, 16]}\nboundary: {default: {type: periodic}}\n"
      "laplace: {method: cg, rhs: \"2 - 8*pi^2*cos(2*pi*x)*cos(2*pi*y)\", remove_mean: true, "
      "tolerance: 1.0e-12}\n",
      "mean.yaml");
  const Solved s = solve_cpu(c);
  REQUIRE(s.status == LaplaceStatus::Converged);
  CHECK(s.mean_removed == Approx(2.0).epsilon(1e-12));
  double mean = 0;
  for (double v : s.u) mean += v;
  CHECK(std::fabs(mean / double(s.u.size())) < 1e-12);
  // the discrete solution of the mode differs from cos·cos by the O(h²) eigenvalue error
  CHECK(max_error(c.grid, s.u, [](double x, double y, double) {
          return std::cos(2 * kPi * x) * std::cos(2 * kPi * y);
        }) < 0.05);
  // all-Neumann, sor and cg: u = cos(πx)cos(πy) (compatible: f has mean 0)
  for (const std::string method : {"sor", "cg"}) {
    const Case n = load_prepared(
        "workload: laplace\ngrid: {dims: [33, 33]}\nboundary: {default: {type: neumann}}\n"
        "laplace: {method: " + method + ", rhs: \"-2*pi^2*cos(pi*x)*cos(pi*y)\", "
        "tolerance: 1.0e-10, check_every: 5}\n",
        "neumann.yaml");
    const Solved t = solve_cpu(n);
    REQUIRE(t.status == LaplaceStatus::Converged);
    INFO(method);
    CHECK(max_error(n.grid, t.u, [](double x, double y, double) {
            return std::cos(kPi * x) * std::cos(kPi * y);
          }) < 2e-3);
  }
}

namespace {

// The operator's args and the layout of the small grid it acts on.
struct Operator {
  LaplaceArgs<double> a;
  Layout l;
};

// A small grid with the given boundary on every axis (periodic needs even n
// for nothing here: the operator itself is checked).
Operator random_operator(int ndim, BcType lo, BcType hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.5, 2.0);
  LaplaceArgs<double> a;
  a.ndim = ndim;
  const std::int64_t sizes[3] = {7, 5, 4};
  std::int64_t n[3];
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    n[ax] = ax < ndim ? sizes[ax] : 1;
    a.ih2[ax] = ax < ndim ? d(rng) : 0.0;
    diag += 2 * a.ih2[ax];
    const bool per = lo == BcType::Periodic;
    a.bc[ax].lo = per ? lo : (ax % 2 ? hi : lo);
    a.bc[ax].hi = per ? hi : (ax % 2 ? lo : hi);
  }
  a.diag = diag;
  a.inv_diag = 1 / diag;
  a.op_scale = d(rng);
  a.op_shift = ndim == 2 ? d(rng) : 0.0;
  return {a, Layout::dense(n)};
}

template <int D>
void check_operator(const Operator& op, std::mt19937_64& rng) {
  const LaplaceArgs<double>& a = op.a;
  const Layout& l = op.l;
  const std::int64_t n = l.n[0] * l.n[1] * l.n[2];
  std::vector<double> x(static_cast<std::size_t>(n)), dense(static_cast<std::size_t>(n * n), 0.0);
  const FieldView<const double> xv(x.data(), l);
  std::uniform_real_distribution<double> d(-1, 1);
  for (double& v : x) v = d(rng);
  // CG's directions are 0 at Dirichlet points
  for (std::int64_t k = 0; k < l.n[2]; ++k)
    for (std::int64_t j = 0; j < l.n[1]; ++j)
      for (std::int64_t i = 0; i < l.n[0]; ++i) {
        const std::int64_t pos[3] = {i, j, k};
        if (held<D>(a, l.n, pos)) x[i + l.n[0] * (j + l.n[1] * k)] = 0;
      }
  double worst = 0;
  for (std::int64_t k = 0; k < l.n[2]; ++k)
    for (std::int64_t j = 0; j < l.n[1]; ++j)
      for (std::int64_t i = 0; i < l.n[0]; ++i) {
        const std::int64_t idx = i + l.n[0] * (j + l.n[1] * k);
        std::int64_t cols[kMaxRowEntries];
        double vals[kMaxRowEntries];
        const int cnt = laplace_row<D>(a, l, i, j, k, cols, vals);
        double row = 0;
        for (int e = 0; e < cnt; ++e) {
          if (e > 0) REQUIRE(cols[e - 1] < cols[e]);
          row += vals[e] * x[cols[e]];
          dense[idx * n + cols[e]] = vals[e];
        }
        worst = std::max(worst, std::fabs(row - apply_point<D>(a, xv, i, j, k)));
      }
  CHECK(worst < 1e-12);  // the CSR rows the GPU builds are the CPU's operator
  double asym = 0;
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t s = 0; s < n; ++s)
      asym = std::max(asym, std::fabs(dense[r * n + s] - dense[s * n + r]));
  CHECK(asym < 1e-12);  // W·(−L₀) is symmetric, Neumann rows included
}

}  // namespace

TEST_CASE("the operator: CSR rows equal the matrix-free formula and the matrix is symmetric",
          "[laplace]") {
  std::mt19937_64 rng(42);
  const std::vector<std::pair<BcType, BcType>> bcs = {{BcType::Dirichlet, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Neumann},
                                                      {BcType::Periodic, BcType::Periodic}};
  for (auto [lo, hi] : bcs) {
    INFO("bc " << int(lo) << "/" << int(hi));
    check_operator<1>(random_operator(1, lo, hi, rng), rng);
    check_operator<2>(random_operator(2, lo, hi, rng), rng);
    check_operator<3>(random_operator(3, lo, hi, rng), rng);
  }
}

// ---- implicit heat ---------------------------------------------------------------------

namespace {

// u0 = sin(πx)sin(πy) on n² Dirichlet points: an eigenvector of the discrete
// Laplacian (eigenvalue λ = −2·(4/h²)·sin²(πh/2)), so the semi-discrete
// solution is exp(λαt)·u0 exactly and the time error can be measured alone.
double heat_time_error(const std::string& scheme, int n, double dt, double t_end,
                       double* vs_analytic = nullptr, double* max_u = nullptr) {
  const std::string text = "workload: heat\ngrid: {dims: " + dims2(n) +
                            "}\ninitial: {expr: \"sin(pi*x)*sin(pi*y)\"}\n"
                            "heat: {alpha: 1.0, scheme: " + scheme + ", dt: " +
                            fmt_double(dt) + ", t_end: " + fmt_double(t_end) +
                            ", solver: {tolerance: 1.0e-13, max_iters: 2000}}\n";
  const Case c = load_prepared(text, "implicit.yaml");
  auto be = make_cpu_backend<double>();
  HeatSolver<double> s(c, *be);
  double peak = 0;
  while (s.step() < c.heat.steps) {
    s.advance(1);
    std::vector<double> u(s.field().size());
    be->download(s.field(), u.data());
    for (double v : u) peak = std::max(peak, std::fabs(v));
  }
  std::vector<double> u(s.field().size());
  be->download(s.field(), u.data());
  const double h = 1.0 / (n - 1);
  const double lambda = -2 * 4 / (h * h) * std::pow(std::sin(kPi * h / 2), 2);
  const double t = s.time();
  if (vs_analytic)
    *vs_analytic = max_error(c.grid, u, [&](double x, double y, double) {
      return std::sin(kPi * x) * std::sin(kPi * y) * std::exp(-2 * kPi * kPi * t);
    });
  if (max_u) *max_u = peak;
  return max_error(c.grid, u, [&](double x, double y, double) {
    return std::sin(kPi * x) * std::sin(kPi * y) * std::exp(lambda * t);
  });
}

}  // namespace

TEST_CASE("implicit heat is stable at 10× the explicit limit and matches the analytic decay",
          "[heat][implicit]") {
  const int n = 33;
  const double h = 1.0 / (n - 1), limit = h * h / 4;  // 1/(2α·Σ1/h²), α = 1
  for (const HeatScheme scheme : {HeatScheme::Implicit, HeatScheme::CrankNicolson}) {
    double vs_analytic = 0, peak = 0;
    heat_time_error(to_string(scheme), n, 10 * limit, 0.1, &vs_analytic, &peak);
    INFO(to_string(scheme) << ": error against exp(-2π²t)·u0 " << vs_analytic << ", max |u| "
                           << peak);
    CHECK(peak <= 1.0);
    // exp(-2π²·0.1) = 0.139: backward Euler's first-order lag is visible, CN's is not
    CHECK(vs_analytic < (scheme == HeatScheme::Implicit ? 1e-2 : 1e-3));
  }
  // far past the limit, an explicit step would blow up; these decay
  double peak = 0;
  heat_time_error("crank-nicolson", n, 100 * limit, 0.2, nullptr, &peak);
  CHECK(peak <= 1.0);
}

TEST_CASE("backward Euler is first order in time, Crank–Nicolson second", "[heat][implicit]") {
  for (const HeatScheme scheme : {HeatScheme::Implicit, HeatScheme::CrankNicolson}) {
    std::vector<double> err;
    for (double dt : {0.01, 0.005, 0.0025})
      err.push_back(heat_time_error(to_string(scheme), 17, dt, 0.1));
    INFO(to_string(scheme) << ": errors " << err[0] << " " << err[1] << " " << err[2]);
    for (double p : orders(err))
      CHECK(p == Approx(scheme == HeatScheme::Implicit ? 1.0 : 2.0).margin(0.1));
  }
}

TEST_CASE("implicit heat with insulated ends keeps cos(πx) decaying as the discrete mode",
          "[heat][implicit]") {
  // 1D Neumann: the symmetrised CG operator (weights 1/2 at the ends) solves
  // the ghost-point equations exactly.
  const int n = 41;
  const Case c = load_prepared(
      "workload: heat\ngrid: {dims: [41]}\ninitial: {expr: \"cos(pi*x)\"}\n"
      "boundary: {x: {type: neumann, gradient: 0}}\n"
      "heat: {alpha: 1.0, scheme: crank-nicolson, dt: 0.001, steps: 50, "
      "solver: {tolerance: 1.0e-13}}\n",
      "neumann1d.yaml");
  auto be = make_cpu_backend<double>();
  HeatSolver<double> s(c, *be);
  s.advance(50);
  std::vector<double> u(s.field().size());
  be->download(s.field(), u.data());
  const double h = 1.0 / (n - 1), dt = 0.001;
  const double lambda = -4 / (h * h) * std::pow(std::sin(kPi * h / 2), 2);
  const double g = std::pow((1 + lambda * dt / 2) / (1 - lambda * dt / 2), 50);
  CHECK(max_error(c.grid, u, [&](double x, double, double) { return std::cos(kPi * x) * g; }) <
        1e-10);
  CHECK(s.solver_iterations() > 0);
}
