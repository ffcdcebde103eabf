// The explicit heat formula against analytic solutions, with observed orders
// of convergence, and every boundary rule on the CPU reference executor.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "solvers/heat.hpp"
#include "tests/unit/heat_test_util.hpp"

using namespace gf;

namespace {

const double kPi = 3.14159265358979323846;

// Runs a case text on the CPU to its end; returns the final field.
std::vector<double> run_cpu(const Case& c, double* t_final = nullptr) {
  auto be = make_cpu_backend<double>();
  HeatSolver<double> s(c, *be);
  s.advance(c.heat.steps);
  std::vector<double> u(s.field().size());
  be->download(s.field(), u.data());
  if (t_final) *t_final = s.time();
  return u;
}

double max_error(const Case& c, const std::vector<double>& u, double t, auto&& exact) {
  const Grid& g = c.grid;
  double e = 0;
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i)
        e = std::max(e, std::fabs(u[g.index(i, j, k)] -
                                  exact(g.coord(0, i), g.coord(1, j), g.coord(2, k), t)));
  return e;
}

// Errors at three resolutions n, 2n−1(+1), ...: observed orders log2(e_k / e_{k+1}).
std::vector<double> orders(const std::vector<double>& err) {
  std::vector<double> p;
  for (std::size_t i = 0; i + 1 < err.size(); ++i) p.push_back(std::log2(err[i] / err[i + 1]));
  return p;
}

}  // namespace

TEST_CASE("2D Dirichlet heat converges to sin(πx)sin(πy)exp(-2π²αt) at second order", "[heat]") {
  std::vector<double> err;
  for (int n : {17, 33, 65}) {
    const std::string text = "workload: heat\ngrid: {dims: [" + std::to_string(n) + ", " +
                             std::to_string(n) +
                             "]}\ninitial: {expr: \"sin(pi*x)*sin(pi*y)\"}\n"
                             "heat: {alpha: 0.5, t_end: 0.05}\n";
    Case c = load_case_text(text, "conv2d.yaml");
    double t = 0;
    const auto u = run_cpu(c, &t);
    REQUIRE(t == 0.05);
    err.push_back(max_error(c, u, t, [](double x, double y, double, double t) {
      return std::sin(kPi * x) * std::sin(kPi * y) * std::exp(-2 * kPi * kPi * 0.5 * t);
    }));
  }
  for (double p : orders(err)) CHECK(p == Approx(2.0).margin(0.15));
  CHECK(err.back() < 2e-4);  // h = 1/64
}

TEST_CASE("1D Neumann heat converges to cos(πx)exp(-π²t) at second order", "[heat]") {
  std::vector<double> err;
  for (int n : {21, 41, 81}) {
    const std::string text = "workload: heat\ngrid: {dims: [" + std::to_string(n) +
                             "]}\ninitial: {expr: \"cos(pi*x)\"}\n"
                             "boundary: {x: {type: neumann, gradient: 0}}\n"
                             "heat: {alpha: 1.0, t_end: 0.1}\n";
    Case c = load_case_text(text, "neumann1d.yaml");
    double t = 0;
    const auto u = run_cpu(c, &t);
    err.push_back(max_error(c, u, t, [](double x, double, double, double t) {
      return std::cos(kPi * x) * std::exp(-kPi * kPi * t);
    }));
  }
  for (double p : orders(err)) CHECK(p == Approx(2.0).margin(0.15));
}

TEST_CASE("1D periodic heat converges to sin(2πx)exp(-4π²αt) at second order", "[heat]") {
  std::vector<double> err;
  for (int n : {16, 32, 64}) {
    const std::string text = "workload: heat\ngrid: {dims: [" + std::to_string(n) +
                             "]}\ninitial: {expr: \"sin(2*pi*x)\"}\n"
                             "boundary: {x: {type: periodic}}\n"
                             "heat: {alpha: 0.1, t_end: 0.2}\n";
    Case c = load_case_text(text, "periodic1d.yaml");
    REQUIRE(c.grid.h[0] == Approx(1.0 / n));  // periodic: point n is point 0
    double t = 0;
    const auto u = run_cpu(c, &t);
    err.push_back(max_error(c, u, t, [](double x, double, double, double t) {
      return std::sin(2 * kPi * x) * std::exp(-4 * kPi * kPi * 0.1 * t);
    }));
  }
  for (double p : orders(err)) CHECK(p == Approx(2.0).margin(0.15));
}

