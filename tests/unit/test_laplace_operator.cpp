// CG's operator in its two forms (laplace.operator, heat.solver.operator) on
// the CPU reference executor: the matrix-free apply against the CSR matrix
// of laplace_row on random fields with every boundary mix, and whole cg
// solves and implicit heat steps that agree to rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "solvers/heat.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"
#include "tests/unit/heat_test_util.hpp"
#include "tests/unit/random_field.hpp"

using namespace gf;

namespace {

// The args of a random operator on an ndim grid: axis a takes boundary
// pair `mix[a]` (lo, hi), random spacings, scale and shift.
LaplaceArgs<double> random_op(int ndim, const std::pair<BcType, BcType>* mix, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.5, 2.0);
  LaplaceArgs<double> a;
  a.ndim = ndim;
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    a.ih2[ax] = ax < ndim ? d(rng) : 0.0;
    diag += 2 * a.ih2[ax];
    a.bc[ax].lo = mix[ax].first;
    a.bc[ax].hi = mix[ax].second;
  }
  a.diag = diag;
  a.inv_diag = 1 / diag;
  a.op_scale = d(rng);
  a.op_shift = ndim == 2 ? d(rng) : 0.0;
  return a;
}

bool held_point(const LaplaceArgs<double>& a, const Grid& g, const std::int64_t* pos) {
  for (int ax = 0; ax < g.ndim; ++ax)
    if (on_dirichlet(pos[ax], g.n[ax], a.bc[ax])) return true;
  return false;
}

// max |matrix-free − CSR| / max |CSR| of y = A x on one random x, 0 at
// Dirichlet points as CG's vectors are (the CSR matrix has no columns for
// them; the formula reads them as neighbours).
double apply_difference(int ndim, const std::int64_t* n, const LaplaceArgs<double>& a,
                        std::mt19937_64& rng) {
  auto be = make_cpu_backend<double>();
  const Grid g = test::grid_of(ndim, n);
  Field<double> x = be->make_field(g, "x"), y = be->make_field(g, "y"), z = be->make_field(g, "z");
  auto x0 = test::random_field<double>(std::size_t(g.size()), rng);
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const std::int64_t pos[3] = {i, j, k};
        if (held_point(a, g, pos)) x0[std::size_t(g.index(i, j, k))] = 0;
      }
  be->upload(x0.data(), x);
  auto free_op = make_laplace_exec(*be), csr_op = make_laplace_exec(*be);
  free_op->set_operator(a, x.layout(), OperatorForm::MatrixFree);
  csr_op->set_operator(a, x.layout(), OperatorForm::Csr);
  free_op->apply(x, y);
  csr_op->apply(x, z);
  std::vector<double> hy(x0.size()), hz(x0.size());
  be->download(y, hy.data());
  be->download(z, hz.data());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < hy.size(); ++i) {
    diff = std::max(diff, std::fabs(hy[i] - hz[i]));
    scale = std::max(scale, std::fabs(hz[i]));
  }
  // Dirichlet points are 0 in both forms
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const std::int64_t pos[3] = {i, j, k};
        if (held_point(a, g, pos)) {
          CHECK(hy[std::size_t(g.index(i, j, k))] == 0.0);
          CHECK(hz[std::size_t(g.index(i, j, k))] == 0.0);
        }
      }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace

TEST_CASE("matrix-free apply equals the CSR matrix's on random fields, every boundary mix",
          "[laplace][operator]") {
  std::mt19937_64 rng(2024);
  const BcType kinds[] = {BcType::Dirichlet, BcType::Neumann};
  std::vector<std::pair<BcType, BcType>> pairs = {{BcType::Periodic, BcType::Periodic}};
  for (BcType lo : kinds)
    for (BcType hi : kinds) pairs.push_back({lo, hi});
  const std::int64_t sizes[3] = {9, 7, 6};
  int checked = 0;
  // every pair on x; y and z cycle through the pairs so that every axis
  // sees every pair, in 1D, 2D and 3D
  for (std::size_t p = 0; p < pairs.size(); ++p)
    for (std::size_t q = 0; q < pairs.size(); ++q) {
      const std::pair<BcType, BcType> mix[3] = {pairs[p], pairs[q],
                                                pairs[(p + 2 * q + 1) % pairs.size()]};
      for (int ndim = 1; ndim <= 3; ++ndim) {
        if (ndim == 1 && q > 0) continue;
        INFO("ndim " << ndim << " x " << int(mix[0].first) << "/" << int(mix[0].second) << " y "
                     << int(mix[1].first) << "/" << int(mix[1].second) << " z "
                     << int(mix[2].first) << "/" << int(mix[2].second));
        CHECK(apply_difference(ndim, sizes, random_op(ndim, mix, rng), rng) < 1e-14);
        ++checked;
      }
    }
  CHECK(checked == 5 + 25 + 25);
}

