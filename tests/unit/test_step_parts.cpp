// The overlapped halo exchange's pieces without MPI: the shell boxes around a
// core, the core a rank's block gets, when the overlap is taken, the
// GRIDFORGE_HALO_OVERLAP switch, and the CPU executors' split steps (heat,
// Jacobi, stencils: the shell and the core together bit for bit the whole
// step, each part writing only its own points).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

#include "core/error.hpp"
#include "grid/decomp.hpp"
#include "kernels/dist/dist_backend.hpp"
#include "kernels/backend.hpp"
#include "step_parts_util.hpp"

using namespace gf;
using gf::test::make_box;
using gf::test::StepKind;

namespace {

// How many of the boxes hold each point of `outer`.
std::vector<int> cover(const Box& outer, const std::vector<Box>& boxes) {
  const std::int64_t nx = outer.hi[0], ny = outer.hi[1], nz = outer.hi[2];
  std::vector<int> c(std::size_t(nx * ny * nz), 0);
  for (const Box& b : boxes)
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) ++c[std::size_t(i + nx * (j + ny * k))];
  return c;
}

}  // namespace

TEST_CASE("shell_boxes cover the points outside the core exactly once", "[step_parts]") {
  const Box outer = make_box({0, 0, 0}, {9, 7, 6});
  const std::vector<Box> cores = {
      make_box({2, 1, 1}, {7, 5, 4}),    // inside, off every face
      make_box({0, 0, 2}, {9, 7, 4}),    // a z split: two slabs
      make_box({0, 2, 0}, {9, 5, 6}),    // a y split
      make_box({3, 0, 0}, {9, 7, 6}),    // touching three faces
      make_box({4, 3, 2}, {4, 6, 5}),    // empty: the whole box is shell
      make_box({-3, -1, 0}, {20, 9, 6}),  // beyond outer: clipped, no shell
  };
  for (const Box& core : cores) {
    const auto boxes = shell_boxes(outer, core);
    CHECK(boxes.size() <= 6);
    for (const Box& b : boxes) CHECK(!b.empty());
    const auto c = cover(outer, boxes);
    for (std::int64_t k = 0; k < 6; ++k)
      for (std::int64_t j = 0; j < 7; ++j)
        for (std::int64_t i = 0; i < 9; ++i) {
          const bool inside = !core.empty() && gf::test::in_box(core, i, j, k);
          INFO("core [" << core.lo[0] << "," << core.lo[1] << "," << core.lo[2] << ") point " << i
                        << " " << j << " " << k);
          REQUIRE(c[std::size_t(i + 9 * (j + 7 * k))] == (inside ? 0 : 1));
        }
  }
  CHECK(shell_boxes(outer, make_box({0, 0, 0}, {9, 7, 6})).empty());
  CHECK(shell_boxes(outer, make_box({2, 1, 1}, {7, 5, 4})).size() == 6);
  CHECK(Box::whole(std::array<std::int64_t, 3>{4, 5, 6}.data()).size() == 120);
}

TEST_CASE("the core of a rank's block leaves out its halo and the layers it sends",
          "[step_parts][decomp]") {
  Decomp d;
  d.global.ndim = 3;
  d.global.n = {20, 12, 30};
  d.global.periodic = {false, false, true};
  d.nranks = 6;
  d.dims = {1, 2, 3};
  d.halo = 2;
  d.rank = d.rank_of({0, 1, 1});  // a middle block in z (periodic), the upper one in y
  d.coords = {0, 1, 1};
  const Grid g = d.local_grid();
  REQUIRE(g.halo_lo[1] == 2);
  REQUIRE(g.halo_hi[1] == 0);
  REQUIRE(g.halo_lo[2] == 2);
  REQUIRE(g.halo_hi[2] == 2);
  const Box c = d.core_box();
  CHECK(c.lo == std::array<std::int64_t, 3>{0, 4, 4});
  CHECK(c.hi == std::array<std::int64_t, 3>{20, g.n[1], g.n[2] - 4});
  CHECK(d.overlap_fits());  // blocks of 6 and 10 points, 3 halo widths: 6
  d.global.n[1] = 11;        // blocks of 5 and 6 along y
  CHECK_FALSE(d.overlap_fits());
  d.global.n[1] = 12;
  d.halo = 1;
  d.dims = {1, 1, 1};
  d.nranks = 1;
  d.rank = 0;
  d.coords = {0, 0, 0};
  CHECK(d.core_box().size() == d.global.size());  // one rank: all core
  CHECK(d.overlap_fits());
}

