// The pde workload on the CPU: its case section and the errors of its
// equations, the operators against exact values, the integrators' orders in
// time and the operators' order in space against manufactured solutions,
// Gray–Scott against a plain loop of the same scheme, restart, and the
// generated kernel source.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/case.hpp"
#include "kernels/expr/expr_ops.hpp"
#include "kernels/pde/pde_codegen.hpp"
#include "tests/unit/pde_test_util.hpp"

using namespace gf;

namespace {

const double kPi = 3.14159265358979323846;

std::string gs_pde(const std::string& integrator, int steps) {
  return "  fields:\n"
         "    u: {initial: {expr: \"1 - 0.5*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)\"}}\n"
         "    v: {initial: {expr: \"0.25*exp(-((x-0.5)^2+(y-0.5)^2)/0.01) + 0.01*sin(37*x)*sin(41*y)\"}}\n"
         "  equations:\n"
         "    u: \"Du*lap(u) - u*v^2 + F*(1 - u)\"\n"
         "    v: \"Dv*lap(v) + u*v^2 - (F + k)*v\"\n"
         "  integrator: " + integrator + "\n  dt: 0.5\n  steps: " + std::to_string(steps) + "\n";
}
const std::string kGsParams = "{Du: 2.0e-5, Dv: 1.0e-5, F: 0.035, k: 0.065}";

}  // namespace

TEST_CASE("pde case: fields, equations and the compiled program", "[pde]") {
  const Case c = test::load(test::pde_case("[33, 33]", gs_pde("euler", 10), "  default: {type: periodic}\n", kGsParams));
  REQUIRE(c.pde.fields.size() == 2);
  CHECK(c.pde.fields[1].name == "v");
  CHECK(c.pde.program.rhs.size() == 2);
  // u, v, lap(u), lap(v): four inputs.
  CHECK(c.pde.program.inputs.size() == 4);
  CHECK(c.pde.steps == 10);
  CHECK(c.pde.dt == 0.5);
  CHECK(std::isfinite(c.pde.dt_limit));
  // Du*lap(u), Dv*lap(v), (F+k)*v: products without muparser's + 0
  // (VarScale), evaluated as the product alone
  int scales = 0;
  for (const ExprCode& r : c.pde.program.rhs)
    for (const ExprInstr& i : r.code) {
      CHECK_FALSE((i.op == ExprOp::VarMul && i.b == 0));
      scales += i.op == ExprOp::VarScale;
    }
  CHECK(scales == 3);
  const ExprInstr scale{ExprOp::VarScale, 3, -2.5, 0};
  double stack[2];
  const double got = expr_run(&scale, 1, ExprXyz{0, 0, 0, 0.0}, stack);
  CHECK(std::signbit(got));  // −2.5 · +0 is −0; with + 0 it would be +0
  CHECK(expr_run(&scale, 1, ExprXyz{0, 0, 0, 1.5}, stack) == -3.75);
  // The resolved case loads again to the same case.
  const Case again = load_case_text(c.resolved_yaml, "resolved.yaml");
  CHECK(again.resolved_yaml == c.resolved_yaml);
}

