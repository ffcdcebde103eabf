// Heat's sources and Dirichlet values that read t, and a variable alpha
// (docs/cases.md#heat), against manufactured solutions on the CPU reference,
// with observed orders of convergence; the refusals.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "io/expression.hpp"
#include "io/output.hpp"
#include "kernels/backend.hpp"
#include "tests/unit/heat_time_util.hpp"

using namespace gf;
namespace fs = std::filesystem;

namespace {

std::vector<double> time_errors(const std::string& scheme, std::vector<double> dts,
                                const std::string& extra = "") {
  std::vector<double> err;
  for (double dt : dts) {
    const Case c = load_case_text(test::mms_time_case(scheme, dt, 9, 0.4, extra), "mms.yaml");
    REQUIRE(c.heat.source_uses_t);
    REQUIRE(c.heat.boundary_uses_t);
    auto be = make_cpu_backend<double>();
    double t = 0;
    const auto u = test::run_to_end(c, *be, &t);
    REQUIRE(t == 0.4);
    err.push_back(test::max_error(c, u, t, test::mms_time_exact));
  }
  return err;
}

}  // namespace

TEST_CASE("heat explicit with t in the source and the Dirichlet values: first order in time",
          "[heat][heat_time]") {
  const auto err = time_errors("explicit", {0.02, 0.01, 0.005});
  INFO(err[0] << " " << err[1] << " " << err[2]);
  for (double p : test::observed_orders(err)) CHECK(p == Approx(1.0).margin(0.1));
  CHECK(err[0] > 1e-6);  // a real error in time, not round-off
}

TEST_CASE("heat implicit (backward Euler) with t: first order in time", "[heat][heat_time]") {
  const auto err = time_errors("implicit", {0.1, 0.05, 0.025},
                               "  solver: {tolerance: 1.0e-13, max_iters: 1000}\n");
  INFO(err[0] << " " << err[1] << " " << err[2]);
  for (double p : test::observed_orders(err)) CHECK(p == Approx(1.0).margin(0.1));
}

TEST_CASE("heat Crank–Nicolson with t: second order in time", "[heat][heat_time]") {
  const auto err = time_errors("crank-nicolson", {0.1, 0.05, 0.025},
                               "  solver: {tolerance: 1.0e-13, max_iters: 1000}\n");
  INFO(err[0] << " " << err[1] << " " << err[2]);
  for (double p : test::observed_orders(err)) CHECK(p == Approx(2.0).margin(0.15));
}

TEST_CASE("heat explicit with t: second order in space (dt auto, ∝ h²)", "[heat][heat_time]") {
  std::vector<double> err;
  for (int n : {17, 33, 65}) {
    const Case c = load_case_text(test::mms_space_case(n), "mms_space.yaml");
    auto be = make_cpu_backend<double>();
    double t = 0;
    const auto u = test::run_to_end(c, *be, &t);
    REQUIRE(t == 0.05);
    err.push_back(test::max_error(c, u, t, test::mms_space_exact));
  }
  INFO(err[0] << " " << err[1] << " " << err[2]);
  for (double p : test::observed_orders(err)) CHECK(p == Approx(2.0).margin(0.15));
  CHECK(err.back() < 1e-4);
}

TEST_CASE("a Dirichlet value that reads t (0*t) through the per-step fills: the same bits",
          "[heat][heat_time]") {
  // t·0 reads t: the same field as "0", but through the per-step fills.
  const std::string base =
      "workload: heat\ngrid: {dims: [13, 11]}\ninitial: {expr: \"x*y\"}\n"
      "boundary: {default: {type: dirichlet, value: \"SRC\"}}\n"
      "heat: {alpha: 0.3, steps: 25, source: \"x - y\"}\n";
  auto with = [&](const std::string& v) {
    std::string s = base;
    s.replace(s.find("SRC"), 3, v);
    return s;
  };
  const Case a = load_case_text(with("x + 2*y"), "a.yaml");
  const Case b = load_case_text(with("x + 2*y + 0*t"), "b.yaml");
  REQUIRE_FALSE(a.heat.uses_t());
  REQUIRE(b.heat.boundary_uses_t);
  CHECK(b.heat.time_block == 0);
  auto be = make_cpu_backend<double>();
  const auto ua = test::run_to_end(a, *be), ub = test::run_to_end(b, *be);
  REQUIRE(ua.size() == ub.size());
  CHECK(std::memcmp(ua.data(), ub.data(), ua.size() * sizeof(double)) == 0);
}

TEST_CASE("heat with a variable alpha (expression): second order in space", "[heat][heat_time]") {
  std::vector<double> err;
  for (int n : {17, 33, 65}) {
    const Case c = load_case_text(test::varalpha_case(n, "\"1 + x*y/2\""), "varalpha.yaml");
    REQUIRE(c.heat.variable_alpha());
    CHECK(c.heat.alpha == Approx(1.5));  // the largest α sets the explicit limit
    CHECK(c.heat.alpha_min == 1.0);
    auto be = make_cpu_backend<double>();
    double t = 0;
    const auto u = test::run_to_end(c, *be, &t);
    REQUIRE(t == 0.02);
    err.push_back(test::max_error(c, u, t, test::varalpha_exact));
  }
  INFO(err[0] << " " << err[1] << " " << err[2]);
  for (double p : test::observed_orders(err)) CHECK(p == Approx(2.0).margin(0.15));
}