TEST_CASE("GRIDFORGE_HALO_OVERLAP is 0 or 1, on when unset on the CPU and the GPU",
          "[step_parts]") {
  const char* old = std::getenv("GRIDFORGE_HALO_OVERLAP");
  const std::string keep = old ? old : "";
  unsetenv("GRIDFORGE_HALO_OVERLAP");
  CHECK(halo_overlap_requested(false));
  CHECK(halo_overlap_requested(true));
  setenv("GRIDFORGE_HALO_OVERLAP", "", 1);
  CHECK(halo_overlap_requested(false));
  CHECK(halo_overlap_requested(true));
  setenv("GRIDFORGE_HALO_OVERLAP", "1", 1);
  CHECK(halo_overlap_requested(false));
  CHECK(halo_overlap_requested(true));
  setenv("GRIDFORGE_HALO_OVERLAP", "0", 1);
  CHECK_FALSE(halo_overlap_requested(false));
  CHECK_FALSE(halo_overlap_requested(true));
  for (const char* bad : {"yes", "2", "off", " 1"}) {
    setenv("GRIDFORGE_HALO_OVERLAP", bad, 1);
    CHECK_THROWS_MATCHES(halo_overlap_requested(false), UsageError,
                         Catch::Matchers::Message(std::string("GRIDFORGE_HALO_OVERLAP: '") + bad +
                                                  "' is not 0 or 1"));
  }
  if (old) setenv("GRIDFORGE_HALO_OVERLAP", keep.c_str(), 1);
  else unsetenv("GRIDFORGE_HALO_OVERLAP");
}

TEMPLATE_TEST_CASE("CPU steps split around a core are the whole step bit for bit", "[step_parts]",
                   float, double) {
  auto be = make_cpu_backend<TestType>();
  for (StepKind k : {StepKind::Heat, StepKind::Jacobi, StepKind::Star, StepKind::Box,
                     StepKind::Radius2}) {
    gf::test::check_parts<TestType>(*be, k, 1, {23}, make_box({3, 0, 0}, {19, 1, 1}), true);
    gf::test::check_parts<TestType>(*be, k, 2, {17, 14}, make_box({0, 2, 0}, {17, 11, 1}), true);
    gf::test::check_parts<TestType>(*be, k, 2, {17, 14}, make_box({3, 2, 0}, {14, 12, 1}), true);
    gf::test::check_parts<TestType>(*be, k, 3, {13, 11, 9}, make_box({0, 0, 2}, {13, 11, 7}),
                                    true);
    gf::test::check_parts<TestType>(*be, k, 3, {13, 11, 9}, make_box({2, 3, 1}, {11, 8, 8}), true);
    // touching the grid's faces (x ends, y ends), empty, and everything
    gf::test::check_parts<TestType>(*be, k, 3, {13, 11, 9}, make_box({0, 0, 3}, {13, 11, 9}),
                                    true);
    gf::test::check_parts<TestType>(*be, k, 3, {13, 11, 9}, make_box({5, 5, 5}, {5, 8, 8}), true);
    gf::test::check_parts<TestType>(*be, k, 3, {13, 11, 9}, make_box({0, 0, 0}, {13, 11, 9}),
                                    true);
  }
}
