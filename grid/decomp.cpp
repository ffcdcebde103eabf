#include "grid/decomp.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace gf {

std::array<int, 3> choose_rank_dims(const Grid& g, int nranks, int halo) {
  std::array<int, 3> best{0, 0, 0};
  double best_cut = std::numeric_limits<double>::infinity();
  const int w = std::max(halo, 1);
  auto fits = [&](int a, int p) { return p == 1 || (a < g.ndim && g.n[a] / p >= w); };
  // z outermost and ascending: on equal cuts the first found splits z most.
  for (int pz = nranks; pz >= 1; --pz) {
    if (nranks % pz || !fits(2, pz)) continue;
    for (int py = nranks / pz; py >= 1; --py) {
      if ((nranks / pz) % py || !fits(1, py)) continue;
      const int px = nranks / pz / py;
      if (!fits(0, px)) continue;
      const std::array<int, 3> p{px, py, pz};
      double cut = 0;  // points on the faces between blocks
      for (int a = 0; a < 3; ++a)
        if (p[a] > 1) cut += double(p[a] - (g.periodic[a] ? 0 : 1)) * double(g.size() / g.n[a]);
      if (cut < best_cut) best_cut = cut, best = p;
    }
  }
  return best;
}

}  // namespace gf