namespace {

struct CgRun {
  std::vector<double> u;
  std::int64_t iterations = 0;
  LaplaceStatus status = LaplaceStatus::Running;
};

CgRun cg_run(const std::string& text) {
  const Case c = prepare_case(load_case_text(text, "operator.yaml"));
  auto be = make_cpu_backend<double>();
  LaplaceSolver<double> s(c, *be);
  while (!s.finished()) s.iterate(c.laplace.check_every);
  s.finish();
  CgRun r;
  r.u.resize(s.field().size());
  be->download(s.field(), r.u.data());
  r.iterations = s.iterations();
  r.status = s.status();
  return r;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace

TEST_CASE("cg converges to the same solution with either operator", "[laplace][operator]") {
  const std::string cases[] = {
      // Dirichlet walls with a Neumann face, a right-hand side, 3D
      "workload: laplace\ngrid: {dims: [19, 17, 15]}\nboundary:\n"
      "  default: {type: dirichlet, value: 0}\n  z+: {type: dirichlet, value: \"x*y\"}\n"
      "  x-: {type: neumann, gradient: 0.5}\n"
      "laplace: {method: cg, rhs: \"sin(3*x)*y\", tolerance: 1.0e-10",
      // a periodic axis, 2D
      "workload: laplace\ngrid: {dims: [33, 24]}\nboundary:\n"
      "  default: {type: dirichlet, value: 1}\n  x: {type: periodic}\n"
      "laplace: {method: cg, rhs: \"cos(2*pi*x)\", tolerance: 1.0e-10",
      // no Dirichlet face (singular): u has mean 0
      "workload: laplace\ngrid: {dims: [17, 15, 13]}\nboundary:\n"
      "  default: {type: neumann}\n  z: {type: periodic}\n"
      "laplace: {method: cg, rhs: \"cos(pi*x)\", tolerance: 1.0e-10, remove_mean: true",
  };
  for (const std::string& base : cases) {
    for (const std::string pre : {"none", "multigrid"}) {
      const std::string head = base + ", preconditioner: " + pre;
      const CgRun free_run = cg_run(head + ", operator: matrix-free}\n");
      const CgRun csr_run = cg_run(head + ", operator: csr}\n");
      INFO(head);
      CHECK(free_run.status == LaplaceStatus::Converged);
      CHECK(csr_run.status == LaplaceStatus::Converged);
      // the same recurrence up to rounding: about the same iterations
      CHECK(std::abs(free_run.iterations - csr_run.iterations) <=
            std::max<std::int64_t>(2, csr_run.iterations / 10));
      CHECK(rel_diff(free_run.u, csr_run.u) < 1e-9);
    }
  }
}

TEST_CASE("implicit heat steps agree with either operator", "[heat][implicit][operator]") {
  for (const std::string scheme : {"implicit", "crank-nicolson"}) {
    const std::string text =
        "workload: heat\ngrid: {dims: [21, 17, 13]}\n"
        "initial: {expr: \"exp(-((x-0.5)^2+(y-0.4)^2+(z-0.5)^2)/0.05)\"}\n"
        "boundary:\n  default: {type: neumann, gradient: 0.2}\n  z-: {type: dirichlet, value: 0}\n"
        "heat: {alpha: 1.0, scheme: " + scheme + ", dt: 0.002, steps: 4, source: \"x\", "
        "solver: {tolerance: 1.0e-12, operator: ";
    const Case a = load_case_text(text + "matrix-free}}\n", "heat_free.yaml");
    const Case b = load_case_text(text + "csr}}\n", "heat_csr.yaml");
    auto be = make_cpu_backend<double>();
    HeatSolver<double> sa(a, *be), sb(b, *be);
    sa.advance(4);
    sb.advance(4);
    std::vector<double> ha(sa.field().size()), hb(sb.field().size());
    be->download(sa.field(), ha.data());
    be->download(sb.field(), hb.data());
    INFO(scheme);
    CHECK(rel_diff(ha, hb) < 1e-10);
    CHECK(std::abs(sa.solver_iterations() - sb.solver_iterations()) <= 4);
  }
}

TEST_CASE("implicit heat preconditioned by multigrid or Jacobi: the same steps, fewer iterations",
          "[heat][implicit][operator]") {
  // Dirichlet floor with Neumann walls; an all-Neumann box (the shift keeps
  // the operator definite); a periodic axis of odd length (three colours);
  // a dt that does not divide t_end (the operator, and the hierarchy, change
  // for the last step)
  const std::string grids[] = {
      "grid: {dims: [25, 21, 17]}\nboundary:\n  default: {type: neumann, gradient: 0.2}\n"
      "  z-: {type: dirichlet, value: 0}\n",
      "grid: {dims: [17, 17, 17]}\nboundary: {default: {type: neumann}}\n",
      "grid: {dims: [33, 23]}\nboundary:\n  default: {type: dirichlet, value: 1}\n"
      "  x: {type: periodic}\n"};
  for (const std::string& grid : grids)
    for (const std::string scheme : {"implicit", "crank-nicolson"}) {
      const std::string text =
          "workload: heat\n" + grid +
          "initial: {expr: \"exp(-((x-0.5)^2+(y-0.4)^2+(z-0.5)^2)/0.05)\"}\n"
          "heat: {alpha: 1.0, scheme: " + scheme + ", dt: 0.004, t_end: 0.013, source: \"x\", "
          "solver: {tolerance: 1.0e-11, preconditioner: ";
      std::vector<double> ref;
      std::int64_t plain_its = 0;
      for (const std::string pre : {"none", "jacobi", "multigrid"}) {
        const Case c = load_case_text(text + pre + "}}\n", "heat_pre.yaml");
        auto be = make_cpu_backend<double>();
        HeatSolver<double> s(c, *be);
        s.advance(c.heat.steps);
        std::vector<double> h(s.field().size());
        be->download(s.field(), h.data());
        INFO(grid << scheme << ", preconditioner " << pre << ": " << s.solver_iterations()
                  << " iterations");
        if (pre == std::string("none")) {
          ref = h;
          plain_its = s.solver_iterations();
          continue;
        }
        CHECK(rel_diff(h, ref) < 1e-9);
        if (pre == std::string("multigrid")) CHECK(2 * s.solver_iterations() < plain_its);
      }
    }
}
