// Helpers of the pde workload's tests (unit and [gpu]): cases from text and
// a solver's fields on the host.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "solvers/pde.hpp"
#include "tests/unit/case_test_util.hpp"

namespace gf::test {

// A pde case: a grid of `dims`, the boundary and the pde: section as YAML
// text (their bodies, indented by two spaces), parameters, precision.
inline std::string pde_case(const std::string& dims, const std::string& pde,
                            const std::string& boundary = "  default: {type: periodic}\n",
                            const std::string& params = "", const std::string& precision = "float64",
                            const std::string& extent = "") {
  return "name: t\nworkload: pde\nprecision: " + precision + "\ngrid:\n  dims: " + dims + "\n" +
         (extent.empty() ? "" : "  extent: " + extent + "\n") +
         (params.empty() ? "" : "parameters: " + params + "\n") + "boundary:\n" + boundary +
         "pde:\n" + pde + "output: {every: 0, formats: [hdf5]}\n";
}

// Every field of a solver after its run, downloaded, in its order.
template <class T>
std::vector<std::vector<T>> pde_run(const Case& c, Backend<T>& be, std::int64_t steps = -1) {
  PdeSolver<T> s(c, be);
  s.advance(steps < 0 ? c.pde.steps : steps);
  std::vector<std::vector<T>> out;
  for (const NamedField<T>& f : s.fields()) {
    out.emplace_back(std::size_t(f.field->points()));
    be.download(*f.field, out.back().data());
  }
  return out;
}

// u = exp(−t)·(1 + x² + y²) solves u_t = lap(u) + f with f = −u − 4 exp(−t):
// second differences are exact on it, so what is left is the integrator's
// error in time, with a time-dependent source and Dirichlet values: the
// largest error at t = 1 after `steps` steps on backend be.
inline double pde_time_error(Backend<double>& be, const std::string& integrator, int steps) {
  const std::string pde = "  fields: {u: {initial: {expr: \"1 + x^2 + y^2\"}}}\n"
                          "  equations: {u: \"0.01*lap(u) - (1 + x^2 + y^2)*exp(-t) - 0.04*exp(-t)\"}\n"
                          "  integrator: " + integrator + "\n  t_end: 1.0\n  dt: " +
                          std::to_string(1.0 / steps) + "\n";
  const Case c = load(pde_case("[9, 9]", pde, "  default: {type: dirichlet, value: \"exp(-t)*(1 + x^2 + y^2)\"}\n"));
  REQUIRE(c.pde.steps == steps);
  const auto u = pde_run<double>(c, be)[0];
  double err = 0;
  for (std::size_t q = 0; q < u.size(); ++q) {
    const double x = double(q % 9) / 8.0, y = double(q / 9) / 8.0;
    err = std::max(err, std::abs(u[q] - std::exp(-1.0) * (1 + x * x + y * y)));
  }
  return err;
}

// Orders 1, 2, 3, 4 in time of euler, ssprk2, ssprk3 and rk4 on backend be.
inline void check_time_orders(Backend<double>& be) {
  const struct {
    const char* name;
    int order, steps;
  } cases[] = {{"euler", 1, 40}, {"ssprk2", 2, 20}, {"ssprk3", 3, 10}, {"rk4", 4, 10}};
  for (const auto& k : cases) {
    const double e1 = pde_time_error(be, k.name, k.steps), e2 = pde_time_error(be, k.name, 2 * k.steps);
    const double order = std::log2(e1 / e2);
    INFO(k.name << ": errors " << e1 << ", " << e2 << ", order " << order);
    CHECK(order == Approx(k.order).margin(0.15));
  }
}

}  // namespace gf::test