TEST_CASE("3D mixed boundaries: periodic z, Dirichlet x, Neumann y match the analytic decay",
          "[heat]") {
  // u = sin(πx)·cos(πy)·sin(2πz) satisfies u=0 on x faces, ∂u/∂y=0 on y faces,
  // and is periodic in z; it decays as exp(-(π²+π²+4π²)αt).
  std::vector<double> err;
  for (int n : {9, 17, 33}) {
    const std::string d = std::to_string(n);
    const std::string text = "workload: heat\ngrid: {dims: [" + d + ", " + d + ", " +
                             std::to_string(n - 1) +
                             "]}\ninitial: {expr: \"sin(pi*x)*cos(pi*y)*sin(2*pi*z)\"}\n"
                             "boundary: {y: {type: neumann, gradient: 0}, z: {type: periodic}}\n"
                             "heat: {alpha: 0.05, t_end: 0.2}\n";
    Case c = load_case_text(text, "mixed3d.yaml");
    double t = 0;
    const auto u = run_cpu(c, &t);
    err.push_back(max_error(c, u, t, [](double x, double y, double z, double t) {
      return std::sin(kPi * x) * std::cos(kPi * y) * std::sin(2 * kPi * z) *
             std::exp(-6 * kPi * kPi * 0.05 * t);
    }));
  }
  for (double p : orders(err)) CHECK(p == Approx(2.0).margin(0.2));
}

TEST_CASE("Neumann gradients follow the outward normal: a linear profile is steady", "[heat]") {
  // u = 2x: ∂u/∂n = −2 on x- (normal −x) and +2 on x+. The discrete Laplacian of
  // a linear profile is zero and the ghost values extend it, so u stays 2x.
  Case c = load_case_text(
      "workload: heat\ngrid: {dims: [33]}\ninitial: {expr: \"2*x\"}\n"
      "boundary: {x-: {type: neumann, gradient: -2}, x+: {type: neumann, gradient: 2}}\n"
      "heat: {alpha: 1.0, steps: 500}\n",
      "linear.yaml");
  const auto u = run_cpu(c);
  for (std::int64_t i = 0; i < c.grid.n[0]; ++i) CHECK(u[i] == Approx(2 * c.grid.coord(0, i)).margin(1e-12));

  // The wrong sign would bend the profile: check the test can fail.
  Case wrong = load_case_text(
      "workload: heat\ngrid: {dims: [33]}\ninitial: {expr: \"2*x\"}\n"
      "boundary: {x-: {type: neumann, gradient: 2}, x+: {type: neumann, gradient: 2}}\n"
      "heat: {alpha: 1.0, steps: 500}\n",
      "linear_wrong.yaml");
  const auto w = run_cpu(wrong);
  CHECK(std::fabs(w[0] - 0.0) > 1e-3);
}

TEST_CASE("Dirichlet values, expressions included, are held on their faces", "[heat]") {
  Case c = load_case_text(
      "workload: heat\ngrid: {dims: [21, 17]}\ninitial: {value: 1}\n"
      "boundary: {x-: {type: dirichlet, value: \"y^2\"}, x+: {type: dirichlet, value: -1},\n"
      "           y: {type: neumann, gradient: 0}}\n"
      "heat: {alpha: 1.0, steps: 300}\n",
      "dirichlet.yaml");
  const auto u = run_cpu(c);
  const Grid& g = c.grid;
  for (std::int64_t j = 0; j < g.n[1]; ++j) {
    const double y = g.coord(1, j);
    CHECK(u[g.index(0, j)] == Approx(y * y).margin(1e-15));
    CHECK(u[g.index(g.n[0] - 1, j)] == -1.0);
  }
  CHECK(u[g.index(10, 8)] < 1.0);  // the interior did change
}

