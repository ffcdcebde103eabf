// Random wave arguments and fields, and a few steps of a wave executor on a
// backend with the three levels rotating as the solver rotates them: shared
// by the CPU tests (tests/unit/test_wave.cpp) and the GPU tests
// (tests/gpu/test_wave_gpu.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "kernels/wave/wave_exec.hpp"
#include "tests/unit/heat_test_util.hpp"
#include "tests/unit/random_field.hpp"

namespace gf::test {

// Stable coefficients (Σ k ≤ 0.6 ≤ 1), the boundary pair lo/hi on every
// axis (periodic pairs with periodic only), a source constant or none.
template <class T>
WaveArgs<T> random_wave_args(int ndim, BcType lo, BcType hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(0.02, 0.2);
  WaveArgs<T> a;
  a.ndim = ndim;
  for (int ax = 0; ax < ndim; ++ax) {
    const double k = d(rng);
    a.k[ax] = static_cast<T>(k);
    a.sigma[ax] = static_cast<T>(std::sqrt(k));
    a.bc[ax].lo = lo;
    a.bc[ax].hi = hi;
    a.bc[ax].ghost_lo = static_cast<T>(d(rng));
    a.bc[ax].ghost_hi = static_cast<T>(-d(rng));
  }
  a.s = static_cast<T>(1e-2);
  a.source_const = rng() % 2 ? static_cast<T>(d(rng)) : T(0);
  return a;
}

// `steps` steps of be's wave executor from the levels (w0, u0), the source
// field f when source_field; split: each step as its two parts around a
// core box one point in from every face. Returns the last level.
template <class T>
std::vector<T> wave_steps(Backend<T>& be, const WaveArgs<T>& a0, const Grid& g,
                          const std::vector<T>& w0, const std::vector<T>& u0,
                          const std::vector<T>* f, int steps, bool split = false) {
  auto exec = make_wave_exec(be);
  const std::size_t np = static_cast<std::size_t>(g.size());
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  Field<T> w = be.make_field(g, "w"), u = be.make_field(g, "u"), v = be.make_field(g, "v"),
           s = be.make_field(g, "f");
  be.upload(w0.data(), w);
  be.upload(u0.data(), u);
  WaveArgs<T> a = a0;
  if (f) {
    be.upload(f->data(), s);
    a.source = s.data();
  }
  Box core = Box::whole(g.n.data());
  for (int ax = 0; ax < g.ndim; ++ax) core.lo[ax] = 1, core.hi[ax] = g.n[ax] - 1;
  for (int k = 0; k < steps; ++k) {
    be.upload(poison.data(), v);
    a.w = w.data();
    if (!split || !exec->step_part(a, u, v, core, StepPart::Shell)) {
      exec->step(a, u, v);
    } else {
      REQUIRE(exec->step_part(a, u, v, core, StepPart::Core));
    }
    w.swap(u);
    u.swap(v);
  }
  std::vector<T> out(np);
  be.download(u, out.data());
  return out;
}

}  // namespace gf::test
