// Mixed-precision iterative refinement (laplace.precision: mixed) on the CPU
// reference: float64 residuals, float32 multigrid cycles; it reaches a
// float64 tolerance that float32 alone cannot, the solution of the float64
// multigrid, and the analytic solution to the discretisation error.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/mixed/mixed_exec.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"

using namespace gf;

namespace {

const double kPi = 3.14159265358979323846;

struct Run {
  std::vector<double> u;
  std::vector<double> residuals;  // after each iteration (the first: before any)
  LaplaceStatus status = LaplaceStatus::Running;
  std::int64_t iterations = 0;
  std::int64_t cycles = 0;  // float32 cycles (mixed)
};

Run solve(const std::string& text) {
  const Case c = prepare_case(load_case_text(text, "mixed.yaml"));
  auto be = make_cpu_backend<double>();
  LaplaceSolver<double> s(c, *be);
  Run out;
  out.residuals.push_back(s.residual());
  while (!s.finished()) {
    s.iterate(1);
    out.residuals.push_back(s.residual());
  }
  s.finish();
  out.iterations = s.iterations();
  out.cycles = s.mixed_cycles();
  out.u.resize(s.field().size());
  be->download(s.field(), out.u.data());
  out.status = s.status();
  return out;
}

// u = sin(πx)·sin(2πy)·sin(πz) + x·y on the unit cube, Dirichlet from u, f = −6π²·(the sine part)
std::string poisson(int n, const std::string& extra) {
  const std::string d = std::to_string(n);
  return "workload: laplace\ngrid: {dims: [" + d + ", " + d + ", " + d +
         "]}\nboundary:\n  default: {type: dirichlet, value: \"x*y\"}\n"
         "laplace: {method: multigrid, tolerance: 1.0e-10, max_iters: 60, "
         "rhs: \"-6*pi^2*sin(pi*x)*sin(2*pi*y)*sin(pi*z)\"" + extra + "}\n";
}

double exact(double x, double y, double z) {
  return std::sin(kPi * x) * std::sin(2 * kPi * y) * std::sin(kPi * z) + x * y;
}

}  // namespace

TEST_CASE("mixed precision reaches 1e-10 on a Poisson problem, as float64 multigrid does",
          "[laplace][mixed]") {
  for (int n : {17, 33}) {
    const Run mixed = solve(poisson(n, ", precision: mixed"));
    const Run full = solve(poisson(n, ""));
    INFO(n << "³: mixed " << mixed.iterations << " iterations, float64 " << full.iterations);
    REQUIRE(mixed.status == LaplaceStatus::Converged);
    REQUIRE(full.status == LaplaceStatus::Converged);
    CHECK(mixed.residuals.back() <= 1e-10);
    // two float32 cycles an iteration (MixedRefinement::kCycles), each
    // about the float64 cycle's factor: about half the iterations
    CHECK(mixed.iterations <= (full.iterations + 1) / 2 + 1);
    double worst = 0;
    for (std::size_t i = 2; i + 1 < mixed.residuals.size(); ++i)
      worst = std::max(worst, mixed.residuals[i] / mixed.residuals[i - 1]);
    INFO("worst factor an iteration " << worst);
    CHECK(worst < 0.02);
    // the same discrete solution, and the analytic one to second order
    double diff = 0, err = 0;
    const double h = 1.0 / (n - 1);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const std::size_t idx = std::size_t(i + n * (j + std::int64_t(n) * k));
          diff = std::max(diff, std::fabs(mixed.u[idx] - full.u[idx]));
          err = std::max(err, std::fabs(mixed.u[idx] - exact(i * h, j * h, k * h)));
        }
    CHECK(diff < 1e-8);
    CHECK(err < 5 * h * h * kPi * kPi);
  }
}

