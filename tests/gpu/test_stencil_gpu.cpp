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

using namespace gf;

namespace {

template <class T>
void compare(int ndim, std::vector<std::int64_t> n, int radius, int ntaps, BcType bc, bool update,
             int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::uniform_int_distribution<int> off(-radius, radius);
  StencilArgs<T> a;
  a.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.n[ax] = ax < ndim ? n[ax] : 1;
    a.bc[ax] = AxisBc<T>{bc, bc, static_cast<T>(0.1 * d(rng)), static_cast<T>(0.1 * d(rng))};
  }
  // at most every offset of the radius box, or the draw below never ends
  int box = 1;
  for (int ax = 0; ax < ndim; ++ax) box *= 2 * radius + 1;
  ntaps = std::min(ntaps, box);
  std::vector<StencilTap<T>> taps;
  std::set<std::vector<int>> seen;
  int r = 0;
  while (int(taps.size()) < ntaps) {
    StencilTap<T> t{};
    for (int ax = 0; ax < ndim; ++ax) t.d[ax] = off(rng);
    if (!seen.insert({t.d[0], t.d[1], t.d[2]}).second) continue;
    t.w = static_cast<T>(d(rng) / ntaps);
    t.lin = t.d[0] + a.n[0] * (std::int64_t(t.d[1]) + a.n[1] * std::int64_t(t.d[2]));
    for (int ax = 0; ax < 3; ++ax) r = std::max(r, std::abs(t.d[ax]));
    taps.push_back(t);
  }
  a.ntaps = ntaps;
  a.radius = r;
  a.update = update;
  a.coeff = static_cast<T>(0.3);
  Grid g;
  g.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = a.n[ax];
  const std::size_t np = static_cast<std::size_t>(g.size());
  std::vector<T> u0(np);
  for (auto& x : u0) x = static_cast<T>(d(rng));
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());

  auto run = [&](Backend<T>& be) {
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v");
    be.upload(u0.data(), u);
    be.upload(poison.data(), v);
    be.set_stencil_taps(taps);
    for (int s = 0; s < steps; ++s) {
      be.apply_stencil(a, u, v);
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
  INFO("ndim " << ndim << " radius " << radius << " taps " << ntaps << " bc " << int(bc)
               << (update ? " update" : " replace") << " float" << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(bad == 0);
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
