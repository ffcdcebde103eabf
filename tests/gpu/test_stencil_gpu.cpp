// The CUDA stencil executor against the CPU reference on random fields and
// random stencils up to radius 4: poisoned outputs, odd sizes, 1D/2D/3D, both
// precisions, every boundary type, update and replace.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "kernels/backend.hpp"
#include "kernels/device.hpp"
#include "kernels/stencil/stencil_exec.hpp"
#include "tests/unit/heat_test_util.hpp"
#include "tests/unit/stencil_test_util.hpp"

using namespace gf;

namespace {

// Runs `taps` (offsets d set, weights w set) on both backends from the same
// random field and compares: lo and hi are the boundary kinds of every axis.
template <class T>
void compare_taps(int ndim, std::vector<std::int64_t> n, std::vector<StencilTap<T>> taps,
                  BcType lo, BcType hi, bool update, int steps, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  StencilArgs<T> a;
  a.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.bc[ax] = AxisBc<T>{lo, hi, static_cast<T>(0.1 * d(rng)), static_cast<T>(0.1 * d(rng))};
  }
  int r = 0;
  for (auto& t : taps)
    for (int ax = 0; ax < 3; ++ax) r = std::max(r, std::abs(t.d[ax]));
  const int ntaps = int(taps.size());
  a.ntaps = ntaps;
  a.radius = r;
  a.update = update;
  a.coeff = static_cast<T>(0.3);
  const Grid g = test::grid_of(ndim, n.data());
  const std::size_t np = static_cast<std::size_t>(g.size());
  std::vector<T> u0(np);
  for (auto& x : u0) x = static_cast<T>(d(rng));
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());

  auto run = [&](Backend<T>& be) {
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v");
    be.upload(u0.data(), u);
    be.upload(poison.data(), v);
    auto exec = make_stencil_exec(be);
    exec->set_taps(taps);
    for (int s = 0; s < steps; ++s) {
      exec->step(a, u, v);
      u.swap(v);
    }
    std::vector<T> out(np);
    be.download(u, out.data());
    return out;
  };
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  const auto c = run(*cpu);
  const auto gg = run(*gpu);
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-13;
  std::size_t bad = 0, unwritten = 0;
  for (std::size_t i = 0; i < np; ++i) {
    if (std::isnan(double(gg[i]))) ++unwritten;
    else if (std::fabs(double(gg[i]) - double(c[i])) > tol * (1 + std::fabs(double(c[i])))) ++bad;
  }
  INFO("ndim " << ndim << " n " << n[0] << " radius " << r << " taps " << ntaps << " bc "
               << int(lo) << "/" << int(hi) << (update ? " update" : " replace") << " float"
               << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(bad == 0);
}

// A random stencil of ntaps distinct offsets within the radius.
template <class T>
void compare(int ndim, std::vector<std::int64_t> n, int radius, int ntaps, BcType bc, bool update,
             int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::uniform_int_distribution<int> off(-radius, radius);
  // at most every offset of the radius box, or the draw below never ends
  int box = 1;
  for (int ax = 0; ax < ndim; ++ax) box *= 2 * radius + 1;
  ntaps = std::min(ntaps, box);
  std::vector<StencilTap<T>> taps;
  std::set<std::vector<int>> seen;
  while (int(taps.size()) < ntaps) {
    StencilTap<T> t{};
    for (int ax = 0; ax < ndim; ++ax) t.d[ax] = off(rng);
    if (!seen.insert({t.d[0], t.d[1], t.d[2]}).second) continue;
    t.w = static_cast<T>(d(rng) / ntaps);
    taps.push_back(t);
  }
  compare_taps<T>(ndim, n, taps, bc, bc, update, steps, rng);
}

}  // namespace

TEST_CASE("GPU stencils equal the CPU reference on random fields and stencils", "[gpu]") {
  std::uint64_t seed = 1;
  for (BcType bc : {BcType::Dirichlet, BcType::Neumann, BcType::Periodic}) {
    for (int radius : {1, 2, 4}) {
      for (bool update : {true, false}) {
        compare<double>(1, {203}, radius, 5, bc, update, 3, ++seed);
        compare<float>(1, {203}, radius, 5, bc, update, 3, ++seed);
        compare<double>(2, {45, 37}, radius, 9, bc, update, 2, ++seed);
        compare<float>(2, {45, 37}, radius, 9, bc, update, 2, ++seed);
        compare<double>(3, {21, 19, 17}, radius, 12, bc, update, 2, ++seed);
        compare<float>(3, {21, 19, 17}, radius, 12, bc, update, 2, ++seed);
      }
    }
  }
  // the widest: every offset of a radius-4 box in 2D (81 taps)
  compare<double>(2, {33, 29}, 4, 81, BcType::Neumann, true, 2, ++seed);
}

