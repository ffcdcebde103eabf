// GPU fields whose rows are padded to whole vectors and cache lines
// (Layout::aligned_rows, the default on the GPU) against GPU fields of
// dense rows: the same values bit for bit after every kind of step, on odd
// and 2^k + 1 sizes where the padded rows take the vectorised marches with
// a partial last piece and the dense ones do not; and the reductions over
// them (dot, residual; stats' min, max and count) equal to the last bit (the
// stats' sum is CUB's over dense rows and the points' own over padded ones:
// equal to round-off). Run with
// `gridforge_tests "[gpu]"`.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "kernels/backend.hpp"
#include "kernels/device.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "kernels/stencil/stencil_exec.hpp"
#include "kernels/wave/wave_exec.hpp"
#include "tests/gpu/padding_check.hpp"
#include "tests/unit/heat_test_util.hpp"
#include "tests/unit/stencil_test_util.hpp"
#include "tests/unit/wave_test_util.hpp"

using namespace gf;

namespace {

// Sizes whose rows are not whole vectors: odd, 2^k + 1, primes, and one
// that is a multiple of 4 but not of a cache line (32 floats, 16 doubles).
// Rows of more than 32 pieces with a few past the last 32 (257, 259, 260,
// 513 float32; 257, 259, 513 float64) take the 3D marches' tail blocks
// (MarchTail), 260 float32 with a padding piece of whole vectors; 259 × 41
// gives them rows of several warps. Rows that end inside a 32-byte sector
// (257, 260, 300 and 513 float32; 257 and 513 float64) write its padding as
// zeros (XSides::store).
const std::vector<std::vector<std::int64_t>> kSizes3 = {
    {33, 17, 9}, {65, 9, 7}, {257, 5, 4}, {37, 3, 3},   {5, 6, 7},
    {300, 4, 5}, {259, 41, 11}, {513, 9, 6}, {260, 11, 6}};
const std::vector<std::vector<std::int64_t>> kSizes2 = {
    {129, 33}, {257, 7}, {1025, 5}, {37, 3}, {7, 9}, {300, 6}};

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// Bitwise equality of two host copies.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

const std::vector<std::pair<BcType, BcType>> kBcs = {{BcType::Dirichlet, BcType::Dirichlet},
                                                     {BcType::Neumann, BcType::Dirichlet},
                                                     {BcType::Periodic, BcType::Periodic}};

// `work(be, u, v)` on a padded-row GPU backend and on a dense-row one, from
// the same random field: the downloaded u after it. The padded fields'
// padding is still zero after it.
template <class T>
void padded_equals_dense(int ndim, const std::vector<std::int64_t>& n,
                         const std::function<void(Backend<T>&, Field<T>&, Field<T>&)>& work) {
  const Grid g = test::grid_of(ndim, n.data());
  std::mt19937_64 rng(7 + n[0] * 31 + n[1]);
  const auto u0 = random_values<T>(std::size_t(g.size()), rng);
  auto run = [&](std::int64_t align) {
    auto be = make_cuda_backend<T>(0, align);
    Field<T> u = be->make_field(g, "u"), v = be->make_field(g, "v");
    be->upload(u0.data(), u);
    be->upload(u0.data(), v);
    work(*be, u, v);
    be->synchronize();
    if (align != 0) {
      INFO("padding of u and v after the work, GRIDFORGE_PAD_STORE " << gpu_pad_store());
      CHECK(test::padding_is_zero(u));
      CHECK(test::padding_is_zero(v));
    }
    std::vector<T> out(std::size_t(g.size()));
    be->download(u, out.data());
    return std::make_pair(out, u.layout().is_dense());
  };
  const auto [padded, p_dense] = run(128);
  const auto [dense, d_dense] = run(0);
  INFO("ndim " << ndim << " n " << n[0] << "×" << n[1] << "×" << n[2 % n.size()] << " float"
               << 8 * sizeof(T));
  CHECK(d_dense);
  CHECK(!p_dense);  // n[0] is no multiple of the alignment: rows padded
  CHECK(same_bits(padded, dense));
}

// Three steps one at a time (args `one`: the marches), then a temporally
// blocked pass of each depth 2 to 4 the executor takes (args `blocked`), u
// the result: heat's and the stencils' executors alike.
template <class Exec, class Args, class T>
void steps_then_passes(Exec& exec, const Args& one, const Args& blocked, Field<T>& u,
                       Field<T>& v) {
  for (int k = 0; k < 3; ++k) {
    exec.step(one, u, v);
    u.swap(v);
  }
  for (int k = 2; k <= 4; ++k) {
    if (exec.time_block(blocked, u.layout(), k) != k) continue;
    exec.steps(blocked, k, u, v);
    u.swap(v);
  }
}

template <class T>
void heat_cases() {
  for (auto [lo, hi] : kBcs)
    for (int ndim : {2, 3})
      for (const auto& n : ndim == 3 ? kSizes3 : kSizes2) {
        std::mt19937_64 rng(11);
        HeatArgs<T> a = test::random_args<T>(ndim, lo, hi, rng);
        // one step at a time (the marches), then temporally blocked passes
        padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>& v) {
          auto exec = make_heat_exec(be);
          Field<T> s = be.make_field(u.grid(), "s");
          be.copy(u, s);
          HeatArgs<T> b = a;
          b.source = s.data();
          steps_then_passes(*exec, b, a, u, v);
        });
      }
}

