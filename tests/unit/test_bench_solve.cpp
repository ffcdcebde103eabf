// gridforge bench --workload poisson (issue 22): the problem's analytic
// solution against its right-hand side, every method converging on small
// grids with a second-order error, the time budget that ends a row that
// cannot converge, and the rows' keys in bench.json and bench.csv.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "io/expression.hpp"
#include "kernels/backend.hpp"
#include "solvers/bench.hpp"
#include "solvers/bench_solve.hpp"

using namespace gf;

namespace {

BenchItem poisson_item(const std::string& method, std::vector<std::int64_t> shape,
                       Precision p = Precision::Float64) {
  return BenchItem{"poisson", method, int(shape.size()), std::move(shape), p};
}

template <class T>
SolveOutcome solve(const BenchItem& it, const SolveLimits& lim = {}) {
  const Case c = poisson_case(it, lim);
  auto cpu = make_cpu_backend<T>();
  return time_poisson_solve<T>(c, *cpu, lim);
}

}  // namespace

TEST_CASE("poisson bench: f is the Laplacian of the analytic u", "[bench][poisson]") {
  // A fourth-order difference of u_exact at a few interior points against the
  // right-hand side the case evaluates (through f = ∇²u at an interior point:
  // the residual of the exact u is the truncation error only).
  for (const char* method : {"multigrid", "fft"})
    for (int dims : {2, 3}) {
      const Case c = poisson_case(poisson_item(method, std::vector<std::int64_t>(dims, 9)), {});
      INFO(method << " " << dims << "D");
      const Expression f(c.laplace.rhs, c.parameters);
      for (double x : {0.21, 0.5, 0.77})
        for (double y : {0.13, 0.62}) {
          const double z = dims == 3 ? 0.41 : 0.0, h = 1e-3;
          double lap = 0;
          for (int a = 0; a < dims; ++a) {
            double p[3] = {x, y, z}, q[3] = {x, y, z}, r[3] = {x, y, z}, s[3] = {x, y, z};
            p[a] += h, q[a] -= h, r[a] += 2 * h, s[a] -= 2 * h;
            const auto u = [&](const double* v) { return poisson_exact(c, v[0], v[1], v[2]); };
            lap += (-u(r) + 16 * u(p) - 30 * poisson_exact(c, x, y, z) + 16 * u(q) - u(s)) /
                   (12 * h * h);
          }
          CHECK(f(x, y, z) == Approx(lap).epsilon(1e-6).margin(1e-6));
        }
    }
}

TEST_CASE("poisson bench: the methods' names, and mixed in float64 only", "[bench][poisson]") {
  std::set<std::string> names;
  for (const PoissonMethod& m : poisson_methods()) names.insert(m.name);
  CHECK(names == std::set<std::string>{"jacobi", "sor", "cg", "cg-jacobi", "cg-multigrid",
                                       "multigrid", "multigrid-f", "multigrid-mixed", "fft"});
  CHECK(find_poisson_method("multigird") == nullptr);
  const PoissonMethod* mixed = find_poisson_method("multigrid-mixed");
  REQUIRE(mixed);
  CHECK(mixed->mixed);
  CHECK_FALSE(poisson_method_fits(*mixed, Precision::Float32));
  CHECK(poisson_method_fits(*mixed, Precision::Float64));
  const Case c = poisson_case(poisson_item("cg-multigrid", {9, 9, 9}), {});
  CHECK(c.laplace.method == LaplaceMethod::Cg);
  CHECK(c.laplace.preconditioner == LaplacePrecond::Multigrid);
  const Case f = poisson_case(poisson_item("multigrid-f", {9, 9, 9}), {});
  CHECK(f.laplace.cycle == MgCycle::F);
  CHECK_FALSE(f.laplace.mixed);
  // a box is the unit cube too, its spacing different on each axis
  const Case box = poisson_case(poisson_item("sor", {17, 13, 9}), {});
  CHECK(box.grid.h[0] == Approx(1.0 / 16));
  CHECK(box.grid.h[2] == Approx(1.0 / 8));
}

