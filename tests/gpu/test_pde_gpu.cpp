// The pde workload's kernel compiled at run time (NVRTC) against the CPU
// reference: bit for bit where the equations use + − × ÷ and powers with
// whole exponents only (both compute the same operations in the same order,
// the kernel without fused multiply-adds), within round-off where CUDA's
// math functions are called; every integrator, 1D/2D/3D, float32 and
// float64, odd sizes on padded rows, every boundary type, time-dependent
// Dirichlet values, coefficient fields and upwind terms.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/device.hpp"
#include "tests/gpu/padding_check.hpp"
#include "tests/unit/pde_test_util.hpp"

using namespace gf;

namespace {

// row_align: the GPU fields' (−1: as a run has them; 0: dense rows, which
// the march does not take where they are off 16-byte vectors)
template <class T>
void compare_pde(const std::string& text, double tol, std::int64_t row_align = -1) {
  const Case c = test::load(text);
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0, row_align);
  const auto a = test::pde_run<T>(c, *cpu), b = test::pde_run<T>(c, *gpu);
  REQUIRE(a.size() == b.size());
  for (std::size_t f = 0; f < a.size(); ++f) {
    double worst = 0;
    std::size_t nonfinite = 0;
    for (std::size_t q = 0; q < a[f].size(); ++q) {
      if (!std::isfinite(double(b[f][q]))) ++nonfinite;
      const double d = std::abs(double(a[f][q]) - double(b[f][q])) / std::max(1.0, std::abs(double(a[f][q])));
      worst = std::max(worst, d);
    }
    INFO("field " << f << ": worst " << worst << " of\n" << text);
    CHECK(nonfinite == 0);
    CHECK(worst <= tol);
  }
}

// Initial values of products only: both executors fill them with the same
// operations (CUDA's exp would differ from the CPU's in the last bit).
const std::string kGs =
    "  fields:\n"
    "    u: {initial: {expr: \"1 - 8*x*(1-x)*y*(1-y)*(1 - z*z)\"}}\n"
    "    v: {initial: {expr: \"4*x*(1-x)*y*(1-y)*(1 - z) + 0.01*x*y\"}}\n"
    "  equations:\n"
    "    u: \"Du*lap(u) - u*v^2 + F*(1 - u)\"\n"
    "    v: \"Dv*lap(v) + u*v^2 - (F + k)*v\"\n";
const std::string kGsParams = "{Du: 2.0e-4, Dv: 1.0e-4, F: 0.035, k: 0.065}";

}  // namespace

TEST_CASE("pde kernel: Gray–Scott bit for bit with the CPU, every integrator", "[gpu][pde_gpu]") {
  const char* boundaries[] = {"  default: {type: periodic}\n",
                              "  default: {type: neumann, gradient: 0.1}\n  x: {type: periodic}\n",
                              "  default: {type: dirichlet, value: 1}\n  x-: {type: neumann, gradient: 0}\n"};
  for (const char* integ : {"euler", "ssprk2", "ssprk3", "rk4"})
    for (const char* bc : boundaries)
      // 259 × 21: rows of several blocks that end in a partial piece
      for (const char* dims : {"[37]", "[35, 19]", "[33, 17, 9]", "[130, 7, 5]", "[259, 21, 7]"}) {
        const std::string pde = kGs + "  integrator: " + integ + "\n  dt: 0.01\n  steps: 7\n";
        compare_pde<double>(test::pde_case(dims, pde, bc, kGsParams), 0.0);
        compare_pde<float>(test::pde_case(dims, pde, bc, kGsParams, "float32"), 0.0);
      }
  // equal spacings on every axis (1/32 and 1/256, exact in binary, given as
  // grid.spacing so that periodic and walled axes alike have them): lap's
  // factored form (PdeArgs::equal_h)
  for (const char* integ : {"euler", "rk4"})
    for (const char* bc : boundaries)
      for (const auto& [dims, h] : {std::pair<const char*, const char*>{"[35, 19]", "[0.03125, 0.03125]"},
                                    {"[259, 21, 7]", "[0.00390625, 0.00390625, 0.00390625]"}}) {
        const std::string pde = kGs + "  integrator: " + integ + "\n  dt: 0.005\n  steps: 7\n";
        for (const char* prec : {"float64", "float32"}) {
          std::string text = test::pde_case(dims, pde, bc, kGsParams, prec, h);
          text.replace(text.find("  extent: "), 10, "  spacing: ");
          REQUIRE(pde_equal_spacings<double>(test::load(text).grid));
          if (std::string(prec) == "float64")
            compare_pde<double>(text, 0.0);
          else
            compare_pde<float>(text, 0.0);
        }
      }
}

// 2D and 3D stages on dense rows of odd length go to the one-thread-a-point
// kernels, which the executor compiles the first time a stage needs them
// (pde_source_parts): bit for bit too.
TEST_CASE("pde kernel: the one-thread-a-point kernels, compiled when first needed", "[gpu][pde_gpu]") {
  for (const char* integ : {"euler", "rk4"})
    for (const char* dims : {"[35, 19]", "[33, 17, 9]"}) {
      const std::string pde = kGs + "  integrator: " + integ + "\n  dt: 0.01\n  steps: 5\n";
      const std::string bc = "  default: {type: neumann, gradient: 0.1}\n  x: {type: periodic}\n";
      compare_pde<double>(test::pde_case(dims, pde, bc, kGsParams), 0.0, 0);
      compare_pde<float>(test::pde_case(dims, pde, bc, kGsParams, "float32"), 0.0, 0);
    }
  // The executor's note names them only once compiled: after a stage on dense
  // odd rows, never on padded rows, where every stage marches.
  const auto note_after = [&](std::int64_t row_align, std::int64_t steps) {
    const std::string pde = kGs + "  integrator: euler\n  dt: 0.01\n  steps: 5\n";
    const Case c = test::load(test::pde_case("[33, 17, 9]", pde, "  default: {type: periodic}\n",
                                             kGsParams));
    auto gpu = make_cuda_backend<double>(0, row_align);
    PdeSolver<double> s(c, *gpu);
    s.advance(steps);
    nlohmann::json t;
    s.add_timing(t);
    return t.value("kernel", std::string());
  };
  const std::string kPoint = "one-thread-a-point kernels";
  CHECK(note_after(0, 0).find(kPoint) == std::string::npos);
  CHECK(note_after(0, 1).find(kPoint) != std::string::npos);
  CHECK(note_after(-1, 5).find(kPoint) == std::string::npos);
}

