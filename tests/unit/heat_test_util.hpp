// Random heat arguments and fields, and the temporal-blocking comparison,
// shared by the CPU tests (tests/unit/test_heat.cpp) and the GPU tests
// (tests/gpu/test_heat_gpu.cpp).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/unit/random_field.hpp"

namespace gf::test {

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

struct AxisKinds {
  BcType lo[3], hi[3];
};

// k steps in one temporally blocked pass of `be`, twice, against 2k single
// steps of `be`: equal bit for bit (same formula, same neighbours, same
// order), and every point written.
template <class T>
void compare_time_block(Backend<T>& be, int k, std::vector<std::int64_t> n, const AxisKinds& kinds,
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
  REQUIRE(be.heat_time_block(a, k) == k);
  auto run = [&](bool blocked) {
    Field<T> u = be.make_field(g, "u"), v = be.make_field(g, "v"), s = be.make_field(g, "s");
    be.upload(u0.data(), u);
    be.upload(s0.data(), s);
    HeatArgs<T> args = a;
    if (source_field) args.source = s.data();
    for (int pass = 0; pass < 2; ++pass) {
      be.upload(poison.data(), v);
      if (blocked) {
        be.heat_steps(args, k, u, v);
        u.swap(v);
      } else {
        for (int i = 0; i < k; ++i) {
          be.heat_step(args, u, v);
          u.swap(v);
        }
      }
    }
    std::vector<T> out(np);
    be.download(u, out.data());
    return out;
  };
  const auto one = run(false);
  const auto blocked = run(true);
  std::size_t unwritten = 0, differ = 0;
  for (std::size_t i = 0; i < np; ++i) {
    if (std::isnan(double(blocked[i]))) ++unwritten;
    else if (std::memcmp(&blocked[i], &one[i], sizeof(T)) != 0) ++differ;
  }
  INFO(be.name() << " k " << k << " n " << n[0] << "x" << n[1] << "x" << n[2] << " x "
                 << int(kinds.lo[0]) << "/" << int(kinds.hi[0]) << " y " << int(kinds.lo[1]) << "/"
                 << int(kinds.hi[1]) << " z " << int(kinds.lo[2]) << "/" << int(kinds.hi[2])
                 << " source field " << source_field << " float" << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(differ == 0);
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
  };
}

}  // namespace gf::test
