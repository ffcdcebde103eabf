// The CUDA wave executor against the CPU reference on random fields, bit for
// bit (the formula rounds every product on its own: wave_ops.hpp): 1D/2D/3D,
// both precisions, every boundary type with the absorbing one, rows that
// take the vectorised marches and rows that do not, whole and split steps.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/device.hpp"
#include "tests/unit/wave_test_util.hpp"

using namespace gf;

namespace {

template <class T>
void compare_wave(int ndim, std::vector<std::int64_t> n, BcType lo, BcType hi, bool field,
                  bool split) {
  std::mt19937_64 rng(77 + ndim * 5 + int(lo) * 3 + int(hi) + (field ? 11 : 0));
  const WaveArgs<T> a = test::random_wave_args<T>(ndim, lo, hi, rng);
  const Grid g = test::grid_of(ndim, n.data());
  const std::size_t np = static_cast<std::size_t>(g.size());
  const auto w0 = test::random_field<T>(np, rng), u0 = test::random_field<T>(np, rng),
             f = test::random_field<T>(np, rng);
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  const auto c = test::wave_steps<T>(*cpu, a, g, w0, u0, field ? &f : nullptr, 5);
  const auto d = test::wave_steps<T>(*gpu, a, g, w0, u0, field ? &f : nullptr, 5, split);
  std::size_t bad = 0, unwritten = 0;
  for (std::size_t i = 0; i < np; ++i) {
    if (std::isnan(double(d[i]))) ++unwritten;
    else if (d[i] != c[i]) ++bad;
  }
  INFO("ndim " << ndim << " n " << n[0] << " bc " << int(lo) << "/" << int(hi) << " field "
               << field << " split " << split << " float" << 8 * sizeof(T));
  CHECK(unwritten == 0);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("GPU wave step equals the CPU reference bit for bit", "[gpu]") {
  const std::vector<std::pair<BcType, BcType>> bcs = {
      {BcType::Dirichlet, BcType::Dirichlet}, {BcType::Neumann, BcType::Absorbing},
      {BcType::Absorbing, BcType::Absorbing}, {BcType::Absorbing, BcType::Dirichlet},
      {BcType::Periodic, BcType::Periodic}};
  for (auto [lo, hi] : bcs)
    for (bool field : {false, true})
      for (bool split : {false, true}) {
        compare_wave<double>(1, {1001}, lo, hi, field, split);
        compare_wave<float>(1, {1001}, lo, hi, field, split);
        compare_wave<double>(2, {67, 45}, lo, hi, field, split);   // one thread a point
        compare_wave<float>(2, {260, 75}, lo, hi, field, split);   // the 2D march
        compare_wave<double>(2, {266, 76}, lo, hi, field, split);
        compare_wave<double>(3, {37, 29, 23}, lo, hi, field, split);
        compare_wave<float>(3, {36, 11, 19}, lo, hi, field, split);  // the 3D march
        compare_wave<double>(3, {34, 9, 41}, lo, hi, field, split);
      }
}
