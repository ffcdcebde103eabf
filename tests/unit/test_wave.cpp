// The wave workload: the executor's parts against its whole step, the
// leapfrog scheme's order of convergence against a standing wave, its
// energy on a periodic grid, the absorbing faces, the CFL check.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "tests/unit/wave_test_util.hpp"

using namespace gf;

TEST_CASE("wave step in two parts equals the whole step on the CPU", "[wave]") {
  const BcType kinds[][2] = {{BcType::Dirichlet, BcType::Absorbing},
                             {BcType::Neumann, BcType::Neumann},
                             {BcType::Absorbing, BcType::Absorbing},
                             {BcType::Periodic, BcType::Periodic}};
  for (const auto& k : kinds)
    for (int ndim = 1; ndim <= 3; ++ndim) {
      std::mt19937_64 rng(5 + ndim);
      const WaveArgs<double> a = test::random_wave_args<double>(ndim, k[0], k[1], rng);
      const std::int64_t n[3] = {13, 9, 7};
      const Grid g = test::grid_of(ndim, n);
      const std::size_t np = std::size_t(g.size());
      const auto w0 = test::random_field<double>(np, rng), u0 = test::random_field<double>(np, rng),
                 f = test::random_field<double>(np, rng);
      auto cpu = make_cpu_backend<double>();
      const auto whole = test::wave_steps<double>(*cpu, a, g, w0, u0, &f, 4);
      const auto parts = test::wave_steps<double>(*cpu, a, g, w0, u0, &f, 4, true);
      INFO("ndim " << ndim << " bc " << int(k[0]) << "/" << int(k[1]));
      CHECK(whole == parts);
    }
}

TEST_CASE("wave formula: a constant field stays constant, Dirichlet points hold", "[wave]") {
  // a = 2, b = −1, w = u: every neighbour sum is 2u, so uⁿ⁺¹ = u exactly.
  std::mt19937_64 rng(3);
  WaveArgs<float> a = test::random_wave_args<float>(3, BcType::Neumann, BcType::Dirichlet, rng);
  for (auto& b : a.bc) b.ghost_lo = b.ghost_hi = 0;
  a.source_const = 0;
  const std::int64_t n[3] = {8, 5, 6};
  const Grid g = test::grid_of(3, n);
  const std::vector<float> u(std::size_t(g.size()), 0.375f);
  auto cpu = make_cpu_backend<float>();
  const auto out = test::wave_steps<float>(*cpu, a, g, u, u, nullptr, 3);
  for (float v : out) REQUIRE(v == 0.375f);
}

// ---- the solver, through the case reader ----------------------------------

#include "core/error.hpp"
#include "io/case.hpp"
#include "solvers/wave.hpp"

namespace {

const double kPi = 3.14159265358979323846;

struct Levels {
  std::vector<double> u, prev;
  double t = 0;
};

Levels run_wave(const Case& c, std::int64_t steps) {
  auto be = make_cpu_backend<double>();
  WaveSolver<double> s(c, *be);
  s.advance(steps);
  Levels r;
  r.u.resize(s.field().size());
  r.prev.resize(s.field().size());
  be->download(s.field(), r.u.data());
  be->download(s.previous(), r.prev.data());
  r.t = s.time();
  return r;
}

std::string dims_of(int ndim, int n) {
  std::string d = "[";
  for (int a = 0; a < ndim; ++a) d += (a ? ", " : "") + std::to_string(n);
  return d + "]";
}

}  // namespace

TEST_CASE("leapfrog converges at second order to a standing wave", "[wave]") {
  // u = Π sin(π x_a) · cos(c·π·√D·t) + v: the velocity term sin(...)·sin(ω t)/ω·v0 too
  for (int ndim = 1; ndim <= 3; ++ndim) {
    std::vector<double> err;
    const std::vector<int> sizes = ndim == 3 ? std::vector<int>{9, 17, 33} : std::vector<int>{17, 33, 65};
    for (int n : sizes) {
      std::string shape = "sin(pi*x)";
      if (ndim > 1) shape += "*sin(pi*y)";
      if (ndim > 2) shape += "*sin(pi*z)";
      const std::string text = "workload: wave\ngrid: {dims: " + dims_of(ndim, n) +
                               "}\ninitial: {expr: \"" + shape + "\"}\n"
                               "wave: {c: 0.8, t_end: 0.6, velocity: \"0.5*" + shape + "\"}\n";
      const Case c = load_case_text(text, "standing.yaml");
      const Levels r = run_wave(c, c.wave.steps);
      REQUIRE(std::fabs(r.t - 0.6) < 1e-12);
      const double w = 0.8 * kPi * std::sqrt(double(ndim));
      const Grid& g = c.grid;
      double e = 0;
      for (std::int64_t k = 0; k < g.n[2]; ++k)
        for (std::int64_t j = 0; j < g.n[1]; ++j)
          for (std::int64_t i = 0; i < g.n[0]; ++i) {
            double s = std::sin(kPi * g.coord(0, i));
            if (ndim > 1) s *= std::sin(kPi * g.coord(1, j));
            if (ndim > 2) s *= std::sin(kPi * g.coord(2, k));
            const double exact = s * (std::cos(w * r.t) + 0.5 * std::sin(w * r.t) / w);
            e = std::max(e, std::fabs(r.u[std::size_t(g.index(i, j, k))] - exact));
          }
      err.push_back(e);
    }
    INFO("ndim " << ndim << " errors " << err[0] << " " << err[1] << " " << err[2]);
    CHECK(err[2] < 2e-3);
    for (std::size_t i = 0; i + 1 < err.size(); ++i) CHECK(std::log2(err[i] / err[i + 1]) > 1.85);
  }
}