TEST_CASE("GPU stencils on grids of several tiles and z chunks", "[gpu]") {
  // The tiled kernels own 32-wide tiles of 16 or 32 rows and march 32 planes
  // per block: these sizes give partial tiles on every axis, several blocks
  // per axis and planes beyond the first chunk, for every radius.
  std::uint64_t seed = 1000;
  for (int radius : {1, 2, 3, 4}) {
    compare<float>(3, {75, 41, 83}, radius, 27, BcType::Periodic, true, 2, ++seed);
    compare<double>(3, {67, 50, 71}, radius, 13, BcType::Dirichlet, false, 2, ++seed);
    compare<float>(2, {131, 99}, radius, 25, BcType::Neumann, true, 3, ++seed);
    compare<double>(2, {97, 140}, radius, 9, BcType::Periodic, false, 3, ++seed);
  }
  // a full radius-4 box in 3D (729 taps), the constant bank's limit
  compare<double>(3, {45, 39, 41}, 4, 729, BcType::Neumann, true, 1, ++seed);
}

TEST_CASE("GPU star and box stencils of the presets' shape (the marches) equal the CPU", "[gpu]") {
  // rows of whole 16-byte vectors (nx % 4 == 0) take the marches; several
  // blocks and z chunks; every boundary kind, mixed lo/hi; and one row length
  // that does not divide, for the fallback.
  std::mt19937_64 rng(77);
  const std::vector<std::pair<BcType, BcType>> bcs = {{BcType::Dirichlet, BcType::Dirichlet},
                                                      {BcType::Neumann, BcType::Dirichlet},
                                                      {BcType::Dirichlet, BcType::Neumann},
                                                      {BcType::Periodic, BcType::Periodic}};
  for (auto [lo, hi] : bcs)
    for (bool box : {false, true})
      for (bool update : {true, false}) {
        compare_taps<float>(3, {68, 37, 29}, test::preset_shaped<float>(3, box, rng), lo, hi, update, 3, rng);
        compare_taps<double>(3, {36, 21, 19}, test::preset_shaped<double>(3, box, rng), lo, hi, update, 3, rng);
        compare_taps<float>(3, {4, 3, 3}, test::preset_shaped<float>(3, box, rng), lo, hi, update, 2, rng);
        compare_taps<double>(3, {34, 9, 11}, test::preset_shaped<double>(3, box, rng), lo, hi, update, 2, rng);
        compare_taps<float>(2, {132, 45}, test::preset_shaped<float>(2, box, rng), lo, hi, update, 3, rng);
        compare_taps<double>(2, {266, 40}, test::preset_shaped<double>(2, box, rng), lo, hi, update, 3, rng);
        compare_taps<float>(2, {8, 2}, test::preset_shaped<float>(2, box, rng), lo, hi, update, 2, rng);
        compare_taps<float>(3, {66, 20, 18}, test::preset_shaped<float>(3, box, rng), lo, hi, update, 2, rng);
      }
}

TEST_CASE("GPU temporally blocked star7 and star5 equal one step at a time, bit for bit", "[gpu]") {
  // the heat passes' shapes (3D and 2D): several tiles and z chunks, partial tiles, a grid
  // smaller than one tile, a periodic axis shorter than k; wall-free tiles
  // (nx a multiple of 4: the vectorised pass) and the scalar pass (nx odd)
  const std::vector<std::vector<std::int64_t>> shapes = {
      {37, 29, 23}, {5, 4, 3}, {36, 11, 19}, {200, 140, 150}, {301, 77}, {5, 3}, {600, 90}};
  auto gpu32 = make_cuda_backend<float>(0);
  auto gpu64 = make_cuda_backend<double>(0);
  test::for_each_time_block_case(shapes, [&](int k, const auto& kind, const auto& n, bool replace) {
    if ((n[0] == 200 || n[0] == 600) && replace == (k == 3)) return;  // the large grid: one form each
    test::compare_stencil_time_block<float>(*gpu32, k, n, kind, replace);
    test::compare_stencil_time_block<double>(*gpu64, k, n, kind, replace);
  });
}
