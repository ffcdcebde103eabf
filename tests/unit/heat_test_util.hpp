// Random heat arguments and fields, and the temporal-blocking comparisons
// (heat, the 3D star stencil and Jacobi), shared by the CPU tests
// (tests/unit/test_heat.cpp, test_stencil.cpp, test_laplace.cpp) and the GPU
// tests (tests/gpu/test_heat_gpu.cpp, test_stencil_gpu.cpp, test_laplace_gpu.cpp).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "kernels/stencil/stencil_exec.hpp"
#include "tests/unit/random_field.hpp"

namespace gf::test {

// (the grid's extents come with the fields: grid_of)
template <class T>
HeatArgs<T> random_args(int ndim, BcType lo, BcType hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.01, 0.15);  // stable: Σc ≤ 0.45
  HeatArgs<T> a;
  a.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) {
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
  // both forms of the formula (heat_form): the same c on every axis half of
  // the time, and no source a third of the time
  if (rng() % 2)
    for (int ax = 1; ax < ndim; ++ax) a.c[ax] = a.c[0];
  if (rng() % 3 == 0) a.source_const = 0;
  return a;
}

struct AxisKinds {
  BcType lo[3], hi[3];  // per axis; a 2D grid takes x and y
};

// A grid of n[0..ndim) points per axis (1 on the missing axes).
inline Grid grid_of(int ndim, const std::int64_t* n) {
  Grid g;
  g.ndim = ndim;
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = ax < ndim ? n[ax] : 1;
  return g;
}

