// bench's reference loads on the GPU: the device-to-device copy and the
// triad against the CPU, into poisoned outputs, at sizes that are not
// multiples of the block size; a bench row timed with CUDA events; and the
// poisson rows' solves against the CPU's.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/device.hpp"
#include "solvers/bench.hpp"
#include "solvers/bench_solve.hpp"

using namespace gf;

TEMPLATE_TEST_CASE("GPU copy and triad equal the CPU's", "[gpu]", float, double) {
  using T = TestType;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  for (std::int64_t n : {1, 255, 257, 100003}) {
    Grid g;
    g.n[0] = n;
    std::vector<T> hb(n), hc(n), poison(n, std::numeric_limits<T>::quiet_NaN());
    for (auto& x : hb) x = static_cast<T>(d(rng));
    for (auto& x : hc) x = static_cast<T>(d(rng));
    auto run = [&](Backend<T>& be, bool triad) {
      Field<T> a = be.make_field(g, "a"), b = be.make_field(g, "b"), c = be.make_field(g, "c");
      be.upload(hb.data(), b);
      be.upload(hc.data(), c);
      be.upload(poison.data(), a);
      if (triad)
        be.vec().triad(a, b, T(-1.5), c);
      else
        be.copy(b, a);
      std::vector<T> out(n);
      be.download(a, out.data());
      return out;
    };
    for (bool triad : {false, true}) {
      const auto want = run(*cpu, triad), got = run(*gpu, triad);
      std::size_t bad = 0, unwritten = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (std::isnan(double(got[i]))) ++unwritten;
        // b + s·c may be contracted into an FMA on the GPU: one rounding apart
        else if (std::fabs(double(got[i]) - double(want[i])) >
                 4 * std::numeric_limits<T>::epsilon() * (1 + std::fabs(double(want[i]))))
          ++bad;
      }
      INFO("n " << n << (triad ? " triad" : " copy") << " float" << 8 * sizeof(T));
      CHECK(unwritten == 0);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("GPU bandwidth and a bench row", "[gpu]") {
  auto gpu = make_cuda_backend<float>(0);
  const Bandwidth copy = measure_copy_bandwidth<float>(*gpu, std::size_t(64) << 20, 5);
  CHECK(copy.kind == "copy");
  // Only that a time was measured: under compute-sanitizer the triad runs at
  // about 0.5 GB/s. The speed itself is gridforge bench's business.
  CHECK(copy.GBps > 0);
  const Bandwidth triad = measure_triad_bandwidth<float>(*gpu, std::size_t(64) << 20, 5);
  CHECK(triad.GBps > 0);
  for (const std::string& w : bench_workloads()) {
    const Case c =
        bench_case({w, default_bench_method(w, 3), 3, cube_shape(3, 37), Precision::Float32});
    TimingPlan plan;
    plan.steps = 4;
    plan.repetitions = 3;
    const BenchTiming t = time_bench_case<float>(c, *gpu, plan);
    INFO(w);
    CHECK(t.steps == 4);
    REQUIRE(t.ms_per_step.size() == 3);
    for (double ms : t.ms_per_step) CHECK(ms > 0);
    const std::size_t fields = w == "wave" ? 3 : 2;  // the leapfrog also reads the level before
    CHECK(t.bytes_per_step == fields * std::size_t(37 * 37 * 37) * sizeof(float));
  }
}

// bench --workload poisson (issue 22) on the GPU: every method solves the
// problem as the CPU does (the error against the analytic solution is the
// discretisation's, the same to the solve's tolerance), on grids that are not
// multiples of the block size, 2D and 3D; float32 reaches its floor or the
// tolerance; and the time budget ends a Jacobi row on the GPU too.
TEST_CASE("GPU poisson rows solve as the CPU's", "[gpu][poisson]") {
  const std::vector<std::vector<std::int64_t>> shapes = {{17, 17, 17}, {33, 17, 9}, {33, 19}};
  for (const auto& shape : shapes)
    for (const PoissonMethod& m : poisson_methods()) {
      const BenchItem it{"poisson", m.name, int(shape.size()), shape, Precision::Float64};
      const Case c = poisson_case(it, {});
      auto cpu = make_cpu_backend<double>();
      auto gpu = make_cuda_backend<double>(0);
      const SolveOutcome want = time_poisson_solve<double>(c, *cpu, {});
      const SolveOutcome got = time_poisson_solve<double>(c, *gpu, {});
      INFO(m.name << " on " << c.grid.shape_str() << " float64: cpu " << want.iterations
                  << " iterations, error " << want.max_error << "; gpu " << got.iterations
                  << ", error " << got.max_error);
      CHECK(got.converged);
      CHECK(got.reason == want.reason);
      CHECK(got.max_error == Approx(want.max_error).epsilon(1e-4).margin(1e-12));
      // jacobi and sor count in chunks of 50: rounding may move the check that passes
      CHECK(std::abs(got.iterations - want.iterations) <=
            (m.method == LaplaceMethod::Jacobi || m.method == LaplaceMethod::Sor ? 50 : 1));
    }
  for (const char* method : {"multigrid", "cg", "fft"}) {
    const BenchItem it{"poisson", method, 3, {17, 17, 17}, Precision::Float32};
    const Case c = poisson_case(it, {});
    auto cpu = make_cpu_backend<float>();
    auto gpu = make_cuda_backend<float>(0);
    const SolveOutcome want = time_poisson_solve<float>(c, *cpu, {});
    const SolveOutcome got = time_poisson_solve<float>(c, *gpu, {});
    INFO(method << " float32: gpu " << got.reason << " at " << got.residual);
    CHECK((got.reason == "converged" || got.reason == "stalled" || got.reason == "direct"));
    CHECK(got.max_error == Approx(want.max_error).epsilon(2e-2));
  }
  SolveLimits lim;
  lim.max_seconds = 0.2;
  const Case c = poisson_case({"poisson", "jacobi", 3, {129, 129, 129}, Precision::Float64}, lim);
  auto gpu = make_cuda_backend<double>(0);
  const SolveOutcome o = time_poisson_solve<double>(c, *gpu, lim);
  CHECK(o.reason == "time_limit");
  CHECK_FALSE(o.converged);
  CHECK(o.solve_s >= 0.2);
  CHECK(o.solve_s < 5);
  CHECK(o.residual < o.residual0);
}
