// Random values in [−1, 1) for the tests that compare executors on random
// fields (CPU and GPU tests alike).
#pragma once
#include <random>
#include <vector>

namespace gf::test {

template <class T>
std::vector<T> random_field(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

}  // namespace gf::test