// k steps in one temporally blocked pass of `be`, twice, against 2k single
// steps of `be`: equal bit for bit (same formula, same neighbours, same
// order), and every point written. single(u, v) and blocked(u, v) take one
// step and one pass from u into v; `what` says which case failed.
template <class T, class Single, class Blocked>
void compare_passes(Backend<T>& be, int k, const Grid& g, const std::vector<T>& u0,
                    const std::string& what, Single single, Blocked blocked) {
  const std::size_t np = static_cast<std::size_t>(g.size());
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  auto run = [&](bool blocks) {
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v");
    be.upload(u0.data(), u);
    for (int pass = 0; pass < 2; ++pass) {
      be.upload(poison.data(), v);
      if (blocks) {
        blocked(u, v);
        u.swap(v);
      } else {
        for (int i = 0; i < k; ++i) {
          single(u, v);
          u.swap(v);
        }
      }
    }
    std::vector<T> out(np);
    be.download(u, out.data());
    return out;
  };
  const auto one = run(false);
  const auto many = run(true);
  std::size_t unwritten = 0, differ = 0;
  for (std::size_t i = 0; i < np; ++i) {
    if (std::isnan(double(many[i]))) ++unwritten;
    else if (std::memcmp(&many[i], &one[i], sizeof(T)) != 0) ++differ;
  }
  INFO(be.name() << " " << what << " k " << k << " n " << g.n[0] << "x" << g.n[1] << "x" << g.n[2]
                 << " float" << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(differ == 0);
}

inline std::string kinds_text(const AxisKinds& kinds) {
  std::string s;
  for (int ax = 0; ax < 3; ++ax)
    s += std::string(" ") + "xyz"[ax] + " " + std::to_string(int(kinds.lo[ax])) + "/" +
         std::to_string(int(kinds.hi[ax]));
  return s;
}

template <class T>
void compare_time_block_form(Backend<T>& be, int k, std::vector<std::int64_t> n,
                             const AxisKinds& kinds, bool source_field, bool iso) {
  std::mt19937_64 rng(4321 + k * 131 + n[0] * 7 + n.back() + int(kinds.lo[0]) * 5 +
                      int(kinds.hi[2]) * 3 + source_field);
  const int nd = int(n.size());
  HeatArgs<T> a = random_args<T>(nd, BcType::Dirichlet, BcType::Dirichlet, rng);
  for (int ax = 0; ax < nd; ++ax) {
    a.bc[ax].lo = kinds.lo[ax];
    a.bc[ax].hi = kinds.hi[ax];
  }
  if (iso)
    for (int ax = 1; ax < nd; ++ax) a.c[ax] = a.c[0];
  else if (a.c[1] == a.c[0])
    a.c[1] = a.c[0] * T(1.5);
  if (iso && !source_field) a.source_const = 0;
  REQUIRE((nd == 2 ? heat_form<2>(a) : heat_form<3>(a)).iso == iso);
  const Grid g = grid_of(a.ndim, n.data());
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto u0 = random_field<T>(np, rng);
  const auto s0 = random_field<T>(np, rng);
  auto exec = make_heat_exec(be);
  Field<T> s = be.make_field(g, "s");
  REQUIRE(exec->time_block(a, s.layout(), k) == k);
  be.upload(s0.data(), s);
  if (source_field) a.source = s.data();
  compare_passes<T>(
      be, k, g, u0,
      "heat" + kinds_text(kinds) + (source_field ? " source field" : "") + (iso ? " isotropic" : ""),
      [&](Field<T>& u, Field<T>& v) { exec->step(a, u, v); },
      [&](Field<T>& u, Field<T>& v) { exec->steps(a, k, u, v); });
}

// Heat: HeatExec::steps against HeatExec::step, in both forms of the formula (heat_form):
// the same c on every axis or not; with a source field, or else, isotropic,
// without a source (the passes' compiled-in form) and, anisotropic, with a
// constant one.
template <class T>
void compare_time_block(Backend<T>& be, int k, std::vector<std::int64_t> n, const AxisKinds& kinds,
                        bool source_field) {
  for (bool iso : {false, true})
    compare_time_block_form<T>(be, k, n, kinds, source_field, iso);
}

// A star of radius 1 in the presets' order (star5 in 2D, star7 in 3D) with random weights: update
// (centre weight −Σ of the others, a random coeff) or replace (a convex
// average): StencilExec::steps against StencilExec::step.
template <class T>
void compare_stencil_time_block(Backend<T>& be, int k, std::vector<std::int64_t> n,
                                const AxisKinds& kinds, bool replace) {
  std::mt19937_64 rng(977 + k * 31 + n[0] * 5 + n[1] + int(kinds.lo[1]) * 7 + replace);
  const int nd = int(n.size()), ntaps = 2 * nd + 1;
  const HeatArgs<T> h = random_args<T>(nd, BcType::Dirichlet, BcType::Dirichlet, rng);
  const Grid g = grid_of(nd, n.data());
  StencilArgs<T> a;
  a.ndim = nd;
  for (int ax = 0; ax < 3; ++ax) {
    a.bc[ax] = h.bc[ax];  // the ghosts
    if (ax >= nd) continue;
    a.bc[ax].lo = kinds.lo[ax];
    a.bc[ax].hi = kinds.hi[ax];
  }
  a.ntaps = ntaps;
  a.radius = 1;
  a.update = !replace;
  std::uniform_real_distribution<double> d(0.02, 0.3);
  a.coeff = static_cast<T>(d(rng));
  const int off[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  std::vector<StencilTap<T>> taps(static_cast<std::size_t>(ntaps));
  double others = 0;
  for (int t = ntaps - 1; t >= 0; --t) {
    StencilTap<T>& tp = taps[std::size_t(t)];
    for (int ax = 0; ax < 3; ++ax) tp.d[ax] = off[t][ax];
    const double w = t > 0 ? d(rng) : (replace ? 1.0 - others : -others);
    tp.w = static_cast<T>(w);
    others += w;
  }
  auto exec = make_stencil_exec(be);
  exec->set_taps(taps);
  REQUIRE(exec->time_block(a, g.layout(), k) == k);
  const auto u0 = random_field<T>(static_cast<std::size_t>(g.size()), rng);
  compare_passes<T>(
      be, k, g, u0, std::string(nd == 2 ? "star5 " : "star7 ") + (replace ? "replace" : "update") + kinds_text(kinds),
      [&](Field<T>& u, Field<T>& v) { exec->step(a, u, v); },
      [&](Field<T>& u, Field<T>& v) { exec->steps(a, k, u, v); });
}

// Jacobi with random spacings (1/h² apart on each axis), Neumann gradients
// and right-hand side, a field, a constant or 0: LaplaceExec::jacobi_steps
// against LaplaceExec::jacobi_sweep.
template <class T>
void compare_jacobi_time_block(Backend<T>& be, int k, std::vector<std::int64_t> n,
                               const AxisKinds& kinds, bool rhs_field) {
  std::mt19937_64 rng(555 + k * 17 + n[0] * 3 + n.back() + int(kinds.hi[0]) * 11 + rhs_field);
  const int nd = int(n.size());
  const HeatArgs<T> h = random_args<T>(nd, BcType::Dirichlet, BcType::Dirichlet, rng);
  const Grid g = grid_of(nd, n.data());
  std::uniform_real_distribution<double> d(0.5, 2.0);
  LaplaceArgs<T> a;
  a.ndim = nd;
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    if (ax >= nd) continue;
    const double ih2 = d(rng);
    a.ih2[ax] = static_cast<T>(ih2);
    diag += 2 * ih2;
    a.bc[ax] = h.bc[ax];  // the ghosts
    a.bc[ax].lo = kinds.lo[ax];
    a.bc[ax].hi = kinds.hi[ax];
  }
  a.diag = static_cast<T>(diag);
  a.inv_diag = static_cast<T>(1.0 / diag);
  a.f_const = static_cast<T>(d(rng) - 1.25);
  // without a field, f = 0 for even k (Laplace's equation: the passes that load no source)
  const bool zero = !rhs_field && k % 2 == 0;
  if (zero) a.f_const = T(0);
  auto exec = make_laplace_exec(be);
  REQUIRE(exec->jacobi_time_block(a, g.layout(), k) == k);
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto u0 = random_field<T>(np, rng);
  const auto f0 = random_field<T>(np, rng);
  Field<T> f = be.make_field(g, "f");
  be.upload(f0.data(), f);
  if (rhs_field) a.f = f.data();
  compare_passes<T>(
      be, k, g, u0,
      std::string("jacobi") + kinds_text(kinds) + (rhs_field ? " f field" : zero ? " f 0" : ""),
      [&](Field<T>& u, Field<T>& v) { exec->jacobi_sweep(a, u, v); },
      [&](Field<T>& u, Field<T>& v) { exec->jacobi_steps(a, k, u, v); });
}

// The boundary mixes the blocked passes are tested over.
inline std::vector<AxisKinds> time_block_kinds() {
  constexpr BcType D = BcType::Dirichlet, N = BcType::Neumann, P = BcType::Periodic;
  return {
      {{D, D, D}, {D, D, D}},
      {{N, N, N}, {N, N, N}},
      {{P, P, P}, {P, P, P}},
      {{P, N, D}, {P, D, N}},  // x periodic, y Neumann/Dirichlet, z Dirichlet/Neumann
      {{N, D, P}, {D, N, P}},  // z periodic
      {{D, P, N}, {N, P, D}},  // y periodic between x walls
  };
}

// fn(k, kind, n, flag) for k = 2 to 4, every boundary mix of
// time_block_kinds(), every shape (2 or 3 sizes: a 2D or 3D grid; a 2D one
// takes the mix's x and y), and flag false and true (heat: a source
// field; star7: the replace form): the loops of the bit-for-bit tests.
template <class F>
void for_each_time_block_case(const std::vector<std::vector<std::int64_t>>& shapes, F&& fn) {
  for (int k : {2, 3, 4})
    for (const auto& kind : time_block_kinds())
      for (const auto& n : shapes)
        for (bool flag : {false, true}) fn(k, kind, n, flag);
}

}  // namespace gf::test