TEST_CASE("pde case: bad equations are exit 2 at the equation", "[pde]") {
  const auto err = [](const std::string& eqs, const std::string& dims = "[9, 9]",
                      const std::string& fields = "[u, v]") {
    return test::error_of(test::pde_case(dims, "  fields: " + fields + "\n  equations:\n" + eqs +
                                                   "  dt: 0.001\n  steps: 3\n"));
  };
  CHECK_THAT(err("    u: \"lap(w)\"\n    v: \"0\"\n"),
             Catch::Contains("pde.equations.u") && Catch::Contains("not to 'w'"));
  CHECK_THAT(err("    u: \"w*lap(u)\"\n    v: \"0\"\n"), Catch::Contains("unknown name 'w'"));
  CHECK_THAT(err("    u: \"lap(lap(u))\"\n    v: \"0\"\n"), Catch::Contains("radius-1"));
  CHECK_THAT(err("    u: \"dz(u)\"\n    v: \"0\"\n"), Catch::Contains("no z axis"));
  CHECK_THAT(err("    u: \"lap(u)\"\n"), Catch::Contains("field 'v' has no equation"));
  CHECK_THAT(err("    u: \"lap(u)\"\n    v: \"0\"\n    q: \"0\"\n"),
             Catch::Contains("'q' is not a field"));
  CHECK_THAT(err("    u: \"grad(u)\"\n    v: \"0\"\n"), Catch::Contains("only inside div"));
  CHECK_THAT(err("    u: \"div(u)\"\n    v: \"0\"\n"), Catch::Contains("flux form"));
  CHECK_THAT(err("    u: \"0\"\n", "[9, 9]", "[u, x]"), Catch::Contains("'x' is taken"));
  CHECK_THAT(err("    u: \"0\"\n", "[9, 9]", "[u, u]"), Catch::Contains("named twice"));
  // t is a variable of the equations and of Dirichlet values only.
  CHECK_THAT(test::error_of(test::pde_case("[9, 9]",
                                           "  fields: {u: {initial: {expr: \"t*x\"}}}\n"
                                           "  equations: {u: \"lap(u)\"}\n  dt: 0.001\n  steps: 3\n")),
             Catch::Contains("unknown name 't'"));
  // A step above the stability estimate, with what sets it.
  CHECK_THAT(test::error_of(test::pde_case("[33]", "  fields: [u]\n  equations: {u: \"lap(u)\"}\n"
                                                   "  integrator: euler\n  dt: 0.01\n  steps: 3\n",
                                           "  default: {type: dirichlet, value: 0}\n")),
             Catch::Contains("above the stability estimate") && Catch::Contains("diffusion of u"));
  // Over ranks: refused until halos are exchanged (solvers/registry.cpp).
}

TEST_CASE("pde stability estimate: the diffusion limit of euler", "[pde]") {
  // u_t = D·lap(u) on 1D, Dirichlet: euler is stable to h²/(2D); the
  // estimate counts 4D/h² against euler's reach of 2 on the real axis.
  const Case c = test::load(test::pde_case("[65]", "  fields: [u]\n  equations: {u: \"0.5*lap(u)\"}\n"
                                                   "  integrator: euler\n  steps: 3\n",
                                           "  default: {type: dirichlet, value: 0}\n"));
  const double h = 1.0 / 64;
  CHECK(c.pde.dt_limit == Approx(h * h / (2 * 0.5)).epsilon(1e-3));
  CHECK(c.pde.dt == Approx(0.9 * c.pde.dt_limit));
}

TEST_CASE("pde operators: exact for the polynomials they are exact on", "[pde]") {
  // One euler step of u_t = div(k*grad(u)) + dx(u) + lap(u)·0 with k = 1 + x
  // and u = x²: div(k∇u) = 2 + 4x and dx(u) = 2x exactly in the flux and
  // central forms; dx_up with a > 0 is the backward difference 2x − h.
  const std::string pde =
      "  fields: {u: {initial: {expr: \"x^2\"}}}\n"
      "  equations: {u: \"div((1 + x)*grad(u)) + dx(u) + 1000*dx_up(u, 1)\"}\n"
      "  integrator: euler\n  dt: 1.0e-9\n  steps: 1\n";
  const Case c = test::load(test::pde_case("[17]", pde, "  default: {type: dirichlet, value: \"x^2\"}\n"));
  auto cpu = make_cpu_backend<double>();
  const auto u = test::pde_run<double>(c, *cpu)[0];
  const double h = 1.0 / 16, dt = 1e-9;
  for (int i = 1; i < 16; ++i) {
    const double x = i * h;
    const double want = x * x + dt * ((2 + 4 * x) + 2 * x + 1000 * (2 * x - h));
    CHECK(u[std::size_t(i)] == Approx(want).epsilon(1e-14));
  }
  CHECK(u[0] == 0.0);
  CHECK(u[16] == 1.0);
}