TEST_CASE("heat.alpha from an HDF5 dataset gives the expression's field, bit for bit",
          "[heat][heat_time]") {
  const fs::path dir = fs::temp_directory_path() / "gf_heat_alpha_file";
  fs::create_directories(dir);
  const int n = 17;
  const Case ce = load_case_text(test::varalpha_case(n, "\"1 + x*y/2\""), "e.yaml");
  const Grid& g = ce.grid;
  std::vector<double> alpha(std::size_t(g.size()));
  const Expression a(Expr{"1 + x*y/2", {}, "alpha"}, {});
  for (std::int64_t j = 0; j < g.n[1]; ++j)
    for (std::int64_t i = 0; i < g.n[0]; ++i)
      alpha[std::size_t(g.index(i, j, 0))] = a(g.coord(0, i), g.coord(1, j), 0);
  io::FieldSeriesWriter w({dir, "alpha", g, Precision::Float64, false, true, "test"});
  w.write(0, 0.0, {{"alpha", alpha.data(), Precision::Float64}});
  w.finish();
  const Case cf = load_case_text(
      test::varalpha_case(n, "{file: {path: fields.h5, dataset: /steps/000000/alpha}}"), "f.yaml",
      {}, dir.string());
  REQUIRE(cf.heat.alpha_field.kind == InitialSpec::Kind::File);
  CHECK(cf.heat.alpha == ce.heat.alpha);
  CHECK(cf.heat.dt == ce.heat.dt);
  auto be = make_cpu_backend<double>();
  const auto ue = test::run_to_end(ce, *be), uf = test::run_to_end(cf, *be);
  REQUIRE(ue.size() == uf.size());
  CHECK(std::memcmp(ue.data(), uf.data(), ue.size() * sizeof(double)) == 0);
  // The resolved case names the file and loads again as the same case.
  CHECK(cf.resolved_yaml.find("dataset: /steps/000000/alpha") != std::string::npos);
  const Case again = load_case_text(cf.resolved_yaml, "again.yaml", {}, dir.string());
  CHECK(again.heat.alpha_field.path == cf.heat.alpha_field.path);
  CHECK(again.heat.dt == cf.heat.dt);
  fs::remove_all(dir);
}

TEST_CASE("heat.alpha: a constant expression is the number's heat, a map of value too",
          "[heat][heat_time]") {
  const std::string t = "workload: heat\nparameters: {A: 0.25}\ngrid: {dims: [9, 9]}\n"
                        "heat: {alpha: ALPHA, steps: 3}\n";
  for (const char* form : {"\"2*A\"", "{value: 0.5}", "{expr: \"2*A\"}"}) {
    std::string s = t;
    s.replace(s.find("ALPHA"), 5, form);
    const Case c = load_case_text(s, "c.yaml");
    CHECK_FALSE(c.heat.variable_alpha());
    CHECK(c.heat.alpha == 0.5);
  }
}

TEST_CASE("heat refusals: t in initial, a parameter t, time_block with t, implicit variable alpha",
          "[heat][heat_time]") {
  const std::string grid = "workload: heat\ngrid: {dims: [9, 9]}\n";
  auto message = [](const std::string& text) {
    try {
      (void)load_case_text(text, "bad.yaml");
    } catch (const CaseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(grid + "initial: {expr: \"x*t\"}\nheat: {alpha: 1, steps: 1}\n") ==
        "bad.yaml:3:17: initial.expr: cannot parse \"x*t\": unknown name 't'");
  CHECK(message("workload: heat\nparameters: {t: 1}\ngrid: {dims: [9, 9]}\n"
                "heat: {alpha: 1, steps: 1}\n")
            .starts_with("bad.yaml:2:13: parameters: a parameter named t"));
  CHECK(message(grid + "heat: {alpha: 1, steps: 1, source: \"sin(t)\", time_block: 2}\n") ==
        "bad.yaml:3:58: heat.time_block: heat.source reads t, which is evaluated again between "
        "steps, not inside a pass of several: use time_block: 1 or auto");
  CHECK(message(grid + "boundary: {x-: {type: dirichlet, value: \"t\"}}\n"
                       "heat: {alpha: 1, steps: 1, time_block: 3}\n")
            .starts_with("bad.yaml:4:40: heat.time_block: boundary.x-.value reads t"));
  CHECK(message(grid + "heat: {alpha: \"1 + x\", scheme: crank-nicolson, dt: 0.1, steps: 1}\n") ==
        "bad.yaml:3:15: heat.alpha: a variable alpha runs with scheme explicit only, not "
        "crank-nicolson: give a number, or use scheme: explicit");
  CHECK(message(grid + "heat: {alpha: \"x - 0.5\", steps: 1}\n")
            .starts_with("bad.yaml:3:15: heat.alpha: alpha is -0.5 at (x, y) = (0, 0)"));
  CHECK(message(grid + "heat: {alpha: \"1 + t\", steps: 1}\n") ==
        "bad.yaml:3:15: heat.alpha: cannot parse \"1 + t\": unknown name 't'");
}
