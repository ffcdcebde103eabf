// The GPU's row layout (Layout::aligned_rows): which grids get padded rows,
// how wide, that every point keeps its place in a padded view, and the
// shell of face points the multigrid kernels enumerate.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "grid/view.hpp"
#include "kernels/device.hpp"

using namespace gf;

TEST_CASE("aligned_rows pads rows to whole vectors and cache lines, never planes", "[layout]") {
  const auto rows = [](std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t elem) {
    const std::int64_t n[3] = {nx, ny, nz};
    return Layout::aligned_rows(n, elem, 128);
  };
  // wide rows: a whole cache line (32 floats, 16 doubles)
  CHECK(rows(513, 513, 513, 4).sy == 544);
  CHECK(rows(511, 7, 3, 4).sy == 512);
  CHECK(rows(16385, 16385, 1, 4).sy == 16416);
  CHECK(rows(257, 9, 9, 8).sy == 272);
  // narrow rows (under 8 lines): one 16-byte vector
  CHECK(rows(33, 17, 9, 4).sy == 36);
  CHECK(rows(37, 3, 3, 8).sy == 38);
  CHECK(rows(5, 6, 7, 4).sy == 8);
  // planes follow rows: sz = sy·ny
  const Layout l = rows(513, 7, 5, 4);
  CHECK(l.sz == l.sy * 7);
  CHECK(l.span() == l.sy * 7 * 5);
  CHECK(!l.is_dense());
  // already aligned, one row (1D), or alignment off: dense
  CHECK(rows(512, 512, 512, 4).is_dense());
  CHECK(rows(64, 3, 3, 4).is_dense());
  CHECK(rows(1001, 1, 1, 4).is_dense());
  CHECK(rows(36, 11, 19, 4).is_dense());
  const std::int64_t n[3] = {513, 5, 5};
  CHECK(Layout::aligned_rows(n, 4, 0).is_dense());
  // at most an eighth more memory
  for (std::int64_t nx : {33, 127, 129, 255, 257, 300, 511, 513, 1023, 1025, 4097})
    for (std::int64_t e : {4, 8}) {
      const Layout p = rows(nx, 3, 3, e);
      CHECK(p.sy >= nx);
      CHECK((p.sy * e) % 16 == 0);
      CHECK(double(p.sy) <= 1.125 * double(nx) + 4);
    }
}

TEST_CASE("a padded view keeps every point's place: index, locate and point order", "[layout]") {
  const std::int64_t n[3] = {37, 5, 3};
  const Layout l = Layout::aligned_rows(n, 4, 128);
  REQUIRE(l.sy == 40);
  std::set<std::int64_t> seen;
  for (std::int64_t q = 0; q < l.size(); ++q) {
    std::int64_t i, j, k;
    l.position(q, i, j, k);
    const std::int64_t idx = l.index_of_point(q);
    CHECK(idx == l.index(i, j, k));
    std::int64_t a, b, c;
    l.locate(idx, a, b, c);
    CHECK((a == i && b == j && c == k));
    CHECK(idx < l.span());
    seen.insert(idx);
  }
  CHECK(std::int64_t(seen.size()) == l.size());  // no two points share a value
}

TEST_CASE("the shell of a grid: every point on a face once, none off them", "[layout]") {
  const std::int64_t sizes[][3] = {{3, 1, 1}, {7, 1, 1},  {3, 3, 1},   {9, 4, 1},
                                   {3, 3, 3}, {5, 4, 3},  {7, 9, 11},  {17, 3, 6}};
  for (const auto& s : sizes) {
    const int d = s[2] > 1 ? 3 : s[1] > 1 ? 2 : 1;
    const Layout l = Layout::padded(s, 8);
    INFO("grid " << s[0] << "x" << s[1] << "x" << s[2] << ", " << d << "D");
    std::int64_t inner = 1;
    for (int a = 0; a < d; ++a) inner *= s[a] - 2;
    REQUIRE(l.shell_count(d) == l.size() - inner);
    std::vector<int> seen(std::size_t(l.span()), 0);
    for (std::int64_t q = 0; q < l.shell_count(d); ++q) {
      std::int64_t i, j, k;
      l.shell_point(d, q, i, j, k);
      REQUIRE(i >= 0);
      REQUIRE(i < s[0]);
      REQUIRE(j >= 0);
      REQUIRE(j < s[1]);
      REQUIRE(k >= 0);
      REQUIRE(k < s[2]);
      const bool on_face = i == 0 || i == s[0] - 1 || (d > 1 && (j == 0 || j == s[1] - 1)) ||
                           (d > 2 && (k == 0 || k == s[2] - 1));
      CHECK(on_face);
      CHECK(++seen[std::size_t(l.index(i, j, k))] == 1);
    }
  }
}

// Issue 21: which way a one-step march goes (march_down; march_block in
// kernels/cuda/march_kernels.cuh) is decided by the two fields' addresses
// alone, so the steps of a run that swaps them alternate, and a step
// replayed from a CUDA graph goes the same way. (That the values are the
// same either way is the [gpu] tests' business: their runs take both.)
TEST_CASE("march_down: out of the lower field into the higher goes down, back goes up",
          "[layout]") {
  const std::vector<float> f(8);
  const float* lo = f.data();
  const float* hi = f.data() + 4;
  if (!gpu_march_alternate()) {  // GRIDFORGE_MARCH_ORDER=0: always up
    REQUIRE_FALSE(march_down(lo, hi));
    REQUIRE_FALSE(march_down(hi, lo));
    return;
  }
  REQUIRE(march_down(lo, hi));  // out of the lower address into the higher
  REQUIRE_FALSE(march_down(hi, lo));
  REQUIRE_FALSE(march_down(lo, lo));
}