// lap on equal spacings (PdeArgs::equal_h) is the factored sum, otherwise
// the per-axis one, each in its order of operations (the GPU march takes
// the same branch from its generated Eq::kEqualH); on a quadratic both are
// exact.
TEST_CASE("pde lap: the factored form on equal spacings, per axis otherwise", "[pde]") {
  PdeArgs<double> A;
  A.ndim = 3;
  const PdeInput lap{PdeInputKind::Lap, 0, 0, 0};
  const double* none = nullptr;  // no k
  const double m[3] = {0.3, -1.7, 2.25}, p[3] = {1.1, 0.45, -0.8}, c = 0.7;
  for (int a = 0; a < 3; ++a) A.inv_h2[a] = 1.0 / 0.01;
  A.equal_h = 1;
  const double factored = (((m[0] + p[0]) + (m[1] + p[1])) + (m[2] + p[2]) - 6.0 * c) * A.inv_h2[0];
  double bits = pde_input_at<3>(A, lap, c, m, p, 0.0, none, none);
  CHECK(std::memcmp(&bits, &factored, sizeof bits) == 0);
  A.equal_h = 0;
  A.inv_h2[1] = 1.0 / 0.04;
  double axes = 0;
  for (int a = 0; a < 3; ++a) axes = axes + ((m[a] + p[a]) - (c + c)) * A.inv_h2[a];
  bits = pde_input_at<3>(A, lap, c, m, p, 0.0, none, none);
  CHECK(std::memcmp(&bits, &axes, sizeof bits) == 0);
  // u = x² + y² + z² on h = 0.5: lap = 6 in both forms
  A.inv_h2[1] = A.inv_h2[0] = A.inv_h2[2] = 4.0;
  const double um[3] = {2.25, 2.25, 2.25}, up[3] = {4.25, 4.25, 4.25};  // about (1, 1, 1), ∓ h
  for (int eq = 0; eq < 2; ++eq) {
    A.equal_h = eq;
    CHECK(pde_input_at<3>(A, lap, 3.0, um, up, 0.0, none, none) == 6.0);
  }
}

// When the solver takes lap's factored form: every axis' 1/h² the same in
// the run's precision (periodic axes: h = extent/n, walled: extent/(n − 1)).
TEST_CASE("pde equal spacings: by 1/h² in the run's type, periodic and walled axes", "[pde]") {
  const auto grid_of = [](const std::string& dims, const std::string& bc) {
    return test::load(test::pde_case(dims, "  fields: {u: {}}\n  equations: {u: \"lap(u)\"}\n"
                                           "  integrator: euler\n  dt: 0.0001\n  steps: 1\n", bc)).grid;
  };
  const std::string walls = "  default: {type: dirichlet, value: 0}\n";
  CHECK(pde_equal_spacings<double>(grid_of("[9, 9, 9]", walls)));
  CHECK_FALSE(pde_equal_spacings<double>(grid_of("[9, 5]", walls)));
  CHECK(pde_equal_spacings<double>(grid_of("[8, 8]", "  default: {type: periodic}\n")));
  // x periodic on 8 points, y walled on 9: both 1/8
  CHECK(pde_equal_spacings<double>(grid_of("[8, 9]", walls + "  x: {type: periodic}\n")));
  CHECK(pde_equal_spacings<double>(grid_of("[17]", walls)));
  Grid g;
  g.ndim = 2;
  g.h = {0.1, std::nextafter(0.1, 1.0), 1.0};  // one ulp apart in double, not in float
  CHECK(pde_equal_spacings<float>(g));
  CHECK_FALSE(pde_equal_spacings<double>(g));
}

