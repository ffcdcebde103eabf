// Manufactured solutions of heat with a source and Dirichlet values that read
// t, and with a variable alpha (docs/cases.md#heat), shared by the CPU tests
// (tests/unit/test_heat_time.cpp) and the GPU ones (tests/gpu/test_heat_time_gpu.cpp):
// the case texts, a run of a case on a backend to its end, and its largest
// error against the exact solution.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "solvers/stepper.hpp"

namespace gf::test {

// u = (1 + x² + 2y²)·cos(t) + x·t on [0, 1]², Dirichlet values u on every
// face: quadratic in space, so the discrete Laplacian is exact and what is
// left is the scheme's error in time. α = 0.1.
inline double mms_time_exact(double x, double y, double t) {
  return (1 + x * x + 2 * y * y) * std::cos(t) + x * t;
}
inline std::string mms_time_case(const std::string& scheme, double dt, int n, double t_end,
                                 const std::string& extra = "") {
  const std::string u = "(1 + x^2 + 2*y^2)*cos(t) + x*t";
  return "workload: heat\ngrid: {dims: [" + std::to_string(n) + ", " + std::to_string(n) +
         "]}\ninitial: {expr: \"1 + x^2 + 2*y^2\"}\n"
         "boundary: {default: {type: dirichlet, value: \"" + u + "\"}}\n"
         "heat:\n  alpha: 0.1\n  scheme: " + scheme + "\n  dt: " + std::to_string(dt) +
         "\n  t_end: " + std::to_string(t_end) +
         "\n  source: \"-(1 + x^2 + 2*y^2)*sin(t) + x - 0.6*cos(t)\"\n" + extra +
         "output: {every: 0, formats: [hdf5]}\n";
}

// u = cos(t)·sin(πx + 0.3)·sin(πy + 0.2): Dirichlet values that change in
// time on every face, a source s = u_t − α∇²u with α = 0.5.
inline double mms_space_exact(double x, double y, double t) {
  const double pi = 3.14159265358979323846;
  return std::cos(t) * std::sin(pi * x + 0.3) * std::sin(pi * y + 0.2);
}
inline std::string mms_space_case(int n, const std::string& precision = "float64") {
  const std::string s = "sin(pi*x + 0.3)*sin(pi*y + 0.2)";
  return "workload: heat\nprecision: " + precision + "\ngrid: {dims: [" + std::to_string(n) +
         ", " + std::to_string(n) + "]}\ninitial: {expr: \"" + s +
         "\"}\nboundary: {default: {type: dirichlet, value: \"cos(t)*" + s +
         "\"}}\nheat: {alpha: 0.5, t_end: 0.05, source: \"(pi^2*cos(t) - sin(t))*" + s +
         "\"}\noutput: {every: 0, formats: [hdf5]}\n";
}

// u = e^{−t}·sin(πx)·sin(πy) with α = 1 + xy/2, 0 on the faces: the source is
// u_t − ∇·(α∇u) = u_t − α∇²u − ∇α·∇u.
inline double varalpha_exact(double x, double y, double t) {
  const double pi = 3.14159265358979323846;
  return std::exp(-t) * std::sin(pi * x) * std::sin(pi * y);
}
inline const char* kVarAlphaExpr = "1 + x*y/2";
inline std::string varalpha_case(int n, const std::string& alpha,
                                 const std::string& precision = "float64") {
  return "workload: heat\nprecision: " + precision + "\ngrid: {dims: [" + std::to_string(n) +
         ", " + std::to_string(n) +
         "]}\ninitial: {expr: \"sin(pi*x)*sin(pi*y)\"}\n"
         "heat:\n  alpha: " + alpha +
         "\n  t_end: 0.02\n"
         "  source: \"exp(-t)*((2*pi^2*(1 + x*y/2) - 1)*sin(pi*x)*sin(pi*y)"
         " - pi/2*(y*cos(pi*x)*sin(pi*y) + x*sin(pi*x)*cos(pi*y)))\"\n"
         "output: {every: 0, formats: [hdf5]}\n";
}

// The case run to its end on `be` (its workload's stepper); u on the host,
// x-fastest, and the time reached.
template <class T>
std::vector<T> run_to_end(const Case& c, Backend<T>& be, double* t_end = nullptr) {
  auto s = make_stepper<T>(c, be);
  s->advance(s->total_steps());
  std::vector<T> u(std::size_t(s->field().points()));
  be.download(s->field(), u.data());
  if (t_end) *t_end = s->time();
  return u;
}

// max |u − exact(x, y, t)| over the grid's points.
template <class T, class Exact>
double max_error(const Case& c, const std::vector<T>& u, double t, Exact exact) {
  const Grid& g = c.grid;
  double e = 0;
  for (std::int64_t j = 0; j < g.n[1]; ++j)
    for (std::int64_t i = 0; i < g.n[0]; ++i)
      e = std::max(e, std::fabs(double(u[std::size_t(g.index(i, j, 0))]) -
                                exact(g.coord(0, i), g.coord(1, j), t)));
  return e;
}

// Observed orders log2(e_k / e_{k+1}) of errors at halved steps.
inline std::vector<double> observed_orders(const std::vector<double>& err) {
  std::vector<double> p;
  for (std::size_t i = 0; i + 1 < err.size(); ++i) p.push_back(std::log2(err[i] / err[i + 1]));
  return p;
}

}  // namespace gf::test
