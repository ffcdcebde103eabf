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

using namespace gf;

namespace {

template <class T>
std::vector<T> random_field(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
HeatArgs<T> random_args(int ndim, const std::int64_t* n, BcType lo, BcType hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.01, 0.15);  // stable: Σc ≤ 0.45
  HeatArgs<T> a;
  a.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.n[ax] = ax < ndim ? n[ax] : 1;
    a.c[ax] = ax < ndim ? static_cast<T>(d(rng)) : T(0);
    // periodic must pair with periodic; mix the others across axes
    const bool per = lo == BcType::Periodic;
    a.bc[ax].lo = per ? lo : (ax % 2 ? hi : lo);
    a.bc[ax].hi = per ? hi : (ax % 2 ? lo : hi);
    a.bc[ax].ghost_lo = static_cast<T>(d(rng));
    a.bc[ax].ghost_hi = static_cast<T>(-d(rng));
  }
  a.dt = static_cast<T>(1e-3);
  a.source_const = static_cast<T>(d(rng));
  return a;
}

template <class T>
void compare_step(int ndim, std::vector<std::int64_t> n, BcType lo, BcType hi, bool source_field,
                  int steps) {
  std::mt19937_64 rng(1234 + ndim * 7 + int(lo) * 3 + int(hi) + steps);
  HeatArgs<T> a = random_args<T>(ndim, n.data(), lo, hi, rng);
  Grid g;
  g.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = a.n[ax];
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto u0 = random_field<T>(np, rng);
  const auto s0 = random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());

  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  auto run = [&](Backend<T>& be) {
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v"), s = be.make_field(g, "s");
    be.upload(u0.data(), u);
    be.upload(poison.data(), v);
    be.upload(s0.data(), s);
    HeatArgs<T> args = a;
    if (source_field) args.source = s.data();
    for (int k = 0; k < steps; ++k) {
      be.heat_step(args, u, v);
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
  const FieldStats sc = cpu->stats(a), sg = gpu->stats(b);
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

namespace {

struct AxisKinds {
  BcType lo[3], hi[3];
};

// k steps in one temporally blocked pass, twice, against 2k single steps on
// the GPU: equal bit for bit (same formula, same neighbours, same order).
template <class T>
void compare_time_block(int k, std::vector<std::int64_t> n, const AxisKinds& kinds,
                        bool source_field) {
  std::mt19937_64 rng(4321 + k * 131 + n[0] * 7 + n[2] + int(kinds.lo[0]) * 5 +
                      int(kinds.hi[2]) * 3 + source_field);
  HeatArgs<T> a = random_args<T>(3, n.data(), BcType::Dirichlet, BcType::Dirichlet, rng);
  for (int ax = 0; ax < 3; ++ax) {
    a.bc[ax].lo = kinds.lo[ax];
    a.bc[ax].hi = kinds.hi[ax];
  }
  Grid g;
  g.ndim = 3;
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = a.n[ax];
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto u0 = random_field<T>(np, rng);
  const auto s0 = random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  auto gpu = make_cuda_backend<T>(0);
  REQUIRE(gpu->heat_time_block(a, k) == k);
  auto run = [&](bool blocked) {
    Field<T> u = gpu->make_field(g, "u"), v = gpu->make_field(g, "v"), s = gpu->make_field(g, "s");
    gpu->upload(u0.data(), u);
    gpu->upload(s0.data(), s);
    HeatArgs<T> args = a;
    if (source_field) args.source = s.data();
    for (int pass = 0; pass < 2; ++pass) {
      gpu->upload(poison.data(), v);
      if (blocked) {
        gpu->heat_steps(args, k, u, v);
        u.swap(v);
      } else {
        for (int i = 0; i < k; ++i) {
          gpu->heat_step(args, u, v);
          u.swap(v);
        }
      }
    }
    std::vector<T> out(np);
    gpu->download(u, out.data());
    return out;
  };
  const auto one = run(false);
  const auto blocked = run(true);
  std::size_t unwritten = 0, differ = 0;
  for (std::size_t i = 0; i < np; ++i) {
    if (std::isnan(double(blocked[i]))) ++unwritten;
    else if (std::memcmp(&blocked[i], &one[i], sizeof(T)) != 0) ++differ;
  }
  INFO("k " << k << " n " << n[0] << "x" << n[1] << "x" << n[2] << " x " << int(kinds.lo[0]) << "/"
            << int(kinds.hi[0]) << " y " << int(kinds.lo[1]) << "/" << int(kinds.hi[1]) << " z "
            << int(kinds.lo[2]) << "/" << int(kinds.hi[2]) << " source field " << source_field
            << " float" << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("GPU temporally blocked heat equals one step at a time, bit for bit", "[gpu]") {
  constexpr BcType D = BcType::Dirichlet, N = BcType::Neumann, P = BcType::Periodic;
  const std::vector<AxisKinds> kinds = {
      {{D, D, D}, {D, D, D}},
      {{N, N, N}, {N, N, N}},
      {{P, P, P}, {P, P, P}},
      {{P, N, D}, {P, D, N}},  // x periodic, y Neumann/Dirichlet, z Dirichlet/Neumann
      {{N, D, P}, {D, N, P}},  // z periodic
  };
  // several tiles in x and y, partial ones; several z chunks (128 planes
  // each); a grid smaller than one tile; a periodic axis shorter than k
  const std::vector<std::vector<std::int64_t>> shapes = {
      {37, 29, 23}, {70, 33, 150}, {5, 4, 3}, {36, 11, 19}};
  for (int k : {2, 3, 4})
    for (const auto& kind : kinds)
      for (const auto& n : shapes)
        for (bool src : {false, true}) {
          compare_time_block<float>(k, n, kind, src);
          compare_time_block<double>(k, n, kind, src);
        }
  // the CPU reference takes one step per pass, whatever is asked
  auto cpu = make_cpu_backend<float>();
  HeatArgs<float> a;
  a.ndim = 3;
  a.n[0] = a.n[1] = a.n[2] = 32;
  CHECK(cpu->heat_time_block(a, 2) == 1);
  CHECK(cpu->heat_time_block(a, 0) == 1);
}

TEST_CASE("GPU temporally blocked heat without walls equals one step at a time", "[gpu]") {
  // blocks clear of every x and y face (the kernel's path without the wall
  // rules; float64 tiles are 64 wide), planes on the z walls and between
  constexpr BcType D = BcType::Dirichlet, N = BcType::Neumann, P = BcType::Periodic;
  const std::vector<AxisKinds> kinds = {{{D, N, P}, {N, D, P}}, {{P, P, N}, {P, P, D}}};
  for (int k : {2, 3, 4})
    for (const auto& kind : kinds) {
      compare_time_block<float>(k, {100, 90, 300}, kind, k == 2);
      compare_time_block<double>(k, {150, 90, 140}, kind, k == 4);
      // the vectorised pass (nx a multiple of 4): several wall-free tiles of
      // 64 columns and rows in each direction
      compare_time_block<float>(k, {200, 140, 150}, kind, k != 2);
      compare_time_block<double>(k, {200, 140, 150}, kind, k == 3);
    }
}