TEST_CASE("pde integrators: orders 1, 2, 3, 4 in time with a time-dependent source", "[pde]") {
  auto cpu = make_cpu_backend<double>();
  test::check_time_orders(*cpu);
}

TEST_CASE("pde operators: second order in space against a decaying mode", "[pde]") {
  // u = exp(−t)·sin(πx)·sin(πy), u_t = D·lap(u) + (2π²D − 1)·u, rk4 with
  // steps small enough that the error is the operator's.
  auto err_at = [](int n) {
    const std::string pde = "  fields: {u: {initial: {expr: \"sin(pi*x)*sin(pi*y)\"}}}\n"
                            "  equations: {u: \"0.1*lap(u) + (2*pi^2*0.1 - 1)*u\"}\n"
                            "  integrator: rk4\n  dt: 0.0005\n  steps: 200\n";
    const std::string dims = "[" + std::to_string(n) + ", " + std::to_string(n) + "]";
    const Case c = test::load(test::pde_case(dims, pde, "  default: {type: dirichlet, value: 0}\n"));
    auto cpu = make_cpu_backend<double>();
    const auto u = test::pde_run<double>(c, *cpu)[0];
    double err = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double x = double(i) / (n - 1), y = double(j) / (n - 1);
        err = std::max(err, std::abs(u[std::size_t(i + n * j)] -
                                     std::exp(-0.1) * std::sin(kPi * x) * std::sin(kPi * y)));
      }
    return err;
  };
  const double e1 = err_at(17), e2 = err_at(33);
  INFO("errors " << e1 << ", " << e2);
  CHECK(std::log2(e1 / e2) == Approx(2).margin(0.1));
}

TEST_CASE("pde Gray–Scott: the same as a plain loop of the same scheme", "[pde]") {
  const int n = 24, steps = 50;
  const Case c = test::load(test::pde_case("[24, 24]", gs_pde("euler", steps),
                                           "  default: {type: periodic}\n", kGsParams));
  auto cpu = make_cpu_backend<double>();
  const auto got = test::pde_run<double>(c, *cpu);
  // The scheme written out: periodic neighbours, forward Euler.
  const double h = 1.0 / n, Du = 2e-5, Dv = 1e-5, F = 0.035, k = 0.065, dt = 0.5;
  std::vector<double> u(n * n), v(n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double x = i * h, y = j * h, g = std::exp(-((x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5)) / 0.01);
      u[std::size_t(i + n * j)] = 1 - 0.5 * g;
      v[std::size_t(i + n * j)] = 0.25 * g + 0.01 * std::sin(37 * x) * std::sin(41 * y);
    }
  auto at = [&](const std::vector<double>& a, int i, int j) {
    return a[std::size_t((i + n) % n + n * ((j + n) % n))];
  };
  for (int s = 0; s < steps; ++s) {
    std::vector<double> u2(u), v2(v);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double lu = (at(u, i - 1, j) + at(u, i + 1, j) + at(u, i, j - 1) + at(u, i, j + 1) - 4 * at(u, i, j)) / (h * h);
        const double lv = (at(v, i - 1, j) + at(v, i + 1, j) + at(v, i, j - 1) + at(v, i, j + 1) - 4 * at(v, i, j)) / (h * h);
        const double uu = at(u, i, j), vv = at(v, i, j);
        u2[std::size_t(i + n * j)] = uu + dt * (Du * lu - uu * vv * vv + F * (1 - uu));
        v2[std::size_t(i + n * j)] = vv + dt * (Dv * lv + uu * vv * vv - (F + k) * vv);
      }
    u.swap(u2);
    v.swap(v2);
  }
  double du = 0, dv = 0;
  for (std::size_t q = 0; q < u.size(); ++q) {
    du = std::max(du, std::abs(got[0][q] - u[q]));
    dv = std::max(dv, std::abs(got[1][q] - v[q]));
  }
  CHECK(du < 1e-12);
  CHECK(dv < 1e-12);
}

