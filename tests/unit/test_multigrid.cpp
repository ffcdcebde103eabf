// Geometric multigrid (laplace.method: multigrid) on the CPU reference
// executor: the transfers' formulas, the colouring, the residual reduction
// per V-cycle (small, and the same on every grid), second-order error
// against an analytic solution, and every boundary mix against cg.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/multigrid/mg_ops.hpp"
#include "solvers/laplace.hpp"
#include "solvers/multigrid.hpp"
#include "solvers/prepare.hpp"

using namespace gf;

namespace {

const double kPi = 3.14159265358979323846;

Case prepared(const std::string& text) { return prepare_case(load_case_text(text, "mg.yaml")); }

struct Run {
  std::vector<double> u;
  std::vector<double> residuals;  // after each cycle (the first: before any)
  LaplaceStatus status = LaplaceStatus::Running;
  std::int64_t iterations = 0;
};

Run solve(const Case& c, std::int64_t chunk = 1) {
  auto be = make_cpu_backend<double>();
  LaplaceSolver<double> s(c, *be);
  Run out;
  out.residuals.push_back(s.residual());
  while (!s.finished()) {
    s.iterate(chunk);
    out.residuals.push_back(s.residual());
  }
  out.iterations = s.iterations();
  s.finish();
  out.u.resize(s.field().size());
  be->download(s.field(), out.u.data());
  out.status = s.status();
  return out;
}

// The worst reduction of the residual over one cycle, leaving out the first
// cycle and the last (rounding may show there).
double worst_factor(const std::vector<double>& r) {
  double w = 0;
  for (std::size_t i = 2; i + 1 < r.size(); ++i) w = std::max(w, r[i] / r[i - 1]);
  return w;
}

std::string dims(const std::vector<int>& n) {
  std::string s = "[";
  for (std::size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + std::to_string(n[i]);
  return s + "]";
}

std::string mg_case(const std::vector<int>& n, const std::string& boundary, const std::string& rhs,
                    const std::string& extra = "", const std::string& grid_extra = "",
                    const std::string& tol = "1.0e-10") {
  return "workload: laplace\ngrid: {dims: " + dims(n) + grid_extra + "}\nboundary:\n" + boundary +
         "laplace: {method: multigrid, rhs: \"" + rhs + "\", tolerance: " + tol +
         ", max_iters: 40" + extra + "}\n";
}

const std::string kWalls = "  default: {type: dirichlet, value: 0}\n";

}  // namespace

namespace {

// The taps of coarse point q as the first formulation listed them (every
// fine i from ⌊(q·den − den)/num⌋ to ⌊(q·den + den)/num⌋ of positive hat
// weight, in order): the fixed slots of mg_restrict_taps must hold the same
// points with the same weights, in the same order.
int listed_taps(const MgAxis& x, std::int64_t q, std::int64_t* at, double* w) {
  const std::int64_t c = q * x.den;
  const auto fdiv = [](std::int64_t a, std::int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
  };
  const std::int64_t lo = fdiv(c - x.den, x.num), hi = fdiv(c + x.den, x.num);
  int cnt = 0;
  std::int64_t sum = 0, wt[8];
  for (std::int64_t i = lo; i <= hi; ++i) {
    const std::int64_t wi = x.den - std::abs(i * x.num - c);
    if (wi <= 0) continue;
    std::int64_t f = i;
    if (x.periodic) {
      f = ((f % x.nf) + x.nf) % x.nf;
    } else {
      if (f < 0) f = -f;
      if (f > x.nf - 1) f = 2 * (x.nf - 1) - f;
    }
    REQUIRE(cnt < 8);
    at[cnt] = f;
    wt[cnt++] = wi;
    sum += wi;
  }
  for (int e = 0; e < cnt; ++e) w[e] = double(wt[e]) / double(sum);
  return cnt;
}

}  // namespace

TEST_CASE("multigrid transfers: restriction keeps constants, prolongation is exact on lines",
          "[multigrid]") {
  for (const bool periodic : {false, true})
    for (std::int64_t nf = 4; nf <= 130; ++nf) {
      const MgAxis ax = mg_coarsen_axis(nf, periodic);
      INFO("nf " << nf << (periodic ? " periodic" : " walls") << ", nc " << ax.nc);
      REQUIRE(ax.nc < nf);
      CHECK(2 * (periodic ? ax.nc : ax.nc - 1) >= (periodic ? nf : nf - 1));  // H ≤ 2h
      for (std::int64_t q = 0; q < ax.nc; ++q) {
        std::int64_t at[kMgTaps], ref_at[8];
        double w[kMgTaps], ref_w[8];
        mg_restrict_taps<double>(ax, q, at, w);
        const int ref = listed_taps(ax, q, ref_at, ref_w);
        double sum = 0;
        int cnt = 0;
        for (int e = 0; e < kMgTaps; ++e) {
          if (w[e] == 0) continue;
          sum += w[e];
          CHECK(at[e] >= 0);
          CHECK(at[e] < nf);
          REQUIRE(cnt < ref);  // the same taps, in order, bit for bit
          CHECK(at[e] == ref_at[cnt]);
          CHECK(w[e] == ref_w[cnt]);
          ++cnt;
        }
        CHECK(cnt == ref);
        CHECK(sum == Approx(1.0).epsilon(1e-15));
      }
      // a line through the coarse points is interpolated exactly at every fine point
      for (std::int64_t i = 0; i < nf; ++i) {
        std::int64_t lo, hi;
        double t;
        mg_prolong_taps<double>(ax, i, lo, hi, t);
        // the division it stands for (the nested axes take a shortcut)
        const std::int64_t p = i * ax.num, ref_lo = p / ax.den, rem = p - ref_lo * ax.den;
        CHECK(lo == ref_lo);
        CHECK(t == double(rem) / double(ax.den));
        CHECK(hi == (rem == 0 ? lo : (lo + 1 == ax.nc ? 0 : lo + 1)));
        if (periodic) continue;
        const double coarse_x = double(lo) + t * double(hi - lo);
        CHECK(coarse_x * double(nf - 1) / double(ax.nc - 1) == Approx(double(i)).margin(1e-12));
      }
    }
  // nested: full weighting, ¼ ½ ¼
  const MgAxis ax = mg_coarsen_axis(9, false);
  std::int64_t at[kMgTaps];
  double w[kMgTaps];
  mg_restrict_taps<double>(ax, 2, at, w);
  CHECK(at[0] == 3);
  CHECK(w[0] == 0.25);
  CHECK(w[1] == 0.5);
  CHECK(w[3] == 0);
  // a Neumann wall mirrors: ½ of the point, ½ of its neighbour
  mg_restrict_taps<double>(ax, 0, at, w);
  CHECK(at[0] == 1);
  CHECK(at[2] == 1);
}

TEST_CASE("multigrid colours: no two neighbours share one, odd periodic axes included",
          "[multigrid]") {
  for (const std::int64_t nx : {6, 7}) {
    MgColouring c;
    c.n[0] = nx;
    c.n[1] = 5;
    c.n[2] = 3;
    c.odd_periodic[0] = nx % 2 != 0;
    c.odd_periodic[2] = true;  // z periodic with 3 points
    c.colours = 3;
    if (nx % 2 == 0) c.odd_periodic[0] = false;
    int bad = 0;
    for (std::int64_t k = 0; k < 3; ++k)
      for (std::int64_t j = 0; j < 5; ++j)
        for (std::int64_t i = 0; i < nx; ++i) {
          const int me = mg_colour(c, i, j, k);
          bad += me == mg_colour(c, (i + 1) % nx, j, k);  // x periodic
          if (j + 1 < 5) bad += me == mg_colour(c, i, j + 1, k);
          bad += me == mg_colour(c, i, j, (k + 1) % 3);  // z periodic
        }
    CHECK(bad == 0);
  }
}

TEST_CASE("multigrid colours over ranks: a block's colours are the global points' colours",
          "[multigrid]") {
  // A rank's block (offset off, halo included) colours each point as the
  // whole grid colours the same global point, 2 and 3 colours.
  for (const bool odd : {false, true}) {
    MgColouring whole;
    whole.n[0] = 7;
    whole.n[1] = 6;
    whole.n[2] = 5;
    whole.odd_periodic[0] = odd;
    whole.colours = odd ? 3 : 2;
    MgColouring block = whole;
    block.off[0] = 3;
    block.off[1] = -1;  // a halo layer below the block's first owned point
    block.off[2] = 2;
    int bad = 0;
    for (std::int64_t k = 0; k < 3; ++k)
      for (std::int64_t j = 1; j < 5; ++j)
        for (std::int64_t i = 0; i < 4; ++i)
          bad += mg_colour(block, i, j, k) != mg_colour(whole, i + 3, j - 1, k + 2);
    CHECK(bad == 0);
  }
}

TEST_CASE("multigrid reduces the residual by 0.1 or more per V-cycle, on every 3D grid",
          "[multigrid]") {
  // 2^k + 1 points, and 65×47×33 (a 47 that halves to 24, then 13: not
  // nested, and spacings 1/64, 1/46, 1/32: semi-coarsened)
  const std::string f3 = "-3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)";
  std::vector<double> worst;
  for (const auto& n : std::vector<std::vector<int>>{{17, 17, 17}, {33, 33, 33}, {65, 47, 33}}) {
    const Run r = solve(prepared(mg_case(n, kWalls, f3, "", "", "1.0e-8")));
    REQUIRE(r.status == LaplaceStatus::Converged);
    worst.push_back(worst_factor(r.residuals));
    INFO(dims(n) << ": " << r.residuals.size() - 1 << " cycles, worst factor " << worst.back());
    CHECK(worst.back() <= 0.1);
    CHECK(r.residuals.size() - 1 <= 10);
  }
  CHECK(std::abs(worst[0] - worst[1]) < 0.02);  // the same on 17³ and 33³
}

TEST_CASE("multigrid reduces the residual by 0.1 or more per V-cycle in 2D", "[multigrid]") {
  const std::string f2 = "-2*pi^2*sin(pi*x)*sin(pi*y) + x";
  for (const auto& n : std::vector<std::vector<int>>{{33, 33}, {129, 129}, {129, 47}}) {
    const Run r = solve(prepared(mg_case(n, kWalls, f2)));
    REQUIRE(r.status == LaplaceStatus::Converged);
    INFO(dims(n) << ": " << r.residuals.size() - 1 << " cycles, worst factor "
                 << worst_factor(r.residuals));
    CHECK(worst_factor(r.residuals) <= 0.1);
  }
}

TEST_CASE("multigrid: second-order error against sin(πx)sin(πy)sin(πz), V- and F-cycles",
          "[multigrid]") {
  for (const std::string cycle : {"v", "f"}) {
    std::vector<double> err;
    for (int n : {9, 17, 25}) {
      const Case c = prepared(mg_case({n, n, n}, kWalls, "-3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)",
                                      ", cycle: " + cycle, "", "1.0e-8"));
      const Run r = solve(c);
      REQUIRE(r.status == LaplaceStatus::Converged);
      double e = 0;
      const Grid& g = c.grid;
      for (std::int64_t k = 0; k < g.n[2]; ++k)
        for (std::int64_t j = 0; j < g.n[1]; ++j)
          for (std::int64_t i = 0; i < g.n[0]; ++i)
            e = std::max(e, std::abs(r.u[std::size_t(g.index(i, j, k))] -
                                     std::sin(kPi * g.coord(0, i)) * std::sin(kPi * g.coord(1, j)) *
                                         std::sin(kPi * g.coord(2, k))));
      err.push_back(e);
    }
    INFO(cycle << "-cycles: errors " << err[0] << " " << err[1] << " " << err[2]);
    // h = 1/8, 1/16, 1/24: the error falls as h²
    CHECK(std::log2(err[0] / err[1]) == Approx(2.0).margin(0.1));
    CHECK(std::log(err[1] / err[2]) / std::log(1.5) == Approx(2.0).margin(0.1));
  }
}

TEST_CASE("multigrid: every boundary mix converges fast and agrees with cg", "[multigrid]") {
  struct Mix {
    const char* what;
    std::vector<int> n;
    std::string boundary, rhs, extra, grid = "";
  };
  const std::vector<Mix> mixes = {
      {"Dirichlet expressions", {25, 17, 13},
       "  default: {type: dirichlet, value: \"x*y - z\"}\n  z+: {type: dirichlet, value: "
       "\"sin(pi*x)*y\"}\n",
       "exp(x)*y", ""},
      {"Neumann gradients and a Dirichlet face", {21, 17, 13},
       "  default: {type: neumann, gradient: 0.5}\n  x-: {type: dirichlet, value: \"sin(pi*y)*z\"}\n",
       "exp(x)*y", ""},
      {"a periodic axis of odd length (3 colours) and walls", {17, 23, 9},
       "  default: {type: dirichlet, value: 0}\n  y: {type: periodic}\n  z-: {type: neumann, "
       "gradient: -1}\n",
       "x*y*z", "", ", extent: [1, 1.4375, 0.5]"},
      {"all Neumann, remove_mean", {17, 17, 17}, "  default: {type: neumann, gradient: 0}\n",
       "x*y*z", ", remove_mean: true"},
      {"all periodic", {16, 24, 12}, "  default: {type: periodic}\n",
       "sin(2*pi*x)*cos(2*pi*y) + cos(4*pi*z)", ""},
      {"2D: Neumann, periodic of odd length, Dirichlet", {65, 45},
       "  x: {type: periodic}\n  y-: {type: neumann, gradient: 1}\n  y+: {type: dirichlet, "
       "value: \"cos(x)\"}\n",
       "x*y", ""},
      {"1D: Neumann and Dirichlet", {100}, "  x-: {type: neumann, gradient: 2}\n  x+: {type: "
       "dirichlet, value: 1}\n", "sin(3*x)", ""},
  };
  for (const Mix& m : mixes) {
    INFO(m.what);
    const Run mg = solve(prepared(mg_case(m.n, m.boundary, m.rhs, m.extra, m.grid)));
    REQUIRE(mg.status == LaplaceStatus::Converged);
    INFO(mg.residuals.size() - 1 << " cycles, worst factor " << worst_factor(mg.residuals));
    CHECK(worst_factor(mg.residuals) <= 0.1);
    std::string text = mg_case(m.n, m.boundary, m.rhs, m.extra, m.grid);
    text.replace(text.find("multigrid"), 9, "cg");
    text.replace(text.find("max_iters: 40"), 13, "max_iters: 5000");
    text.replace(text.find("1.0e-10"), 7, "1.0e-11");
    const Run cg = solve(prepared(text));
    REQUIRE(cg.status == LaplaceStatus::Converged);
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < cg.u.size(); ++i) {
      diff = std::max(diff, std::abs(mg.u[i] - cg.u[i]));
      scale = std::max(scale, std::abs(cg.u[i]));
    }
    CHECK(diff <= 1e-7 * std::max(scale, 1.0));
  }
}