// The row padding of the fields' state stays zero (tests/gpu/padding_check.hpp)
// after a run: the march's lanes past a row's end write zeros (pde_march.hpp's
// fix-up), under Euler and RK4, rows ending in part of a vector or not.
TEST_CASE("pde march: row padding stays zero", "[gpu][pde_gpu]") {
  const std::string bc = "  default: {type: dirichlet, value: 1}\n  y: {type: periodic}\n";
  for (const char* integ : {"euler", "rk4"})
    for (const char* dims : {"[257, 9, 5]", "[259, 9, 5]", "[300, 9]", "[258, 7, 5]", "[129, 11]"}) {
      const std::string pde = kGs + "  integrator: " + integ + "\n  dt: 0.01\n  steps: 5\n";
      const auto check = [&](auto zero) {
        using T = decltype(zero);
        const Case c = test::load(test::pde_case(dims, pde, bc, kGsParams,
                                                 sizeof(T) == 4 ? "float32" : "float64"));
        auto gpu = make_cuda_backend<T>(0);
        PdeSolver<T> s(c, *gpu);
        s.advance(c.pde.steps);
        for (const NamedField<T>& f : s.fields()) {
          INFO(dims << " " << integ << " " << f.name << (sizeof(T) == 4 ? " float32" : " float64"));
          CHECK(test::padding_is_zero(*f.field));
        }
      };
      check(0.0f);
      check(0.0);
    }
}

TEST_CASE("pde kernel: math functions, t, coefficients and upwind within round-off", "[gpu][pde_gpu]") {
  const std::string pde =
      "  fields:\n"
      "    u: {initial: {expr: \"sin(3*x)*cos(2*y) + 0.5\"}}\n"
      "    w: {initial: {expr: \"exp(-x*y)\"}}\n"
      "  coefficients: {kappa: \"1 + 0.5*sin(2*pi*x)\"}\n"
      "  equations:\n"
      "    u: \"div(kappa*grad(u)) - dx_up(u, cos(t) - 0.2) + 0.1*tanh(w) + sqrt(abs(u))*sin(t)\"\n"
      "    w: \"div((1 + y^2)*grad(w)) + dy(u)*w - 0.3*dx_up(w, -1) + (x > 0.5 ? 1 : -1)*exp(-t)\"\n"
      "  integrator: rk4\n  dt: 0.0001\n  steps: 9\n";
  const std::string bc = "  default: {type: dirichlet, value: \"sin(t + x)\"}\n  y: {type: neumann, gradient: -0.5}\n";
  compare_pde<double>(test::pde_case("[41, 23]", pde, bc), 1e-12);
  compare_pde<double>(test::pde_case("[21, 13, 11]", pde, bc), 1e-12);
  compare_pde<float>(test::pde_case("[41, 23]", pde, bc, "", "float32"), 1e-5);
}

// Fields with boundaries of their own (a Dirichlet x face on one side of
// each, on different sides), k of div a state field, and derivatives of one
// field in the other's equation: the march's x faces (pde_march.hpp), rows
// ending in part of a vector, bit for bit.
TEST_CASE("pde kernel: fields with their own boundaries, k a field, bit for bit", "[gpu][pde_gpu]") {
  const std::string pde =
      "  fields:\n"
      "    u: {initial: {expr: \"1 + x*y\"}}\n"
      "    v:\n"
      "      initial: {expr: \"1 + 0.5*x*(1-x)*(1 + y*z)\"}\n"
      "      boundary: {default: {type: neumann, gradient: -0.1}, x+: {type: dirichlet, value: 0.5}}\n"
      "  equations:\n"
      "    u: \"div(v*grad(u)) + dx(v) - 0.5*dx_up(u, -1)\"\n"
      "    v: \"lap(v) - dy_up(v, 1) + dy(u)*u\"\n"
      "  integrator: ssprk3\n  dt: 0.0001\n  steps: 5\n";
  const std::string bc =
      "  default: {type: neumann, gradient: 0.2}\n  x-: {type: dirichlet, value: 2}\n";
  for (const char* dims : {"[29, 11, 7]", "[30, 9]", "[5, 6, 4]", "[3, 3, 3]"}) {
    compare_pde<double>(test::pde_case(dims, pde, bc), 0.0);
    compare_pde<float>(test::pde_case(dims, pde, bc, "", "float32"), 0.0);
  }
}

// The integrators' orders in time on the GPU (the CPU's: test_pde.cpp), with
// a time-dependent source and Dirichlet values.
TEST_CASE("pde integrators on the GPU: orders 1, 2, 3, 4 in time", "[gpu][pde_gpu]") {
  auto gpu = make_cuda_backend<double>(0);
  test::check_time_orders(*gpu);
}