TEST_CASE("A uniform source raises an insulated body at rate s, as a constant or as a field",
          "[heat]") {
  for (const char* src : {"3", "3 + 0*x"}) {  // the second uses x: the per-point source path
    Case c = load_case_text(std::string("workload: heat\ngrid: {dims: [11, 9, 7]}\n"
                                        "initial: {value: 0.5}\n"
                                        "boundary: {default: {type: neumann, gradient: 0}}\n"
                                        "heat: {alpha: 1.0, t_end: 0.01, source: \"") +
                                src + "\"}\n",
                            "source.yaml");
    double t = 0;
    const auto u = run_cpu(c, &t);
    for (double v : u) CHECK(v == Approx(0.5 + 3 * 0.01).epsilon(1e-12));
  }
}

TEST_CASE("t_end: the last step is shortened so the run ends exactly at t_end", "[heat]") {
  Case c = load_case_text("workload: heat\ngrid: {dims: [11]}\ninitial: {value: 0}\n"
                          "heat: {alpha: 1.0, t_end: 0.00123}\n",
                          "tend.yaml");
  REQUIRE(c.heat.last_dt <= c.heat.dt);
  REQUIRE(c.heat.last_dt > 0);
  CHECK((c.heat.steps - 1) * c.heat.dt + c.heat.last_dt == Approx(0.00123).epsilon(1e-14));
  double t = 0;
  run_cpu(c, &t);
  CHECK(t == 0.00123);
}

TEST_CASE("output_schedule: 0, every, ..., and the last step", "[heat]") {
  const auto steps = [](std::int64_t total, std::int64_t every) {
    const Schedule s = output_schedule(total, every);
    std::vector<std::int64_t> out;
    for (std::int64_t k = 0; k <= total; k = next_stop(k, total + 1, s))
      if (s.due(k)) out.push_back(k);
    return out;
  };
  CHECK(steps(10, 4) == std::vector<std::int64_t>{0, 4, 8, 10});
  CHECK(steps(8, 4) == std::vector<std::int64_t>{0, 4, 8});
  CHECK(steps(10, 0) == std::vector<std::int64_t>{10});
  // A billion outputs are a rule, not a list.
  CHECK(output_schedule(1000000000, 1).at.steps.size() == 1);
}

TEST_CASE("CPU temporally blocked heat equals one step at a time, bit for bit", "[heat]") {
  // 3D and 2D; boundary mixes with periodic axes, walls and a source field;
  // a periodic last axis shorter than k; rows of 1 and 2 interior points; a
  // 2D row long enough to be shared among the threads in pieces
  auto cpu32 = make_cpu_backend<float>();
  auto cpu64 = make_cpu_backend<double>();
  const std::vector<std::vector<std::int64_t>> shapes = {{13, 9, 11}, {3, 4, 3}, {4, 5, 2},
                                                         {13, 11},    {3, 3},    {4, 2},
                                                         {4099, 5}};
  test::for_each_time_block_case(shapes, [&](int k, const auto& kind, const auto& n, bool src) {
    test::compare_time_block<float>(*cpu32, k, n, kind, src);
    test::compare_time_block<double>(*cpu64, k, n, kind, src);
  });
  // what it offers: 2D and 3D, k = 2 to 4 (auto: 4, which the solver times)
  auto exec = make_heat_exec(*cpu32);
  HeatArgs<float> a;
  a.ndim = 3;
  std::int64_t n[3] = {32, 32, 32};
  CHECK(exec->time_block(a, Layout::dense(n), 2) == 2);
  CHECK(exec->time_block(a, Layout::dense(n), 4) == 4);
  CHECK(exec->time_block(a, Layout::dense(n), 5) == 1);
  CHECK(exec->time_block(a, Layout::dense(n), 0) == 4);
  a.ndim = 2;
  n[2] = 1;
  CHECK(exec->time_block(a, Layout::dense(n), 3) == 3);
  CHECK(exec->time_block(a, Layout::dense(n), 0) == 4);
  a.ndim = 1;
  n[1] = 1;
  CHECK(exec->time_block(a, Layout::dense(n), 2) == 1);
  CHECK(exec->time_block(a, Layout::dense(n), 0) == 1);
  Grid g;
  g.ndim = 1;
  g.n[0] = 32;
  Field<float> u = cpu32->make_field(g, "u"), v = cpu32->make_field(g, "v");
  CHECK_THROWS_AS(exec->steps(a, 2, u, v), DeviceError);
}

