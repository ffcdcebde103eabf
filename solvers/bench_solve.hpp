// `gridforge bench --workload poisson`: time to solution of a Poisson problem
// with an analytic solution, per laplace method (issue 22). The case is built
// in memory and solved by LaplaceSolver as `gridforge run` solves it (chunks
// of check_every iterations, each ending in its residual check), to the
// tolerance or until the row's time budget is spent; the error is measured
// against the analytic solution afterwards.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "solvers/bench.hpp"

namespace gf {

// One method a poisson row can take: a name for --methods and the case keys
// it stands for.
struct PoissonMethod {
  const char* name;  // jacobi | sor | cg | cg-jacobi | cg-multigrid | multigrid | multigrid-f | multigrid-mixed | fft
  LaplaceMethod method;
  LaplacePrecond preconditioner = LaplacePrecond::None;  // cg
  MgCycle cycle = MgCycle::V;                            // multigrid
  bool mixed = false;                                    // multigrid, float64 only
};
// Every method, in the order the rows run (the default --methods).
const std::vector<PoissonMethod>& poisson_methods();
// The method of that name, or null.
const PoissonMethod* find_poisson_method(const std::string& name);
// "jacobi, sor, ..., fft"
std::string poisson_method_names();
// Whether a method runs in that precision (multigrid-mixed: float64 only).
bool poisson_method_fits(const PoissonMethod& m, Precision p);

// The solve's limits: the tolerance asked (raised to 1e-5 in float32, as
// laplace.tolerance is), and the wall-clock budget of a row's solve.
struct SolveLimits {
  double tolerance = 1e-8;
  double max_seconds = 20;
  std::int64_t max_iters = 100000;  // laplace.max_iters' default
};

// The problem a row solves, on the unit cube (square) whatever the shape:
// - dirichlet (every method but fft): u = e^(x+y+z)·sin(πx)·sin(πy)·sin(πz)
//   (2D: without z), walls held at 0, f = ∇²u. Not sin(πx)·sin(πy)·sin(πz)
//   alone: that is an eigenvector of the discrete Laplacian, which CG solves
//   in one iteration; this u has every mode in it, as a real problem has;
// - periodic (fft, which needs every axis periodic): u = sin(2πx)·sin(2πy)
//   (·sin(2πz)), f = −4dπ²·u (mean 0, as is u).
// The first guess is 0. Throws CaseError (an item the case check refuses).
Case poisson_case(const BenchItem& it, const SolveLimits& lim);
// The analytic solution at a point of the case's grid.
double poisson_exact(const Case& c, double x, double y, double z);

// Sets up and solves a row's case on a backend: a warm-up solver of one
// iteration first (first touch, lazy kernel loading), then a fresh solver
// (setup_s) and its solve to the tolerance, max_iters or the time budget
// (time_to_solution_s, the final residual check and finish() included),
// then the max-norm error against poisson_exact (not timed).
template <class T>
SolveOutcome time_poisson_solve(const Case& c, Backend<T>& backend, const SolveLimits& lim);

// The row of an outcome: steps = iterations, one repetition, ms_per_step the
// time to solution over the iterations, bytes_per_step one iteration's bytes.
BenchRow make_solve_row(const BenchItem& item, const std::string& device,
                        const std::string& device_name, std::int64_t points,
                        const SolveOutcome& s, const Bandwidth& bw);
// The time-to-solution table (bench_table prints it after the others).
std::string solve_table(const std::vector<BenchRow>& rows);
// The table's label of a row: poisson/<method>.
std::string solve_label(const BenchItem& it);

}  // namespace gf