TEST_CASE("mixed precision with Neumann faces and a periodic axis converges to the float64 solution",
          "[laplace][mixed]") {
  const std::string text =
      "workload: laplace\ngrid: {dims: [29, 24, 19]}\nboundary:\n"
      "  default: {type: neumann, gradient: 0.3}\n  y: {type: periodic}\n"
      "  z-: {type: dirichlet, value: \"x\"}\n"
      "laplace: {method: multigrid, tolerance: 1.0e-11, max_iters: 80, rhs: \"x*z + cos(2*pi*y)\"";
  const Run mixed = solve(text + ", precision: mixed, cycle: f}\n");
  const Run full = solve(text + ", cycle: f}\n");
  INFO("mixed " << mixed.iterations << " iterations, float64 " << full.iterations);
  REQUIRE(mixed.status == LaplaceStatus::Converged);
  CHECK(mixed.iterations <= full.iterations + 2);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < full.u.size(); ++i) {
    diff = std::max(diff, std::fabs(mixed.u[i] - full.u[i]));
    scale = std::max(scale, std::fabs(full.u[i]));
  }
  CHECK(diff < 1e-8 * (1 + scale));
}

TEST_CASE("the mixed executor: the defect is the float64 residual, the correction is added back",
          "[laplace][mixed]") {
  const Case c = prepare_case(load_case_text(poisson(9, ""), "mixed.yaml"));
  auto be = make_cpu_backend<double>();
  auto be32 = make_cpu_backend<float>();
  LaplaceArgs<double> a = laplace_args<double>(c, false);
  Field<double> u = be->make_field(c.grid, "u"), f = be->make_field(c.grid, "f");
  Field<float> d = be32->make_field(c.grid, "d");
  std::vector<double> hu(std::size_t(c.grid.size())), hf(hu.size());
  for (std::size_t i = 0; i < hu.size(); ++i) {
    hu[i] = std::sin(0.1 * double(i));
    hf[i] = std::cos(0.3 * double(i));
  }
  be->upload(hu.data(), u);
  be->upload(hf.data(), f);
  a.f = f.data();
  auto exec = make_mixed_exec(*be);
  auto lap = make_laplace_exec(*be);
  const double rr = exec->defect(a, u, 4.0, d);
  CHECK(rr == Approx(lap->residual(a, u, nullptr)).epsilon(1e-14));
  // correct: u += d/4 gives back u + (f − L u)
  std::vector<float> hd(hu.size());
  be32->download(d, hd.data());
  exec->correct(d, 4.0, u);
  std::vector<double> after(hu.size());
  be->download(u, after.data());
  for (std::size_t i = 0; i < hu.size(); ++i) CHECK(after[i] == hu[i] + double(hd[i]) / 4.0);
}

TEST_CASE("a refinement takes one cycle where one is expected to reach the tolerance",
          "[laplace][mixed]") {
  using M = MixedRefinement;
  // the last refinement's factor over two cycles: 0.0025, so 0.05 a cycle
  CHECK(M::cycles_for(1e-9, 0.0025, 1e-10) == 1);
  CHECK(M::cycles_for(1.9e-9, 0.0025, 1e-10) == 1);
  CHECK(M::cycles_for(2.1e-9, 0.0025, 1e-10) == M::kCycles);
  CHECK(M::cycles_for(1e-5, 0.0025, 1e-10) == M::kCycles);
  // none measured yet (the first refinement, or the first after a restart),
  // or a refinement that did not gain: two
  CHECK(M::cycles_for(1e-11, 1.0, 1e-10) == M::kCycles);
  CHECK(M::cycles_for(1e-11, 0.0, 1e-10) == M::kCycles);
  CHECK(M::cycles_for(1e-11, std::nan(""), 1e-10) == M::kCycles);
  CHECK(M::cycles_for(1e-11, 1.5, 1e-10) == M::kCycles);
  // A solve: every refinement but the last takes two cycles, and the last
  // one where the rule says so; it still reaches the tolerance.
  for (const char* tol : {"1.0e-8", "1.0e-10", "3.0e-9"}) {
    std::string text = poisson(33, ", precision: mixed");
    text.replace(text.find("1.0e-10"), 7, tol);
    const Run r = solve(text);
    REQUIRE(r.status == LaplaceStatus::Converged);
    const double t = std::stod(tol);
    CHECK(r.residuals.back() <= t);
    const std::size_t k = r.residuals.size();  // the iterations, plus one
    REQUIRE(k >= 3);
    const double factor = r.residuals[k - 2] / r.residuals[k - 3];
    const int last = M::cycles_for(r.residuals[k - 2], factor, t);
    INFO("tolerance " << tol << ": " << r.iterations << " iterations, " << r.cycles
                      << " cycles, the last refinement " << last);
    CHECK(r.cycles == M::kCycles * (r.iterations - 1) + last);
  }
}