TEST_CASE("heat.time_block on the CPU: the same fields as one step a pass", "[heat]") {
  const std::string text = R"Y(workload: heat
precision: float32
grid: {dims: [12, 10, 9]}
initial: {expr: "sin(3*x)*cos(2*y)+z"}
boundary: {default: {type: neumann, gradient: 0.5}, z: {type: periodic}}
heat: {alpha: 1.0, t_end: 0.01, source: "x*y"}
)Y";
  auto field_after = [&](const char* tb) {
    const gf::Case c = gf::load_case_text(text, "case.yaml", {std::string("heat.time_block=") + tb});
    auto cpu = gf::make_cpu_backend<float>();
    gf::HeatSolver<float> s(c, *cpu);
    s.advance(c.heat.steps);
    std::vector<float> u(static_cast<std::size_t>(c.grid.size()));
    cpu->download(s.field(), u.data());
    CHECK(s.step() == c.heat.steps);
    CHECK(s.time() == c.heat.t_end);
    return u;
  };
  CHECK(field_after("4") == field_after("1"));
}

namespace {

// The CPU executor's rows (direct neighbours off the faces) against the
// point formulas with the boundary rules at every point: the same values,
// to the bit, for every mix of boundaries, 1D to 3D.
template <class T>
void cpu_rows_equal_points(int ndim, std::array<std::int64_t, 3> n, gf::BcType lo, gf::BcType hi,
                           bool field_source) {
  std::mt19937_64 rng(77 + ndim + int(lo) * 3 + int(hi));
  std::uniform_real_distribution<double> d(-1, 1);
  gf::Grid g;
  g.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = ax < ndim ? n[ax] : 1;
  const auto np = static_cast<std::size_t>(g.size());
  std::vector<T> u0(np), s0(np);
  for (auto& x : u0) x = T(d(rng));
  for (auto& x : s0) x = T(d(rng));
  auto cpu = gf::make_cpu_backend<T>();
  auto heat = gf::make_heat_exec(*cpu);
  auto laplace = gf::make_laplace_exec(*cpu);
  gf::Field<T> u = cpu->make_field(g, "u"), v = cpu->make_field(g, "v");
  cpu->upload(u0.data(), u);
  // the point formulas read the host array u0 (dense, as host arrays are)
  const gf::FieldView<const T> u0v(u0.data(), g.layout());
  gf::HeatArgs<T> h;
  gf::LaplaceArgs<T> l;
  h.ndim = l.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) {
    h.c[ax] = ax < ndim ? T(0.1 + 0.01 * ax) : T(0);
    l.ih2[ax] = ax < ndim ? T(1.7 + ax) : T(0);
    const bool per = lo == gf::BcType::Periodic;
    h.bc[ax].lo = l.bc[ax].lo = per ? lo : (ax % 2 ? hi : lo);
    h.bc[ax].hi = l.bc[ax].hi = per ? hi : (ax % 2 ? lo : hi);
    h.bc[ax].ghost_lo = l.bc[ax].ghost_lo = T(0.3);
    h.bc[ax].ghost_hi = l.bc[ax].ghost_hi = T(-0.2);
  }
  h.dt = T(1e-3);
  h.source = field_source ? s0.data() : nullptr;
  h.source_const = T(0.25);
  l.inv_diag = T(0.123);
  l.f = field_source ? s0.data() : nullptr;
  l.f_const = T(0.5);
  const auto check = [&](auto point) {
    std::vector<T> got(np);
    cpu->download(v, got.data());
    std::size_t differ = 0;
    for (std::int64_t k = 0; k < g.n[2]; ++k)
      for (std::int64_t j = 0; j < g.n[1]; ++j)
        for (std::int64_t i = 0; i < g.n[0]; ++i) {
          const T want = point(i, j, k);
          const std::size_t idx = std::size_t(i + g.n[0] * (j + g.n[1] * k));
          if (std::memcmp(&want, &got[idx], sizeof(T)) != 0) ++differ;
        }
    INFO("ndim " << ndim << " bc " << int(lo) << "/" << int(hi) << " float" << 8 * sizeof(T));
    CHECK(differ == 0);
  };
  heat->step(h, u, v);
  check([&](std::int64_t i, std::int64_t j, std::int64_t k) {
    switch (ndim) {
      case 1: return gf::heat_point_bc<1>(h, u0v, i, j, k);
      case 2: return gf::heat_point_bc<2>(h, u0v, i, j, k);
      default: return gf::heat_point_bc<3>(h, u0v, i, j, k);
    }
  });
  laplace->jacobi_sweep(l, u, v);
  check([&](std::int64_t i, std::int64_t j, std::int64_t k) {
    switch (ndim) {
      case 1: return gf::jacobi_point<1>(l, u0v, i, j, k);
      case 2: return gf::jacobi_point<2>(l, u0v, i, j, k);
      default: return gf::jacobi_point<3>(l, u0v, i, j, k);
    }
  });
}

}  // namespace

