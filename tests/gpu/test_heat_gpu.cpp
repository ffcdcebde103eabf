// The CUDA executor against the CPU reference on random fields: poisoned
// outputs, sizes that are not multiples of the block size, 1D/2D/3D, both
// precisions, every boundary type. Run with `gridforge_tests "[gpu]"`.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/backend.hpp"
#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "tests/unit/heat_test_util.hpp"

using namespace gf;
using test::random_args;
using test::random_field;

namespace {

template <class T>
void compare_step(int ndim, std::vector<std::int64_t> n, BcType lo, BcType hi, bool source_field,
                  int steps) {
  std::mt19937_64 rng(1234 + ndim * 7 + int(lo) * 3 + int(hi) + steps);
  HeatArgs<T> a = random_args<T>(ndim, lo, hi, rng);
  const Grid g = test::grid_of(ndim, n.data());
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto u0 = random_field<T>(np, rng);
  const auto s0 = random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());

  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  auto run = [&](Backend<T>& be) {
    auto exec = make_heat_exec(be);
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v"), s = be.make_field(g, "s");
    be.upload(u0.data(), u);
    be.upload(poison.data(), v);
    be.upload(s0.data(), s);
    HeatArgs<T> args = a;
    if (source_field) args.source = s.data();
    for (int k = 0; k < steps; ++k) {
      exec->step(args, u, v);
      u.swap(v);
    }
    std::vector<T> out(np);
    be.download(u, out.data());
    return out;
  };
  const auto c = run(*cpu);
  const auto d = run(*gpu);
  const double tol = sizeof(T) == 4 ? 2e-6 : 1e-14;
  std::size_t bad = 0, unwritten = 0;
  for (std::size_t i = 0; i < np; ++i) {
    if (std::isnan(double(d[i]))) ++unwritten;
    else if (std::fabs(double(d[i]) - double(c[i])) > tol * (1 + std::fabs(double(c[i])))) ++bad;
  }
  INFO("ndim " << ndim << " n " << n[0] << " bc " << int(lo) << "/" << int(hi) << " steps "
               << steps << " float" << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("GPU heat step equals the CPU reference on random fields", "[gpu]") {
  const std::vector<std::pair<BcType, BcType>> bcs = {
      {BcType::Dirichlet, BcType::Dirichlet},
      {BcType::Neumann, BcType::Dirichlet},
      {BcType::Neumann, BcType::Neumann},
      {BcType::Periodic, BcType::Periodic}};
  for (auto [lo, hi] : bcs) {
    for (int steps : {1, 5}) {
      for (bool src : {false, true}) {
        compare_step<double>(1, {1001}, lo, hi, src, steps);
        compare_step<float>(1, {1001}, lo, hi, src, steps);
        compare_step<double>(2, {67, 45}, lo, hi, src, steps);
        compare_step<float>(2, {67, 45}, lo, hi, src, steps);
        compare_step<double>(3, {37, 29, 23}, lo, hi, src, steps);
        compare_step<float>(3, {37, 29, 23}, lo, hi, src, steps);
      }
    }
  }
  // rows whose length is a multiple of 4: the vectorised 3D path
  for (auto [lo, hi] : bcs) {
    compare_step<float>(3, {36, 11, 19}, lo, hi, true, 3);
    compare_step<double>(3, {36, 11, 19}, lo, hi, false, 3);
    // the vectorised 2D march: several x blocks and row chunks, partial ones
    compare_step<float>(2, {260, lo == BcType::Periodic ? 76 : 75}, lo, hi, true, 3);
    compare_step<double>(2, {266, lo == BcType::Periodic ? 76 : 75}, lo, hi, false, 3);
    compare_step<float>(2, {4, 3}, lo, hi, false, 2);
  }
  // a tall z extent, so the kernel splits z into several chunks
  compare_step<float>(3, {35, 9, 301}, BcType::Neumann, BcType::Dirichlet, true, 3);
  compare_step<double>(3, {3, 3, 3}, BcType::Periodic, BcType::Periodic, false, 2);
}

TEST_CASE("GPU field statistics equal the CPU ones, NaN and Inf counted", "[gpu]") {
  std::mt19937_64 rng(99);
  Grid g;
  g.ndim = 3;
  g.n = {33, 17, 13};
  auto v = random_field<double>(static_cast<std::size_t>(g.size()), rng);
  v[5] = std::numeric_limits<double>::quiet_NaN();
  v[77] = std::numeric_limits<double>::infinity();
  auto cpu = make_cpu_backend<double>();
  auto gpu = make_cuda_backend<double>(0);
  Field<double> a = cpu->make_field(g, "a"), b = gpu->make_field(g, "b");
  cpu->upload(v.data(), a);
  gpu->upload(v.data(), b);
  const FieldStats sc = cpu->vec().stats(a), sg = gpu->vec().stats(b);
  CHECK(sg.nonfinite == 2);
  CHECK(sc.nonfinite == 2);
  CHECK(sg.min == sc.min);
  CHECK(sg.max == sc.max);
  CHECK(sg.mean == Approx(sc.mean).epsilon(1e-12));
}

TEST_CASE("GPU out-of-memory is a DeviceError naming what and how much", "[gpu][oom]") {
  auto gpu = make_cuda_backend<double>(0);
  Grid g;
  g.ndim = 3;
  g.n = {1 << 14, 1 << 14, 1 << 10};  // 2 TiB of float64
  try {
    Field<double> f = gpu->make_field(g, "the field u");
    FAIL("allocation of 2 TiB succeeded");
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    CHECK(m.find("the field u") != std::string::npos);
    CHECK(m.find("GiB free") != std::string::npos);
  }
}

TEST_CASE("GPU temporally blocked heat equals one step at a time, bit for bit", "[gpu]") {
  // several tiles in x and y, partial ones; several z chunks; a grid smaller
  // than one tile; a periodic axis shorter than k. 2D: several strips (the
  // 16-byte pass, nx a multiple of 4, and the one-point pass, nx odd) and y
  // chunks, a grid narrower than a strip, a periodic y shorter than k
  const std::vector<std::vector<std::int64_t>> shapes = {
      {37, 29, 23}, {70, 33, 150}, {5, 4, 3}, {36, 11, 19},
      {301, 77},    {300, 150},    {5, 3},    {36, 11}};
  auto gpu32 = make_cuda_backend<float>(0);
  auto gpu64 = make_cuda_backend<double>(0);
  test::for_each_time_block_case(shapes, [&](int k, const auto& kind, const auto& n, bool src) {
    test::compare_time_block<float>(*gpu32, k, n, kind, src);
    test::compare_time_block<double>(*gpu64, k, n, kind, src);
  });
}

TEST_CASE("GPU temporally blocked heat without walls equals one step at a time", "[gpu]") {
  // blocks clear of every x and y face (the kernels' paths without the wall
  // rules; float64 tiles are 64 wide), planes on the z walls and between
  constexpr BcType D = BcType::Dirichlet, N = BcType::Neumann, P = BcType::Periodic;
  const std::vector<test::AxisKinds> kinds = {{{D, N, P}, {N, D, P}}, {{P, P, N}, {P, P, D}}};
  auto gpu32 = make_cuda_backend<float>(0);
  auto gpu64 = make_cuda_backend<double>(0);
  for (int k : {2, 3, 4})
    for (const auto& kind : kinds) {
      test::compare_time_block<float>(*gpu32, k, {100, 90, 300}, kind, k == 2);
      test::compare_time_block<double>(*gpu64, k, {150, 90, 140}, kind, k == 4);
      // the vectorised pass (nx a multiple of 4): several wall-free tiles in
      // each direction
      test::compare_time_block<float>(*gpu32, k, {200, 140, 150}, kind, k != 2);
      test::compare_time_block<double>(*gpu64, k, {200, 140, 150}, kind, k == 3);
      // 2D: several wall-free strips (128 points wide in float32, 64 in float64)
      test::compare_time_block<float>(*gpu32, k, {600, 90}, kind, k == 2);
      test::compare_time_block<double>(*gpu64, k, {400, 90}, kind, k != 2);
    }
}

TEST_CASE("GPU temporally blocked passes on small grids (sized for racecheck)", "[gpu][tb_small]") {
  // few points, every pass and launch layout: the scalar pass (nx odd) and
  // the vectorised one (nx a multiple of 4) with middle and face blocks (2D:
  // strips), heat
  // (both formula forms), star7 and Jacobi, walls of both kinds and a periodic axis;
  // small enough for compute-sanitizer's racecheck to finish in minutes
  constexpr BcType D = BcType::Dirichlet, N = BcType::Neumann, P = BcType::Periodic;
  const test::AxisKinds kind = {{N, D, P}, {D, N, P}};
  auto gpu32 = make_cuda_backend<float>(0);
  auto gpu64 = make_cuda_backend<double>(0);
  for (int k : {2, 3, 4})
    for (const std::vector<std::int64_t>& n :
         {std::vector<std::int64_t>{9, 7, 6}, std::vector<std::int64_t>{136, 64, 6},
          std::vector<std::int64_t>{9, 7}, std::vector<std::int64_t>{260, 12}}) {
      test::compare_time_block<float>(*gpu32, k, n, kind, false);
      test::compare_time_block<double>(*gpu64, k, n, kind, k == 3);
      test::compare_stencil_time_block<float>(*gpu32, k, n, kind, k == 2);
      test::compare_stencil_time_block<double>(*gpu64, k, n, kind, k != 2);
      test::compare_jacobi_time_block<float>(*gpu32, k, n, kind, k != 3);
      test::compare_jacobi_time_block<double>(*gpu64, k, n, kind, k == 3);
    }
}