template <class T>
LaplaceArgs<T> laplace_args(int ndim, BcType lo, BcType hi) {
  LaplaceArgs<T> a;
  a.ndim = ndim;
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    const double ih2 = ax < ndim ? 1.0 + 0.25 * ax : 0.0;
    a.ih2[ax] = static_cast<T>(ih2);
    diag += 2 * ih2;
    a.bc[ax] = AxisBc<T>{lo, hi, static_cast<T>(0.05), static_cast<T>(-0.03)};
  }
  a.diag = static_cast<T>(diag);
  a.inv_diag = static_cast<T>(1.0 / diag);
  a.omega = static_cast<T>(1.6);
  a.f_const = static_cast<T>(0.3);
  a.f_coef = static_cast<T>(-1);
  a.lap_coef = static_cast<T>(1);
  a.op_scale = static_cast<T>(1);
  a.op_shift = static_cast<T>(0);
  return a;
}

template <class T>
void laplace_cases() {
  for (auto [lo, hi] : kBcs)
    for (int ndim : {2, 3})
      for (const auto& n : ndim == 3 ? kSizes3 : kSizes2) {
        const LaplaceArgs<T> a = laplace_args<T>(ndim, lo, hi);
        // each operation on its own, so that a difference names it
        INFO("Jacobi sweeps");
        padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>& v) {
          auto exec = make_laplace_exec(be);
          for (int k = 0; k < 3; ++k) {
            exec->jacobi_sweep(a, u, v);
            u.swap(v);
          }
        });
        INFO("temporally blocked Jacobi");
        padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>& v) {
          auto exec = make_laplace_exec(be);
          for (int k = 2; k <= 4; ++k) {
            if (exec->jacobi_time_block(a, u.layout(), k) != k) continue;
            exec->jacobi_steps(a, k, u, v);
            u.swap(v);
          }
        });
        // (red-black SOR needs an even number of points on a periodic axis,
        // as the case reader says: otherwise two neighbours share a colour)
        bool odd_periodic = false;
        for (int ax = 0; ax < ndim; ++ax) odd_periodic |= lo == BcType::Periodic && n[ax] % 2;
        if (!odd_periodic) {
          INFO("red-black SOR");
          padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>&) {
            auto exec = make_laplace_exec(be);
            exec->sor_sweep(a, u, 0);
            exec->sor_sweep(a, u, 1);
          });
        }
        INFO("residual, dot, stats");
        double res[2] = {0, 0}, dots[2] = {0, 0};
        FieldStats st[2];
        int which = 0;
        padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>&) {
          auto exec = make_laplace_exec(be);
          Field<T> r = be.make_field(u.grid(), "r");
          res[which] = exec->residual(a, u, &r);
          dots[which] = be.vec().dot(u, r);
          st[which] = be.vec().stats(u);
          be.vec().axpby(T(1), r, T(0.5), u);
          ++which;
        });
        CHECK(res[0] == res[1]);
        CHECK(dots[0] == dots[1]);
        CHECK(st[0].min == st[1].min);
        CHECK(st[0].max == st[1].max);
        CHECK(st[0].count == st[1].count);
        CHECK(std::fabs(st[0].sum - st[1].sum) <= 1e-12 * (1 + std::fabs(st[1].sum)));
      }
}

template <class T>
void stencil_cases() {
  for (auto [lo, hi] : kBcs)
    for (int ndim : {2, 3})
      for (bool box : {false, true})
        for (const auto& n : ndim == 3 ? kSizes3 : kSizes2) {
          std::mt19937_64 rng(5);
          const std::vector<StencilTap<T>> taps = test::preset_shaped<T>(ndim, box, rng);
          StencilArgs<T> a;
          a.ndim = ndim;
          for (int ax = 0; ax < 3; ++ax) a.bc[ax] = AxisBc<T>{lo, hi, T(0.02), T(-0.01)};
          a.ntaps = int(taps.size());
          a.radius = 1;
          a.update = true;
          a.coeff = static_cast<T>(0.3);
          padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>& v) {
            auto exec = make_stencil_exec(be);
            exec->set_taps(taps);
            steps_then_passes(*exec, a, a, u, v);
          });
        }
}

template <class T>
void wave_cases() {
  for (auto [lo, hi] : kBcs)
    for (int ndim : {2, 3})
      for (const auto& n : ndim == 3 ? kSizes3 : kSizes2) {
        std::mt19937_64 rng(3);
        const WaveArgs<T> a0 = test::random_wave_args<T>(ndim, lo, hi, rng);
        padded_equals_dense<T>(ndim, n, [&](Backend<T>& be, Field<T>& u, Field<T>& v) {
          auto exec = make_wave_exec(be);
          Field<T> w = be.make_field(u.grid(), "w");
          be.copy(u, w);
          be.vec().axpby(T(0.99), u, T(0), w);
          WaveArgs<T> a = a0;
          for (int k = 0; k < 4; ++k) {
            a.w = w.data();
            exec->step(a, u, v);
            w.swap(u);
            u.swap(v);
          }
        });
      }
}

}  // namespace

TEST_CASE("GPU heat on padded rows equals dense rows bit for bit (odd, 2^k+1 sizes)", "[gpu]") {
  heat_cases<float>();
  heat_cases<double>();
}

TEST_CASE("GPU Jacobi, SOR, residual, dot and stats on padded rows equal dense rows", "[gpu]") {
  laplace_cases<float>();
  laplace_cases<double>();
}

TEST_CASE("GPU star and box stencils on padded rows equal dense rows bit for bit", "[gpu]") {
  stencil_cases<float>();
  stencil_cases<double>();
}

TEST_CASE("GPU wave on padded rows equals dense rows bit for bit", "[gpu]") {
  wave_cases<float>();
  wave_cases<double>();
}