TEST_CASE("poisson bench: every method converges on 17^3 and 33^2, and says how",
          "[bench][poisson]") {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{17, 17, 17}, std::vector<std::int64_t>{33, 33}})
    for (const PoissonMethod& m : poisson_methods()) {
      INFO(m.name << " on " << shape.size() << "D");
      const SolveOutcome o = solve<double>(poisson_item(m.name, shape));
      CHECK(o.converged);
      CHECK(o.iterations >= 1);
      CHECK(o.setup_s > 0);
      CHECK(o.solve_s > 0);
      CHECK(o.tolerance == 1e-8);
      CHECK(o.bytes_per_iteration > 0);
      if (m.method == LaplaceMethod::Fft) {
        CHECK(o.reason == "direct");
        CHECK(o.problem == "periodic");
        CHECK(o.iterations == 1);
        CHECK(o.max_error < 1e-12);  // spectral: rounding
        CHECK_FALSE(o.factor);
        continue;
      }
      CHECK(o.reason == "converged");
      CHECK(o.problem == "dirichlet");
      CHECK(o.residual <= 1e-8);
      REQUIRE(o.factor);
      CHECK(*o.factor == Approx(std::pow(o.residual / o.residual0, 1.0 / double(o.iterations))));
      CHECK(*o.factor < 1);
      // second order at h = 1/16 (3D: 1.2e-2 of a u that peaks near 9)
      CHECK(o.max_error > 1e-4);
      CHECK(o.max_error < 2e-2);
      // the keys a method stands for
      CHECK(o.preconditioner == (m.method == LaplaceMethod::Cg ? to_string(m.preconditioner) : ""));
      CHECK(o.cycle == (m.method == LaplaceMethod::Multigrid ? to_string(m.cycle) : ""));
      if (m.method == LaplaceMethod::Multigrid) {
        CHECK(o.laplace_precision == (m.mixed ? "mixed" : "uniform"));
        CHECK(*o.factor < 0.1);  // a fixed fall a cycle
      }
    }
}

TEST_CASE("poisson bench: the error against the analytic solution is second order",
          "[bench][poisson]") {
  // h halves, the error falls by about 4 (the solve's own error, 1e-8 of the
  // residual, far below)
  for (const char* method : {"multigrid", "cg", "sor"}) {
    INFO(method << " 3D");
    const double e17 = solve<double>(poisson_item(method, {17, 17, 17})).max_error;
    const double e33 = solve<double>(poisson_item(method, {33, 33, 33})).max_error;
    CHECK(e17 / e33 == Approx(4).margin(0.3));
  }
  const double e2d[] = {solve<double>(poisson_item("multigrid", {17, 17})).max_error,
                        solve<double>(poisson_item("multigrid", {33, 33})).max_error,
                        solve<double>(poisson_item("multigrid", {65, 65})).max_error};
  INFO("2D errors " << e2d[0] << " " << e2d[1] << " " << e2d[2]);
  CHECK(e2d[0] / e2d[1] == Approx(4).margin(0.3));
  CHECK(e2d[1] / e2d[2] == Approx(4).margin(0.3));
}

TEST_CASE("poisson bench: the time budget ends a row that cannot converge, and marks it",
          "[bench][poisson]") {
  // Jacobi on 65^3 needs about 15000 sweeps: far more than 0.05 s on any CPU.
  SolveLimits lim;
  lim.max_seconds = 0.05;
  const SolveOutcome o = solve<double>(poisson_item("jacobi", {65, 65, 65}), lim);
  CHECK_FALSE(o.converged);
  CHECK(o.reason == "time_limit");
  CHECK(o.iterations >= 1);
  CHECK(o.iterations < 15000);
  CHECK(o.residual > 1e-8);
  CHECK(o.residual < o.residual0);
  CHECK(o.solve_s >= 0.05);
  CHECK(o.solve_s < 2);  // cut to the budget, not run to the end of a long chunk
  REQUIRE(o.factor);
  CHECK(*o.factor < 1);
  CHECK(o.max_error > 0.1);  // far from the solution yet

  // max_iters, the other limit
  SolveLimits few;
  few.max_iters = 30;
  const SolveOutcome m = solve<double>(poisson_item("cg", {17, 17, 17}), few);
  CHECK(m.reason == "max_iters");
  CHECK_FALSE(m.converged);
  CHECK(m.iterations == 30);
}

