// The CUDA Laplace operations against the CPU reference on random fields:
// outputs poisoned with NaN first, sizes that are not multiples of the block
// size, 1D/2D/3D, both precisions, every boundary type. Then whole solves
// (every method, implicit heat) CPU vs GPU. Run with `gridforge_tests "[gpu]"`.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "tests/gpu/padding_check.hpp"
#include "tests/unit/heat_test_util.hpp"
#include "tests/unit/random_field.hpp"
#include "kernels/device.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "solvers/heat.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"

using namespace gf;

namespace {

// (the grid's extents come with the fields: test::grid_of)
template <class T>
LaplaceArgs<T> random_args(int ndim, BcType lo, BcType hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.5, 2.0);
  LaplaceArgs<T> a;
  a.ndim = ndim;
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    const double ih2 = ax < ndim ? d(rng) : 0.0;
    a.ih2[ax] = static_cast<T>(ih2);
    diag += 2 * ih2;
    const bool per = lo == BcType::Periodic;
    a.bc[ax].lo = per ? lo : (ax % 2 ? hi : lo);
    a.bc[ax].hi = per ? hi : (ax % 2 ? lo : hi);
    a.bc[ax].ghost_lo = static_cast<T>(0.1 * d(rng));
    a.bc[ax].ghost_hi = static_cast<T>(-0.1 * d(rng));
  }
  a.diag = static_cast<T>(diag);
  a.inv_diag = static_cast<T>(1.0 / diag);
  a.omega = static_cast<T>(1.7);
  a.f_const = static_cast<T>(0.3);
  a.f_coef = static_cast<T>(-1);
  a.lap_coef = static_cast<T>(1);
  a.op_scale = static_cast<T>(d(rng));
  a.op_shift = static_cast<T>(0.5);
  return a;
}

struct Count {
  std::size_t bad = 0, unwritten = 0;
};

template <class T>
Count compare(const std::vector<T>& gpu, const std::vector<T>& cpu, double tol) {
  Count c;
  double scale = 0;
  for (T v : cpu) scale = std::max(scale, std::fabs(double(v)));
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    if (std::isnan(double(gpu[i])))
      ++c.unwritten;
    else if (std::fabs(double(gpu[i]) - double(cpu[i])) > tol * (1 + scale))
      ++c.bad;
  }
  return c;
}

