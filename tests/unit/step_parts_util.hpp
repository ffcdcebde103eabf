// Steps split in two for the overlapped halo exchange (the executors'
// step_part, jacobi_sweep_part):
// shared by the CPU tests (unit/test_step_parts.cpp) and the GPU ones
// (gpu/test_step_parts_gpu.cpp). On random fields with outputs poisoned
// (NaN): part Shell writes exactly the points outside the core, part Core
// exactly those inside it, and the two together are the whole step bit for
// bit.
#pragma once
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "kernels/stencil/stencil_exec.hpp"

namespace gf::test {

enum class StepKind { Heat, Jacobi, Star, Box, Radius2 };

inline const char* kind_name(StepKind k) {
  switch (k) {
    case StepKind::Heat: return "heat";
    case StepKind::Jacobi: return "jacobi";
    case StepKind::Star: return "star";
    case StepKind::Box: return "box";
    default: return "radius2";
  }
}

// Boundary rules that differ by axis: periodic, Neumann/Dirichlet, Dirichlet/Neumann.
template <class T>
void mixed_bc(AxisBc<T>* bc, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.05, 0.3);
  const BcType lo[3] = {BcType::Periodic, BcType::Neumann, BcType::Dirichlet};
  const BcType hi[3] = {BcType::Periodic, BcType::Dirichlet, BcType::Neumann};
  for (int a = 0; a < 3; ++a) {
    bc[a].lo = lo[a];
    bc[a].hi = hi[a];
    bc[a].ghost_lo = static_cast<T>(d(rng));
    bc[a].ghost_hi = static_cast<T>(-d(rng));
  }
}

// The taps of a star (2D 5, 3D 7 points) or box (3^D) preset in the presets'
// order, or a radius-2 stencil with diagonal taps.
template <class T>
std::vector<StencilTap<T>> test_taps(StepKind k, int ndim) {
  std::vector<std::array<int, 3>> d;
  if (k == StepKind::Star) {
    d.push_back({0, 0, 0});
    for (int a = 0; a < ndim; ++a)
      for (int s : {-1, 1}) {
        std::array<int, 3> o{0, 0, 0};
        o[a] = s;
        d.push_back(o);
      }
  } else if (k == StepKind::Box) {
    for (int dz = ndim == 3 ? -1 : 0; dz <= (ndim == 3 ? 1 : 0); ++dz)
      for (int dy = ndim >= 2 ? -1 : 0; dy <= (ndim >= 2 ? 1 : 0); ++dy)
        for (int dx = -1; dx <= 1; ++dx) d.push_back({dx, dy, dz});
  } else {
    d = {{0, 0, 0}, {2, 0, 0}, {-1, 0, 0}};
    if (ndim >= 2) d.insert(d.end(), {{1, -2, 0}, {-2, 1, 0}});
    if (ndim == 3) d.insert(d.end(), {{0, 1, 2}, {-1, -1, -2}});
  }
  std::vector<StencilTap<T>> taps;
  for (std::size_t t = 0; t < d.size(); ++t) {
    StencilTap<T> tap;
    for (int a = 0; a < 3; ++a) tap.d[a] = d[t][a];
    tap.w = static_cast<T>(t == 0 ? -0.5 : 0.1 + 0.05 * double(t));
    taps.push_back(tap);
  }
  return taps;
}