TEST_CASE("poisson bench: rows carry the solve's keys, null on the other rows",
          "[bench][poisson]") {
  const BenchItem it = poisson_item("multigrid", {17, 17, 17}, Precision::Float32);
  const SolveOutcome o = solve<float>(it);
  CHECK(o.tolerance == 1e-5);  // raised in float32, as laplace.tolerance is
  Bandwidth bw{"triad", 10.0, 1 << 20, 3};
  const BenchRow r = make_solve_row(it, "cpu", "test cpu", 17 * 17 * 17, o, bw);
  CHECK(r.steps == o.iterations);
  CHECK(r.repetitions == 1);
  CHECK(r.ms_per_step == Approx(o.solve_s * 1e3 / double(o.iterations)));
  CHECK(r.bytes_per_step == o.bytes_per_iteration);
  const nlohmann::json j = bench_row_json(r);
  CHECK(j["workload"] == "poisson");
  CHECK(j["method"] == "multigrid");
  CHECK(j["problem"] == "dirichlet");
  CHECK(j["preconditioner"].is_null());
  CHECK(j["cycle"] == "v");
  CHECK(j["laplace_precision"] == "uniform");
  CHECK(j["tolerance"] == 1e-5);
  CHECK(j["iterations"] == o.iterations);
  CHECK(j["steps"] == o.iterations);
  CHECK(j["time_to_solution_s"] == o.solve_s);
  CHECK(j["setup_s"] == o.setup_s);
  CHECK(j["residual"] == o.residual);
  CHECK(j["converged"] == o.converged);
  CHECK(j["reason"] == o.reason);
  CHECK(j["max_error"] == o.max_error);
  CHECK(j["convergence_factor"] == *o.factor);

  // a step row: every key there, the solve's null
  BenchTiming t;
  t.steps = 2;
  t.ms_per_step = {1.0};
  t.bytes_per_step = 16;
  t.points = 8;
  const BenchRow s = make_bench_row(BenchItem{"heat", "explicit", 3, {5, 5, 5}}, "cpu", "x", t, bw);
  const nlohmann::json k = bench_row_json(s);
  for (const char* key : {"problem", "preconditioner", "cycle", "laplace_precision", "tolerance",
                          "iterations", "setup_s", "time_to_solution_s", "residual", "converged",
                          "reason", "max_error", "convergence_factor"}) {
    INFO(key);
    CHECK(k.contains(key));
    CHECK(k[key].is_null());
    CHECK(j.contains(key));
  }
  // bench.csv: a column a key, in bench_row_fields()'s order, both rows
  const std::string csv = bench_csv({s, r});
  CHECK(csv.find(",shape,problem,preconditioner,cycle,laplace_precision,tolerance,iterations,"
                 "setup_s,time_to_solution_s,residual,converged,reason,max_error,"
                 "convergence_factor\n") != std::string::npos);
  CHECK(csv.find(",dirichlet,,v,uniform,1e-05,") != std::string::npos);
  // the table: the solve rows in a table of their own
  const std::string table = bench_table({s, r});
  CHECK(table.find("poisson/multigrid") != std::string::npos);
  CHECK(table.find("max error") != std::string::npos);
  CHECK(table.find("ms/step") != std::string::npos);
}

TEST_CASE("poisson bench: the GPU's speed-up is the ratio of times to solution",
          "[bench][poisson]") {
  Bandwidth bw{"triad", 10.0, 1 << 20, 3};
  SolveOutcome cpu, gpu;
  cpu.converged = gpu.converged = true;
  cpu.iterations = 10, gpu.iterations = 12;
  cpu.solve_s = 3.0, gpu.solve_s = 0.5;
  const BenchItem it = poisson_item("cg", {9, 9, 9});
  std::vector<BenchRow> rows = {make_solve_row(it, "cpu", "c", 729, cpu, bw),
                                make_solve_row(it, "cuda", "g", 729, gpu, bw)};
  fill_speedups(rows);
  REQUIRE(rows[1].speedup_vs_cpu);
  CHECK(*rows[1].speedup_vs_cpu == Approx(6.0));
  rows[1].solve->converged = false;  // a row that did not converge has none
  fill_speedups(rows);
  CHECK_FALSE(rows[1].speedup_vs_cpu);
}