// Every coarse operation of the Laplace solvers (the Laplace executor's and
// the backend's vector operations), on both backends, from the same random
// inputs; each output compared point by point.
template <class T>
void compare_ops(int ndim, std::vector<std::int64_t> n, BcType lo, BcType hi, bool f_field) {
  std::mt19937_64 rng(777 + ndim * 13 + int(lo) * 5 + int(hi) + (f_field ? 1 : 0));
  LaplaceArgs<T> a = random_args<T>(ndim, lo, hi, rng);
  const Grid g = test::grid_of(ndim, n.data());
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto u0 = test::random_field<T>(np, rng), f0 = test::random_field<T>(np, rng);
  auto x0 = test::random_field<T>(np, rng);
  // CG's vectors are 0 at Dirichlet points
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const std::int64_t pos[3] = {i, j, k};
        bool h = false;
        for (int ax = 0; ax < ndim; ++ax) h = h || on_dirichlet(pos[ax], g.n[ax], a.bc[ax]);
        if (h) x0[g.index(i, j, k)] = 0;
      }
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  struct Out {
    std::vector<T> jac, sor, res, spmv, mfree, mfree_any, axpby, upd_u, upd_r, shifted;
    double rr = 0, dot = 0, upd = 0;
    bool padding_zero = true;  // u's row padding after add_constant (GPU fields)
  };
  auto run = [&](Backend<T>& be) {
    Out o;
    auto exec = make_laplace_exec(be);
    VectorOps<T>& vec = be.vec();
    auto down = [&](const Field<T>& f) {
      std::vector<T> h(np);
      be.download(f, h.data());
      return h;
    };
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v"), f = be.make_field(g, "f");
    Field<T> r = be.make_field(g, "r");
    // the CSR operator's vectors are dense, as the cg solve's (LaplaceSolver)
    Field<T> x = be.make_dense_field(g, "x"), y = be.make_dense_field(g, "y");
    Field<T> ud = be.make_dense_field(g, "u"), rd = be.make_dense_field(g, "r");
    be.upload(f0.data(), f);
    LaplaceArgs<T> args = a;
    if (f_field) args.f = f.data();
    // three Jacobi sweeps into a poisoned field
    be.upload(u0.data(), u);
    for (int s = 0; s < 3; ++s) {
      be.upload(poison.data(), v);
      exec->jacobi_sweep(args, u, v);
      u.swap(v);
    }
    o.jac = down(u);
    // two red-black SOR sweeps, in place
    be.upload(u0.data(), u);
    for (int s = 0; s < 2; ++s) {
      exec->sor_sweep(args, u, 0);
      exec->sor_sweep(args, u, 1);
    }
    o.sor = down(u);
    // the residual, stored and summed
    be.upload(u0.data(), u);
    be.upload(poison.data(), r);
    o.rr = exec->residual(args, u, &r);
    o.res = down(r);
    // the operator matrix-free, on the backend's rows (GPU: the marches and
    // the x faces), on x0 and on u0 (not 0 at Dirichlet points: A gives 0 there)
    LaplaceArgs<T> op = a;
    for (auto& b : op.bc) b.ghost_lo = b.ghost_hi = T(0);
    exec->set_operator(op, u.layout(), OperatorForm::MatrixFree);
    be.upload(x0.data(), u);
    be.upload(poison.data(), v);
    exec->apply(u, v);
    o.mfree = down(v);
    be.upload(u0.data(), u);
    be.upload(poison.data(), v);
    exec->apply(u, v);
    o.mfree_any = down(v);
    // the operator as a CSR matrix (GPU: through cuSPARSE), on dense rows
    exec->set_operator(op, x.layout(), OperatorForm::Csr);
    be.upload(x0.data(), x);
    be.upload(poison.data(), y);
    exec->apply(x, y);
    o.spmv = down(y);
    o.dot = vec.dot(x, y);
    be.upload(poison.data(), y);
    vec.axpby(T(0.5), x, T(0), y);  // y is not read when b is 0
    vec.axpby(T(2), x, T(-0.25), y);
    o.axpby = down(y);
    be.upload(u0.data(), ud);
    be.upload(f0.data(), rd);
    o.upd = vec.cg_update(T(0.3), x, y, ud, rd);
    o.upd_u = down(ud);
    o.upd_r = down(rd);
    vec.add_constant(u, T(-0.125));
    o.shifted = down(u);
    if (!u.host_accessible()) o.padding_zero = test::padding_is_zero(u);
    return o;
  };
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  const Out c = run(*cpu), d = run(*gpu);
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  INFO("ndim " << ndim << " n " << n[0] << " bc " << int(lo) << "/" << int(hi) << " f field "
               << f_field << " float" << 8 * sizeof(T));
  for (const auto& [name, gv, cv] :
       {std::tuple{"jacobi", &d.jac, &c.jac}, std::tuple{"sor", &d.sor, &c.sor},
        std::tuple{"residual", &d.res, &c.res}, std::tuple{"spmv", &d.spmv, &c.spmv},
        std::tuple{"matrix-free", &d.mfree, &c.mfree},
        std::tuple{"matrix-free, any x", &d.mfree_any, &c.mfree_any},
        std::tuple{"matrix-free vs csr", &d.mfree, &c.spmv},
        std::tuple{"axpby", &d.axpby, &c.axpby}, std::tuple{"cg_update u", &d.upd_u, &c.upd_u},
        std::tuple{"cg_update r", &d.upd_r, &c.upd_r},
        std::tuple{"add_constant", &d.shifted, &c.shifted}}) {
    const Count k = compare(*gv, *cv, tol);
    INFO(name);
    CHECK(k.unwritten == 0);
    CHECK(k.bad == 0);
  }
  CHECK(d.padding_zero);
  const double rtol = sizeof(T) == 4 ? 1e-4 : 1e-10;
  CHECK(d.rr == Approx(c.rr).epsilon(rtol));
  CHECK(d.dot == Approx(c.dot).epsilon(rtol).margin(rtol));
  CHECK(d.upd == Approx(c.upd).epsilon(rtol));
}

}  // namespace

TEST_CASE("GPU Laplace operations equal the CPU reference on random fields", "[gpu]") {
  const std::vector<std::pair<BcType, BcType>> bcs = {{BcType::Dirichlet, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Neumann},
                                                      {BcType::Periodic, BcType::Periodic}};
  for (auto [lo, hi] : bcs) {
    // periodic axes even (red-black SOR); others odd and off the block sizes
    const bool per = lo == BcType::Periodic;
    for (bool ff : {false, true}) {
      compare_ops<double>(1, {per ? 1002 : 1001}, lo, hi, ff);
      compare_ops<float>(1, {per ? 1002 : 1001}, lo, hi, ff);
      compare_ops<double>(2, {per ? 68 : 67, per ? 46 : 45}, lo, hi, ff);
      compare_ops<float>(2, {per ? 68 : 67, per ? 46 : 45}, lo, hi, ff);
      // rows of whole 16-byte vectors (the vectorised 2D Jacobi), several row
      // chunks and x blocks, not multiples of either
      compare_ops<double>(2, {266, per ? 76 : 75}, lo, hi, ff);
      compare_ops<float>(2, {260, per ? 76 : 75}, lo, hi, ff);
      compare_ops<double>(3, {per ? 38 : 37, per ? 30 : 29, per ? 24 : 23}, lo, hi, ff);
      compare_ops<float>(3, {per ? 38 : 37, per ? 30 : 29, per ? 24 : 23}, lo, hi, ff);
      // rows of whole vectors in 3D (the z-march of the Jacobi sweep)
      compare_ops<double>(3, {36, per ? 30 : 29, per ? 24 : 23}, lo, hi, ff);
      compare_ops<float>(3, {40, per ? 30 : 29, per ? 24 : 23}, lo, hi, ff);
    }
  }
}