TEST_CASE("multigrid: the hierarchy of 65×47×33 and of 513³ coarsens to 3 points an axis",
          "[multigrid]") {
  Grid g;
  g.ndim = 3;
  g.n = {65, 47, 33};
  g.h = {1.0 / 64, 1.0 / 46, 1.0 / 32};
  const std::vector<Grid> h = Multigrid<double>::hierarchy(g);
  CHECK(h[1].n == std::array<std::int64_t, 3>{33, 24, 33});  // x and y first: z's h is 2× x's
  CHECK(h.back().n == std::array<std::int64_t, 3>{3, 3, 3});
  g.n = {513, 513, 513};
  g.h = {1.0 / 512, 1.0 / 512, 1.0 / 512};
  const std::vector<Grid> big = Multigrid<double>::hierarchy(g);
  CHECK(big.size() == 9);  // 513, 257, ..., 3
  CHECK(Multigrid<double>::extra_values(g) < std::size_t(g.size()) * 3 / 2);
}

TEST_CASE("cg preconditioned by a multigrid V-cycle (or Jacobi) reaches the same solution",
          "[multigrid]") {
  struct Mix {
    std::vector<int> n;
    std::string boundary, extra;
  };
  const std::vector<Mix> mixes = {
      {{25, 25, 25}, kWalls, ""},
      {{21, 17, 13}, "  default: {type: neumann, gradient: 0.5}\n  x-: {type: dirichlet, value: "
                     "\"sin(pi*y)*z\"}\n", ""},
      {{17, 17, 17}, "  default: {type: neumann, gradient: 0}\n", ", remove_mean: true"},
      {{65, 45}, "  x: {type: periodic}\n  y-: {type: neumann, gradient: 1}\n  y+: {type: "
                 "dirichlet, value: \"cos(x)\"}\n", ""},
  };
  for (const Mix& m : mixes) {
    std::vector<std::vector<double>> u;
    std::vector<std::size_t> its;
    for (const std::string pre : {"none", "jacobi", "multigrid"}) {
      std::string text = mg_case(m.n, m.boundary, "x*y + 1", m.extra + ", preconditioner: " + pre);
      text.replace(text.find("multigrid"), 9, "cg");
      text.replace(text.find("max_iters: 40"), 13, "max_iters: 5000");
      const Run r = solve(prepared(text), 25);
      INFO(m.n.size() << "D " << m.n[0] << ", preconditioner " << pre);
      REQUIRE(r.status == LaplaceStatus::Converged);
      u.push_back(r.u);
      its.push_back(std::size_t(r.iterations));
    }
    INFO("iterations: none " << its[0] << ", jacobi " << its[1] << ", multigrid " << its[2]);
    CHECK(its[2] <= 15);
    CHECK(its[2] * 5 < its[0]);
    for (std::size_t k = 1; k < 3; ++k) {
      double diff = 0, scale = 1;
      for (std::size_t i = 0; i < u[0].size(); ++i) {
        diff = std::max(diff, std::abs(u[k][i] - u[0][i]));
        scale = std::max(scale, std::abs(u[0][i]));
      }
      CHECK(diff <= 1e-7 * scale);
    }
  }
}