TEST_CASE("leapfrog conserves the discrete energy on a periodic grid to round-off", "[wave]") {
  const std::string text =
      "workload: wave\ngrid: {dims: [48, 40], extent: [1.0, 0.8]}\n"
      "boundary: {default: {type: periodic}}\n"
      "initial: {expr: \"sin(2*pi*x)*cos(2*pi*y/0.8) + 0.3*cos(4*pi*x)\"}\n"
      "wave: {c: 1.3, steps: 1, velocity: \"0.7*sin(2*pi*y/0.8)\"}\n";
  const Case c = load_case_text(text, "energy.yaml");
  const Grid& g = c.grid;
  // E = Σ ((uⁿ⁺¹ − uⁿ)/dt)² + c²·Σ_a Σ D_a uⁿ⁺¹ · D_a uⁿ (D_a: forward differences)
  auto energy = [&](const Levels& r) {
    const double dt = c.wave.dt, cc = c.wave.c * c.wave.c;
    double kin = 0, pot = 0;
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const std::size_t q = std::size_t(g.index(i, j, 0));
        kin += (r.u[q] - r.prev[q]) * (r.u[q] - r.prev[q]) / (dt * dt);
        const std::size_t qx = std::size_t(g.index((i + 1) % g.n[0], j, 0));
        const std::size_t qy = std::size_t(g.index(i, (j + 1) % g.n[1], 0));
        pot += (r.u[qx] - r.u[q]) * (r.prev[qx] - r.prev[q]) / (g.h[0] * g.h[0]);
        pot += (r.u[qy] - r.u[q]) * (r.prev[qy] - r.prev[q]) / (g.h[1] * g.h[1]);
      }
    return kin + cc * pot;
  };
  const double e1 = energy(run_wave(c, 1));
  for (std::int64_t n : {10, 100, 400}) {
    const double e = energy(run_wave(c, n));
    INFO("after " << n << " steps: " << e << " against " << e1);
    CHECK(std::fabs(e - e1) <= 1e-11 * e1);
  }
}

TEST_CASE("an absorbing face lets a pulse out and a Dirichlet face sends it back", "[wave]") {
  // A right-going pulse u(x − ct): v₀ = −c·u'(x).
  auto run = [](const std::string& face) {
    const std::string text =
        "workload: wave\ngrid: {dims: [401], extent: [1.0]}\n"
        "boundary: {x+: " + face + "}\n"
        "initial: {expr: \"exp(-((x-0.5)/0.05)^2)\"}\n"
        "wave: {c: 1.0, t_end: 0.9, velocity: \"2*(x-0.5)/0.0025*exp(-((x-0.5)/0.05)^2)\"}\n";
    const Case c = load_case_text(text, "pulse.yaml");
    const Levels r = run_wave(c, c.wave.steps);
    double m = 0;
    for (double v : r.u) m = std::max(m, std::fabs(v));
    return m;
  };
  const double absorbed = run("{type: absorbing}");
  const double reflected = run("{type: dirichlet, value: 0}");
  INFO("left after t = 0.9: " << absorbed << " (absorbing), " << reflected << " (dirichlet)");
  CHECK(absorbed < 0.02);
  CHECK(reflected > 0.8);
}

TEST_CASE("wave: a dt above the CFL limit and an absorbing face elsewhere are refused", "[wave]") {
  const std::string base = "workload: wave\ngrid: {dims: [101, 101]}\nwave: {c: 2.0, steps: 3";
  CHECK_THROWS_WITH(load_case_text(base + ", dt: 0.01}\n", "cfl.yaml"),
                    Catch::Contains("wave.dt") && Catch::Contains("CFL"));
  const Case ok = load_case_text(base + "}\n", "cfl.yaml");
  CHECK(ok.wave.dt == Approx(0.9 / (2.0 * std::sqrt(2.0) * 100.0)));
  CHECK_THROWS_WITH(load_case_text("workload: heat\ngrid: {dims: [9]}\nboundary: {x-: {type: "
                                   "absorbing}}\nheat: {alpha: 1, steps: 1}\n",
                                   "heat.yaml"),
                    Catch::Contains("absorbing") && Catch::Contains("wave"));
}