TEST_CASE("pde restart: save and restore mid-run is bit for bit", "[pde]") {
  for (const char* integ : {"euler", "ssprk3", "rk4"}) {
    const Case c = test::load(test::pde_case("[12, 10, 8]", gs_pde(integ, 6),
                                             "  default: {type: neumann, gradient: 0}\n  x: {type: periodic}\n",
                                             kGsParams));
    auto cpu = make_cpu_backend<double>();
    const auto whole = test::pde_run<double>(c, *cpu);
    PdeSolver<double> a(c, *cpu);
    a.advance(2);
    io::Checkpoint ck;
    a.save(ck);
    PdeSolver<double> b(c, *cpu);
    b.restore(ck);
    CHECK(b.step() == 2);
    b.advance(4);
    for (std::size_t f = 0; f < 2; ++f) {
      std::vector<double> h(std::size_t(b.fields()[f].field->points()));
      cpu->download(*b.fields()[f].field, h.data());
      INFO(integ << " field " << f);
      CHECK(h == whole[f]);
    }
  }
}

TEST_CASE("pde codegen: the bytecode written out as straight code", "[pde]") {
  const Case c = test::load(test::pde_case(
      "[9, 9]",
      "  fields: [u]\n  equations: {u: \"x > 0.5 ? max(u, 1, 2) : -sin(u)^2 + lap(u)\"}\n"
      "  dt: 0.0001\n  steps: 1\n",
      "  default: {type: dirichlet, value: \"t + x\"}\n"));
  const std::string src = pde_kernel_source(c.pde.program, "double", 2);
  CHECK_THAT(src, Catch::Contains("gf::expr_variadic(gf::ExprOp::Max"));
  CHECK_THAT(src, Catch::Contains("if (s"));
  CHECK_THAT(src, Catch::Contains("} else {"));
  CHECK_THAT(src, Catch::Contains("gf::PdeInputKind::Lap"));
  CHECK_THAT(src, Catch::Contains("extern \"C\" __global__"));
  CHECK_THAT(src, Catch::Contains("struct PdeArgs"));  // the prelude's headers
  CHECK(src.find("#include") == std::string::npos);
}

namespace {

// pde_combine_terms for kernels compiled for MAY/ALWAYS/ONE against pde_combine,
// bit for bit, at every stage of `i` with values that include ±0, a
// denormal, large ones, inf and NaN (the stages' u0 and acc read as the GPU's march
// does: 0 where no coefficient reads them).
template <unsigned MAY, unsigned ALWAYS, unsigned ONE, class T>
void combine_terms_match(PdeIntegrator i) {
  const PdeTerms t = pde_terms<T>(i);
  REQUIRE(t.may == MAY);
  REQUIRE(t.always == ALWAYS);
  REQUIRE(t.one == ONE);
  const T vals[] = {T(0), -T(0), T(1.5), T(-2.25), std::numeric_limits<T>::denorm_min(),
                    T(3e7), T(-1e-3), std::numeric_limits<T>::infinity(),
                    std::numeric_limits<T>::quiet_NaN()};
  for (const PdeStagePlan& sp : pde_stages(i)) {
    const PdeStageCoef& k = sp.st;
    const PdeStage<T> s{T(k.a0), T(k.a1), T(k.a2), T(k.c * 0.01), T(k.e0), T(k.e1), T(k.e2),
                        T(k.d * 0.01), k.keep_acc};
    CHECK(pde_terms_fit(t, pde_stage_terms(s), pde_stage_ones(s)));
    for (T x : vals)
      for (T y : vals)
        for (T z : vals)
          for (T r : vals) {
            const T u0 = s.a0 != 0 || s.e0 != 0 ? x : T(0);
            const T ac = s.a2 != 0 || s.e2 != 0 ? z : T(0);
            const T want = pde_combine(s.a0, u0, s.a1, y, s.a2, ac, s.c_dt, r);
            const T got = pde_combine_terms<MAY, ALWAYS, ONE, 0>(s.a0, u0, s.a1, y, s.a2, ac, s.c_dt, r);
            CHECK(std::memcmp(&want, &got, sizeof(T)) == 0);
            const T wacc = pde_combine(s.e0, u0, s.e1, y, s.e2, ac, s.d_dt, r);
            const T gacc = pde_combine_terms<MAY, ALWAYS, ONE, 3>(s.e0, u0, s.e1, y, s.e2, ac, s.d_dt, r);
            if (s.keep_acc) CHECK(std::memcmp(&wacc, &gacc, sizeof(T)) == 0);
          }
  }
}

}  // namespace