// Runs one step of kind k on backend `be` (its executor for the kind) from u0: the whole step into
// `whole`, the two parts around `core` into `parts`, Shell alone into
// `shell` and Core alone into `core_only` (outputs poisoned first). Returns
// false when the backend does not split the step (then it must not have
// written anything).
template <class T>
bool run_parts(Backend<T>& be, StepKind k, int ndim, const std::int64_t* n, const Box& core,
               std::uint64_t seed, std::vector<T>& whole, std::vector<T>& parts,
               std::vector<T>& shell, std::vector<T>& core_only) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  Grid g;
  g.ndim = ndim;
  for (int a = 0; a < 3; ++a) g.n[a] = a < ndim ? n[a] : 1;
  const std::size_t np = std::size_t(g.size());
  std::vector<T> u0(np), s0(np);
  for (auto& x : u0) x = static_cast<T>(d(rng));
  for (auto& x : s0) x = static_cast<T>(d(rng));
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v"), s = be.make_field(g, "s");
  be.upload(u0.data(), u);
  be.upload(s0.data(), s);

  HeatArgs<T> ha;
  LaplaceArgs<T> la;
  StencilArgs<T> sa;
  ha.ndim = la.ndim = sa.ndim = ndim;
  mixed_bc(ha.bc, rng);
  for (int a = 0; a < 3; ++a) la.bc[a] = sa.bc[a] = ha.bc[a];
  for (int a = 0; a < ndim; ++a) {
    ha.c[a] = static_cast<T>(0.05 + 0.03 * a);
    la.ih2[a] = static_cast<T>(1.0 + 0.5 * a);
    la.diag += 2 * la.ih2[a];
  }
  la.inv_diag = T(1) / la.diag;
  ha.dt = static_cast<T>(1e-3);
  ha.source = s.data();  // a field: read at every point
  la.f = s.data();
  std::unique_ptr<HeatExec<T>> heat;
  std::unique_ptr<LaplaceExec<T>> laplace;
  std::unique_ptr<StencilExec<T>> stencil;
  if (k == StepKind::Heat) heat = make_heat_exec(be);
  else if (k == StepKind::Jacobi) laplace = make_laplace_exec(be);
  else stencil = make_stencil_exec(be);
  if (k == StepKind::Star || k == StepKind::Box || k == StepKind::Radius2) {
    const auto taps = test_taps<T>(k, ndim);
    stencil->set_taps(taps);
    sa.ntaps = int(taps.size());
    sa.radius = k == StepKind::Radius2 ? 2 : 1;
    sa.coeff = static_cast<T>(0.3);
  }
  auto step = [&](StepPart* part) {
    switch (k) {
      case StepKind::Heat:
        if (!part) return heat->step(ha, u, v), true;
        return heat->step_part(ha, u, v, core, *part);
      case StepKind::Jacobi:
        if (!part) return laplace->jacobi_sweep(la, u, v), true;
        return laplace->jacobi_sweep_part(la, u, v, core, *part);
      default:
        if (!part) return stencil->step(sa, u, v), true;
        return stencil->step_part(sa, u, v, core, *part);
    }
  };
  auto result = [&](std::vector<T>& out) {
    out.resize(np);
    be.download(v, out.data());
  };
  be.upload(poison.data(), v);
  step(nullptr);
  result(whole);

  StepPart sh = StepPart::Shell, co = StepPart::Core;
  be.upload(poison.data(), v);
  const bool split = step(&sh);
  if (!split) {  // nothing written
    result(parts);
    for (std::size_t i = 0; i < np; ++i)
      if (!std::isnan(double(parts[i]))) FAIL("a part that is not split wrote point " << i);
    return false;
  }
  REQUIRE(step(&co));
  result(parts);
  be.upload(poison.data(), v);
  REQUIRE(step(&sh));
  result(shell);
  be.upload(poison.data(), v);
  REQUIRE(step(&co));
  result(core_only);
  return true;
}

inline bool in_box(const Box& b, std::int64_t i, std::int64_t j, std::int64_t k) {
  return i >= b.lo[0] && i < b.hi[0] && j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] &&
         k < b.hi[2];
}

// The checks on run_parts' results; `split_expected`: whether the backend
// must split this step.
template <class T>
void check_parts(Backend<T>& be, StepKind k, int ndim, std::vector<std::int64_t> n, Box core,
                 bool split_expected) {
  const std::uint64_t seed = 77 + std::uint64_t(k) * 13 + std::uint64_t(ndim) * 1009 +
                             std::uint64_t(core.lo[0] + 3 * core.lo[1] + 7 * core.lo[2]);
  std::vector<T> whole, parts, shell, core_only;
  INFO(be.name() << " " << kind_name(k) << " ndim " << ndim << " n " << n[0] << " "
                 << (ndim > 1 ? n[1] : 1) << " " << (ndim > 2 ? n[2] : 1) << " core ["
                 << core.lo[0] << "," << core.lo[1] << "," << core.lo[2] << ") to ["
                 << core.hi[0] << "," << core.hi[1] << "," << core.hi[2] << ") float"
                 << 8 * sizeof(T));
  const bool split = run_parts(be, k, ndim, n.data(), core, seed, whole, parts, shell, core_only);
  REQUIRE(split == split_expected);
  if (!split) return;
  const std::int64_t nx = n[0], ny = ndim > 1 ? n[1] : 1, nz = ndim > 2 ? n[2] : 1;
  std::size_t unwritten = 0, differ = 0, shell_wrong = 0, core_wrong = 0;
  for (std::int64_t kk = 0; kk < nz; ++kk)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::size_t q = std::size_t(i + nx * (j + ny * kk));
        const bool inside = in_box(core, i, j, kk);
        if (std::isnan(double(whole[q])) || std::isnan(double(parts[q]))) ++unwritten;
        else if (std::memcmp(&whole[q], &parts[q], sizeof(T)) != 0) ++differ;
        if (std::isnan(double(shell[q])) != inside) ++shell_wrong;
        if (std::isnan(double(core_only[q])) == inside) ++core_wrong;
      }
  CHECK(unwritten == 0);
  CHECK(differ == 0);
  CHECK(shell_wrong == 0);
  CHECK(core_wrong == 0);
}

// A core box from per-axis [lo, hi) (missing axes {0, 1}).
inline Box make_box(std::array<std::int64_t, 3> lo, std::array<std::int64_t, 3> hi) {
  Box b;
  b.lo = lo;
  b.hi = hi;
  return b;
}

}  // namespace gf::test
