// Heat with t in the source and the Dirichlet values, and with a variable
// alpha, on the GPU: the manufactured solutions of tests/unit/test_heat_time.cpp
// converge at the same orders, and the fields agree with the CPU reference
// (the expressions' and the pde kernels' math within CUDA's ulps). Run with
// `gridforge_tests "[heat_time_gpu]"`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "tests/unit/heat_time_util.hpp"

using namespace gf;

namespace {

// The case on the GPU against the CPU: every point finite and within tol
// (relative to max(|u|, 1)); returns the GPU's error against `exact`.
template <class T, class Exact>
double gpu_error(const std::string& text, double tol, Exact exact) {
  const Case c = load_case_text(text, "gpu.yaml");
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  double t = 0, tc = 0;
  const auto d = test::run_to_end(c, *gpu, &t);
  const auto h = test::run_to_end(c, *cpu, &tc);
  REQUIRE(t == tc);
  REQUIRE(d.size() == h.size());
  double worst = 0;
  std::size_t nonfinite = 0;
  for (std::size_t q = 0; q < d.size(); ++q) {
    if (!std::isfinite(double(d[q]))) ++nonfinite;
    worst = std::max(worst, std::abs(double(d[q]) - double(h[q])) /
                                std::max(1.0, std::abs(double(h[q]))));
  }
  INFO(text);
  CHECK(nonfinite == 0);
  CHECK(worst <= tol);
  return test::max_error(c, d, t, exact);
}

}  // namespace

TEST_CASE("heat GPU: t in the source and Dirichlet values, second order in space, as the CPU",
          "[gpu][heat_time_gpu]") {
  std::vector<double> err;
  for (int n : {17, 33, 65})
    err.push_back(gpu_error<double>(test::mms_space_case(n), 1e-12, test::mms_space_exact));
  for (double p : test::observed_orders(err)) CHECK(p == Approx(2.0).margin(0.15));
  (void)gpu_error<float>(test::mms_space_case(33, "float32"), 1e-5, test::mms_space_exact);
}

TEST_CASE("heat GPU: t with every scheme, at the scheme's order in time, as the CPU",
          "[gpu][heat_time_gpu]") {
  const std::string solver = "  solver: {tolerance: 1.0e-13, max_iters: 1000}\n";
  struct S {
    const char* scheme;
    std::vector<double> dts;
    double order;
  };
  for (const S& s : {S{"explicit", {0.02, 0.01, 0.005}, 1.0},
                     S{"implicit", {0.1, 0.05, 0.025}, 1.0},
                     S{"crank-nicolson", {0.1, 0.05, 0.025}, 2.0}}) {
    std::vector<double> err;
    for (double dt : s.dts)
      err.push_back(gpu_error<double>(
          test::mms_time_case(s.scheme, dt, 9, 0.4, std::string(s.scheme) == "explicit" ? "" : solver),
          1e-10, test::mms_time_exact));
    INFO(s.scheme << ": " << err[0] << " " << err[1] << " " << err[2]);
    for (double p : test::observed_orders(err)) CHECK(p == Approx(s.order).margin(0.15));
  }
}

TEST_CASE("heat GPU: a variable alpha on the pde kernel, second order in space, as the CPU",
          "[gpu][heat_time_gpu]") {
  std::vector<double> err;
  for (int n : {17, 33, 65})
    err.push_back(gpu_error<double>(test::varalpha_case(n, "\"1 + x*y/2\""), 1e-12,
                                    test::varalpha_exact));
  for (double p : test::observed_orders(err)) CHECK(p == Approx(2.0).margin(0.15));
  (void)gpu_error<float>(test::varalpha_case(33, "\"1 + x*y/2\"", "float32"), 1e-5,
                         test::varalpha_exact);
}
