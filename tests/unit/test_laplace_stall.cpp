// Solves that stop making progress (issue 22): a float32 solve whose
// residual reaches its rounding floor above the tolerance stops there, with
// status stalled and a message naming the floor and what to do, instead of
// running to max_iters; converging solves, slow ones included, never do.
#include <catch2/catch.hpp>

#include <string>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"

using namespace gf;

namespace {

struct Outcome {
  LaplaceStatus status = LaplaceStatus::Running;
  std::int64_t iterations = 0, best_at = 0;
  double best = 1;
  std::string message;
};

template <class T>
Outcome run(const std::string& text) {
  const Case c = prepare_case(load_case_text(text, "stall.yaml"));
  auto be = make_cpu_backend<T>();
  LaplaceSolver<T> s(c, *be);
  Outcome o;
  while (!s.finished()) {
    s.iterate(c.laplace.check_every);
    if (s.residual() < o.best) o.best = s.residual(), o.best_at = s.iterations();
  }
  o.status = s.status();
  o.iterations = s.iterations();
  if (o.status == LaplaceStatus::Stalled) o.message = s.stall_message();
  return o;
}

// A plate held at 100·sin(πx) on one face, with a right-hand side of order 1:
// float32 cannot resolve f beside the boundary's large second differences.
std::string plate(const std::string& method, const std::string& precision, const std::string& tol) {
  return "workload: laplace\nprecision: " + precision +
         "\ngrid: {dims: [33, 33]}\nboundary:\n  default: {type: dirichlet, value: 0}\n"
         "  y+: {type: dirichlet, value: \"100*sin(pi*x)\"}\n"
         "laplace: {method: " + method + ", rhs: \"x*y\", tolerance: " + tol +
         ", max_iters: 100000, check_every: 10}\n";
}

}  // namespace

TEST_CASE("float32 solves at their rounding floor stop, exit 1, and say why", "[laplace][stall]") {
  for (const std::string method : {"jacobi", "sor", "cg", "multigrid"}) {
    INFO(method);
    const Outcome o = run<float>(plate(method, "float32", "1.0e-5"));
    REQUIRE(o.status == LaplaceStatus::Stalled);
    CHECK(o.best > 1e-5);
    // never past the point where the residual stopped falling by more than 2× the
    // iterations it took to get there (the chunks of check_every are the grain)
    CHECK(o.iterations <= 3 * o.best_at + 10);
    CHECK(o.message.find("stopped making progress") != std::string::npos);
    CHECK(o.message.find("rounding floor of float32") != std::string::npos);
    CHECK(o.message.find("precision: float64") != std::string::npos);
  }
}

TEST_CASE("converging solves never stall: slow jacobi, and float64 to 1e-9", "[laplace][stall]") {
  for (const std::string method : {"jacobi", "sor", "cg", "multigrid"}) {
    INFO(method);
    const Outcome o = run<double>(plate(method, "float64", "1.0e-9"));
    CHECK(o.status == LaplaceStatus::Converged);
  }
}

TEST_CASE("a float64 tolerance below the floor stalls too, and says which tolerance works",
          "[laplace][stall]") {
  const Outcome o = run<double>(plate("sor", "float64", "1.0e-15"));
  REQUIRE(o.status == LaplaceStatus::Stalled);
  CHECK(o.message.find("rounding floor of float64") != std::string::npos);
  CHECK(o.message.find("laplace.tolerance:") != std::string::npos);
}