TEST_CASE("the CPU's row loops give the point formulas' values to the bit", "[heat][laplace]") {
  using gf::BcType;
  const std::vector<std::pair<BcType, BcType>> bcs = {{BcType::Dirichlet, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Neumann},
                                                      {BcType::Periodic, BcType::Periodic}};
  for (auto [lo, hi] : bcs)
    for (bool src : {false, true}) {
      cpu_rows_equal_points<float>(1, {41, 1, 1}, lo, hi, src);
      cpu_rows_equal_points<double>(2, {23, 17, 1}, lo, hi, src);
      cpu_rows_equal_points<float>(3, {13, 11, 9}, lo, hi, src);
      cpu_rows_equal_points<double>(3, {2, 5, 3}, lo, hi, src);
      // rows long enough for the vector loops' main body and remainder at any width
      cpu_rows_equal_points<float>(3, {70, 5, 4}, lo, hi, src);
      cpu_rows_equal_points<double>(3, {37, 4, 6}, lo, hi, src);
    }
}

namespace {

template <class T, int D>
void check_forms(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-3, 3), dc(0.01, 0.15);
  T c[3] = {T(dc(rng)), T(dc(rng)), T(dc(rng))};
  T ci[3] = {c[0], c[0], c[0]};
  for (int t = 0; t < 200; ++t) {
    const T u = T(d(rng)), s = T(d(rng));
    const T m[3] = {u, u, u}, p[3] = {u, u, u};
    // a constant field stays exactly constant, in either form, and adds s alone
    CHECK(gf::ftcs_point_as<D, false, false>(u, m, p, c, s) == u);
    CHECK(gf::ftcs_point_as<D, true, false>(u, m, p, ci, s) == u);
    CHECK(gf::ftcs_point_as<D, true, true>(u, m, p, ci, s) == u + s);
    CHECK(gf::ftcs_point_as<D, false, true>(u, m, p, c, s) == u + s);
    // on any values the two forms agree to rounding
    T mr[3], pr[3];
    for (int a = 0; a < 3; ++a) mr[a] = T(d(rng)), pr[a] = T(d(rng));
    const double iso = gf::ftcs_point_as<D, true, true>(u, mr, pr, ci, s);
    const double aniso = gf::ftcs_point_as<D, false, true>(u, mr, pr, ci, s);
    CHECK(iso == Approx(aniso).margin(16 * std::numeric_limits<T>::epsilon() * 10));
  }
}

}  // namespace

TEST_CASE("FTCS: the isotropic and anisotropic forms, a constant kept exactly", "[heat]") {
  std::mt19937_64 rng(99);
  check_forms<float, 1>(rng);
  check_forms<float, 2>(rng);
  check_forms<float, 3>(rng);
  check_forms<double, 2>(rng);
  check_forms<double, 3>(rng);
  gf::HeatArgs<double> a;
  a.c[0] = a.c[1] = a.c[2] = 0.1;
  CHECK(gf::heat_form<3>(a).iso);
  CHECK(gf::heat_form<2>(a).iso);
  CHECK_FALSE(gf::heat_form<1>(a).iso);
  CHECK_FALSE(gf::heat_form<3>(a).src);
  a.c[2] = 0.2;
  CHECK_FALSE(gf::heat_form<3>(a).iso);
  CHECK(gf::heat_form<2>(a).iso);  // a 2D grid has no c[2]
  a.source_const = 1e-3;
  CHECK(gf::heat_form<3>(a).src);
}