TEST_CASE("pde stage terms: each integrator's kernel terms, and the same sums as pde_combine", "[pde]") {
  combine_terms_match<0x2, 0x2, 0x2, float>(PdeIntegrator::Euler);
  combine_terms_match<0x2, 0x2, 0x2, double>(PdeIntegrator::Euler);
  combine_terms_match<0x3, 0x2, 0x0, float>(PdeIntegrator::SspRk2);
  combine_terms_match<0x3, 0x2, 0x0, double>(PdeIntegrator::SspRk2);
  combine_terms_match<0x3, 0x2, 0x0, float>(PdeIntegrator::SspRk3);
  combine_terms_match<0x3, 0x2, 0x0, double>(PdeIntegrator::SspRk3);
  combine_terms_match<0x77, 0x0, 0x0, float>(PdeIntegrator::Rk4);
  combine_terms_match<0x77, 0x0, 0x0, double>(PdeIntegrator::Rk4);
  // a stage outside the terms does not fit them
  const auto fits = [](PdeIntegrator i, const PdeStage<double>& s) {
    return pde_terms_fit(pde_terms<double>(i), pde_stage_terms(s), pde_stage_ones(s));
  };
  CHECK_FALSE(fits(PdeIntegrator::Euler, PdeStage<double>{0.5, 0.5, 0, 0.5}));
  CHECK_FALSE(fits(PdeIntegrator::Euler, PdeStage<double>{0, 0.5, 0, 0.5}));  // not 1·u
  CHECK(fits(PdeIntegrator::Euler, PdeStage<double>{0, 1, 0, 0.5}));
  CHECK_FALSE(fits(PdeIntegrator::SspRk2, PdeStage<double>{0.5, 0, 0, 0.5}));
  // the first term is the sum's start: −0 stays −0 (no 0 + before it), and
  // a term of coefficient 1 compiled as one is its value
  const double mz = -0.0;
  const double e = pde_combine_terms<0x2, 0x2, 0x2, 0>(0.0, 0.0, 1.0, mz, 0.0, 0.0, 0.5, mz);
  CHECK(std::signbit(e));
  const double w = pde_combine(0.0, 0.0, 1.0, mz, 0.0, 0.0, 0.5, mz);
  CHECK(std::signbit(w));
  CHECK(pde_combine(0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 3.0) == 1.5);  // no terms: cdt·r
  // the kernel's source is made for them
  const Case c = test::load(test::pde_case("[9, 9]", "  fields: [u]\n  equations: {u: \"lap(u)\"}\n  dt: 0.0001\n  steps: 1\n",
                                           "  default: {type: periodic}\n"));
  CHECK_THAT(pde_kernel_source(c.pde.program, "float", 2, pde_terms<float>(PdeIntegrator::Rk4)),
             Catch::Contains("kTerms{0x77u, 0x0u, 0x0u}"));
  CHECK_THAT(pde_kernel_source(c.pde.program, "float", 2, pde_terms<float>(PdeIntegrator::Euler)),
             Catch::Contains("kTerms{0x2u, 0x2u, 0x2u}"));
}
