// The pde stage kernel's source compiles with NVRTC (no GPU needed: NVRTC
// is a library of the CUDA toolkit), for float32 and float64, and the
// second compile of the same source comes from the kernel cache. In builds
// without CUDA there is nothing to compile with.
#include <catch2/catch.hpp>

#if defined(GRIDFORGE_HAVE_CUDA)
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "kernels/pde/pde_codegen.hpp"
#include "kernels/pde/pde_rtc.hpp"
#include "solvers/pde.hpp"
#include "tests/unit/pde_test_util.hpp"

using namespace gf;

TEST_CASE("pde kernel source compiles with NVRTC and is cached", "[pde]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gf_kernel_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("GRIDFORGE_KERNEL_CACHE", dir.c_str(), 1);
  const Case c = test::load(test::pde_case(
      "[9, 9, 9]",
      "  fields: {u: {initial: {value: 1}}, v: {}}\n"
      "  coefficients: {kappa: \"1 + x\"}\n"
      "  equations:\n"
      "    u: \"div(kappa*grad(u)) - dx_up(u, v) + sum(u, v, 1) + (u > 0 ? atan2(u, v) : asinh(u))\"\n"
      "    v: \"lap(v) + dz(u) + sin(t)*exp(-x) + max(min(u, v), 0)^3\"\n"
      "  integrator: rk4\n  dt: 0.00001\n  steps: 1\n",
      "  default: {type: dirichlet, value: \"sin(t)*x\"}\n  z: {type: periodic}\n"));
  for (const char* real : {"float", "double"}) {
    const std::string src = pde_kernel_source(c.pde.program, real, 3);
    const RtcBinary first = pde_rtc_compile(src, 90);
    CHECK_FALSE(first.cached);
    CHECK(first.image.size() > 1000);
    const RtcBinary again = pde_rtc_compile(src, 90);
    CHECK(again.cached);
    CHECK(again.image == first.image);
  }
  // 2D (the march loads a row ahead) on equal spacings (lap's factored form)
  const Case c2 = test::load(test::pde_case(
      "[9, 9]",
      "  fields: {u: {initial: {value: 1}}, v: {}}\n"
      "  equations: {u: \"lap(u) - u*v^2\", v: \"0.5*lap(v) + u*v^2\"}\n"
      "  integrator: euler\n  dt: 0.001\n  steps: 1\n"));
  for (const char* real : {"float", "double"}) {
    const std::string src = pde_kernel_source(c2.pde.program, real, 2, pde_terms<double>(PdeIntegrator::Euler), true);
    CHECK_THAT(src, Catch::Contains("#define GF_PDE_AHEAD 1"));
    CHECK_THAT(src, Catch::Contains("kEqualH = 1"));
    CHECK(pde_rtc_compile(src, 90).image.size() > 1000);
  }
  // the march with and without its L2 prefetch (pde_march_prefetch)
  const std::string with = pde_kernel_source(c.pde.program, "float", 3);
  const std::string without = pde_kernel_source(c.pde.program, "float", 3, {}, false, false);
  CHECK_THAT(with, Catch::Contains("pde_march_and_faces<3, 1>"));
  CHECK_THAT(without, Catch::Contains("pde_march_and_faces<3, 0>"));
  CHECK(pde_rtc_compile(without, 90).image.size() > 1000);
  // the two programs a source holds, each whole (pde_source_parts)
  const PdeSourceParts parts = pde_source_parts(with);
  CHECK_THAT(parts.march, Catch::Contains("gf_pde_stage_march("));
  CHECK_THAT(parts.march, !Catch::Contains("gf_pde_stage_i32("));
  CHECK_THAT(parts.point, Catch::Contains("gf_pde_stage_i32("));
  CHECK_THAT(parts.point, Catch::Contains("gf_pde_stage_i64("));
  CHECK_THAT(parts.point, !Catch::Contains("gf_pde_stage_march("));
  CHECK(pde_rtc_compile(parts.march, 90).image.size() > 1000);
  CHECK(pde_rtc_compile(parts.point, 90).image.size() > 1000);
  // 1D: no march, the point kernels are the whole
  const Case c1 = test::load(test::pde_case(
      "[9]", "  fields: {u: {initial: {value: 1}}}\n  equations: {u: \"lap(u)\"}\n"
             "  integrator: euler\n  dt: 0.001\n  steps: 1\n"));
  const PdeSourceParts one = pde_source_parts(pde_kernel_source(c1.pde.program, "double", 1));
  CHECK(one.march.empty());
  CHECK(pde_rtc_compile(one.point, 90).image.size() > 1000);
  ::unsetenv("GRIDFORGE_KERNEL_CACHE");
  std::filesystem::remove_all(dir);
}
#endif

#if defined(GRIDFORGE_HAVE_CUDA)
#include <fstream>

#include "solvers/pde.hpp"
// Hidden: writes the source of a case's kernel to $GF_PDE_SOURCE (for ptxas
// and cuobjdump when tuning the kernel): gridforge_tests "[.pde_source]".
TEST_CASE("pde kernel source of a case, written out", "[.pde_source]") {
  const char* out = std::getenv("GF_PDE_SOURCE");
  const char* cs = std::getenv("GF_PDE_CASE");
  if (!out || !cs) return;  // nothing asked (ctest lists hidden tests too)
  const Case c = prepare_case(load_case(cs));
  const bool f32 = c.precision == Precision::Float32;
  std::ofstream(out) << pde_kernel_source(
      c.pde.program, f32 ? "float" : "double", c.grid.ndim,
      f32 ? pde_terms<float>(c.pde.integrator) : pde_terms<double>(c.pde.integrator),
      f32 ? pde_equal_spacings<float>(c.grid) : pde_equal_spacings<double>(c.grid));
}
#endif