TEST_CASE("GPU spectral Poisson (cuFFT) equals the CPU one (FFTW)", "[gpu]") {
  for (int ndim : {1, 2, 3}) {
    for (int odd : {0, 1}) {
      std::mt19937_64 rng(31 + ndim + odd);
      const std::int64_t sizes[3] = {48 + odd, 30 + odd, 20 + odd};
      LaplaceArgs<double> ad = random_args<double>(ndim, BcType::Periodic, BcType::Periodic, rng);
      LaplaceArgs<float> af;
      af.ndim = ad.ndim;
      for (int ax = 0; ax < 3; ++ax) {
        af.ih2[ax] = float(ad.ih2[ax]);
        af.bc[ax].lo = af.bc[ax].hi = BcType::Periodic;
      }
      const Grid g = test::grid_of(ndim, sizes);
      const std::size_t np = static_cast<std::size_t>(g.size());
      auto check = [&](auto tag, const auto& a, double tol) {
        using T = decltype(tag);
        const auto f0 = test::random_field<T>(np, rng);
        const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
        auto solve = [&](Backend<T>& be, double* res) {
          // dense rows, as the fft solve's fields (LaplaceSolver)
          Field<T> f = be.make_dense_field(g, "f"), u = be.make_dense_field(g, "u");
          be.upload(f0.data(), f);
          be.upload(poison.data(), u);
          auto exec = make_laplace_exec(be);
          *res = exec->fft_poisson(a, f, u);
          std::vector<T> h(np);
          be.download(u, h.data());
          return h;
        };
        auto cpu = make_cpu_backend<T>();
        auto gpu = make_cuda_backend<T>(0);
        double rc = 0, rg = 0;
        const auto c = solve(*cpu, &rc), d = solve(*gpu, &rg);
        INFO("ndim " << ndim << " odd " << odd << " float" << 8 * sizeof(T));
        const Count k = compare(d, c, tol);
        CHECK(k.unwritten == 0);
        CHECK(k.bad == 0);
        CHECK(rg < (sizeof(T) == 4 ? 1e-5 : 1e-12));
        CHECK(rc < (sizeof(T) == 4 ? 1e-5 : 1e-12));
      };
      check(double{}, ad, 1e-11);
      check(float{}, af, 1e-4);
    }
  }
}

namespace {

// A whole solve on both devices; the final fields agree to the tolerance scale.
template <class T>
void compare_solve(const std::string& text) {
  const Case c = prepare_case(load_case_text(text, "gpu_solve.yaml"));
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  auto solve = [&](Backend<T>& be, std::int64_t* its) {
    LaplaceSolver<T> s(c, be);
    while (!s.finished()) s.iterate(c.laplace.check_every);
    s.finish();
    *its = s.iterations();
    std::vector<T> h(s.field().size());
    be.download(s.field(), h.data());
    CHECK(s.status() != LaplaceStatus::MaxIters);
    return h;
  };
  std::int64_t ic = 0, ig = 0;
  const auto hc = solve(*cpu, &ic), hg = solve(*gpu, &ig);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < hc.size(); ++i) {
    num += std::pow(double(hg[i]) - double(hc[i]), 2);
    den += double(hc[i]) * double(hc[i]);
  }
  INFO(to_string(c.laplace.method) << " float" << 8 * sizeof(T) << ": iterations cpu " << ic
                                   << " gpu " << ig);
  CHECK(std::sqrt(num / std::max(den, 1e-300)) <
        std::max(sizeof(T) == 4 ? 1e-4 : 1e-9, 10 * c.laplace.tolerance));
  CHECK(std::abs(ic - ig) <= c.laplace.check_every);
}

}  // namespace

TEST_CASE("GPU laplace solves equal the CPU ones, every method", "[gpu]") {
  const std::string plate =
      "workload: laplace\ngrid: {dims: [45, 37]}\nboundary:\n"
      "  default: {type: dirichlet, value: 0}\n  y+: {type: dirichlet, value: 1}\n"
      "  x-: {type: neumann, gradient: 0.5}\n";
  for (const std::string m : {"jacobi", "sor", "cg", "cg, operator: csr"}) {
    compare_solve<double>(plate + "laplace: {method: " + m + ", tolerance: 1.0e-9, check_every: 20}\n");
    compare_solve<float>(plate + "precision: float32\nlaplace: {method: " + m + ", check_every: 20}\n");
  }
  const std::string box =
      "workload: laplace\ngrid: {dims: [21, 19, 17]}\nboundary:\n"
      "  default: {type: neumann}\n  z-: {type: dirichlet, value: \"x*y\"}\n"
      "laplace: {method: cg, rhs: \"sin(3*x)\", tolerance: 1.0e-9}\n";
  compare_solve<double>(box);
  std::string box_csr = box;
  box_csr.replace(box_csr.find("method: cg"), 10, "method: cg, operator: csr");
  compare_solve<double>(box_csr);
  // float32 CG stalls at about 1.4e-5 on this mostly-Neumann box (docs/cases.md)
  std::string box32 = box;
  box32.replace(box32.find("1.0e-9"), 6, "1.0e-4");
  compare_solve<float>(box32 + "precision: float32\n");
  const std::string per =
      "workload: laplace\ngrid: {dims: [24, 20, 18]}\nboundary: {default: {type: periodic}}\n"
      "laplace: {method: fft, rhs: \"sin(2*pi*x)*cos(2*pi*z) + 3\", remove_mean: true}\n";
  compare_solve<double>(per);
  compare_solve<float>(per + "precision: float32\n");
}

TEST_CASE("GPU temporally blocked Jacobi equals one sweep at a time, bit for bit", "[gpu]") {
  // the heat passes' shapes (3D and 2D): the scalar pass (nx odd), the vectorised one
  // (nx a multiple of 4) with several wall-free tiles, a grid smaller than a
  // tile, a periodic axis shorter than k
  const std::vector<std::vector<std::int64_t>> shapes = {
      {37, 29, 23}, {5, 4, 3}, {36, 11, 19}, {200, 140, 150}, {301, 77}, {5, 3}, {600, 90}};
  auto gpu32 = make_cuda_backend<float>(0);
  auto gpu64 = make_cuda_backend<double>(0);
  test::for_each_time_block_case(shapes, [&](int k, const auto& kind, const auto& n, bool field) {
    if ((n[0] == 200 || n[0] == 600) && field == (k == 3)) return;  // the large grid: one kind of f each
    test::compare_jacobi_time_block<float>(*gpu32, k, n, kind, field);
    test::compare_jacobi_time_block<double>(*gpu64, k, n, kind, field);
  });
}

TEST_CASE("GPU implicit heat equals the CPU reference", "[gpu]") {
  for (const std::string scheme : {"implicit", "crank-nicolson",
                                   "implicit, solver: {operator: csr}",
                                   "crank-nicolson, solver: {preconditioner: multigrid}",
                                   "implicit, solver: {preconditioner: jacobi, operator: csr}"}) {
    const std::string text =
        "workload: heat\ngrid: {dims: [23, 19, 17]}\n"
        "initial: {expr: \"exp(-((x-0.5)^2+(y-0.4)^2+(z-0.5)^2)/0.05)\"}\n"
        "boundary:\n  default: {type: neumann, gradient: 0.2}\n  z-: {type: dirichlet, value: 0}\n"
        "heat: {alpha: 1.0, scheme: " + scheme + ", dt: 0.002, steps: 5, source: \"x\"}\n";
    for (bool f32 : {false, true}) {
      const Case c = load_case_text(text + (f32 ? "precision: float32\n" : ""), "gpu_heat.yaml");
      auto check = [&](auto tag) {
        using T = decltype(tag);
        auto cpu = make_cpu_backend<T>();
        auto gpu = make_cuda_backend<T>(0);
        HeatSolver<T> a(c, *cpu), b(c, *gpu);
        a.advance(5);
        b.advance(5);
        std::vector<T> ha(a.field().size()), hb(b.field().size());
        cpu->download(a.field(), ha.data());
        gpu->download(b.field(), hb.data());
        INFO(scheme << " float" << 8 * sizeof(T));
        const Count k = compare(hb, ha, f32 ? 1e-4 : 1e-8);
        CHECK(k.unwritten == 0);
        CHECK(k.bad == 0);
      };
      if (f32)
        check(float{});
      else
        check(double{});
    }
  }
}
