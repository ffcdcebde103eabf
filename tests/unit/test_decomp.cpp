// Domain decomposition (grid/decomp.hpp) without MPI: the split chosen, the
// blocks and their halos, the rank-local case, the case errors; and the CPU
// backend's halo packing and owned-point sums on a rank-local grid.
#include <catch2/catch.hpp>

#include <numeric>
#include <string>
#include <vector>

#include "solvers/decompose.hpp"
#include "io/case.hpp"
#include "kernels/backend.hpp"

namespace {

using Catch::Matchers::Contains;

gf::Case load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return gf::load_case_text(text, "cases/case.yaml", overrides);
}

const char* kHeat = R"Y(workload: heat
grid:
  dims: [10, 7, 5]
boundary:
  default: {type: dirichlet, value: 0}
  x: {type: periodic}
heat:
  alpha: 0.5
  steps: 10
)Y";

}  // namespace

TEST_CASE("choose_rank_dims takes the smallest cut, slow axes first on a tie", "[decomp]") {
  gf::Grid g;
  g.ndim = 3;
  g.n = {64, 64, 64};
  CHECK(gf::choose_rank_dims(g, 2, 1) == std::array<int, 3>{1, 1, 2});
  CHECK(gf::choose_rank_dims(g, 4, 1) == std::array<int, 3>{1, 2, 2});
  CHECK(gf::choose_rank_dims(g, 8, 1) == std::array<int, 3>{2, 2, 2});
  g.ndim = 2;
  g.n = {1024, 16, 1};
  CHECK(gf::choose_rank_dims(g, 2, 1) == std::array<int, 3>{2, 1, 1});  // cut the long axis
  g.n = {5, 5, 1};
  CHECK(gf::choose_rank_dims(g, 3, 2) == std::array<int, 3>{0, 0, 0});  // blocks of 1 < halo 2
}

TEST_CASE("blocks tile the axis, the first n mod p one point longer", "[decomp]") {
  std::int64_t next = 0;
  for (int c = 0; c < 3; ++c) {
    CHECK(gf::Decomp::block_start(10, 3, c) == next);
    next += gf::Decomp::block_count(10, 3, c);
  }
  CHECK(next == 10);
  CHECK(gf::Decomp::block_count(10, 3, 0) == 4);
  CHECK(gf::Decomp::block_count(10, 3, 2) == 3);
}

TEST_CASE("the rank-local grid: halos on shared faces, periodic wrap, global coordinates",
          "[decomp]") {
  const gf::Case c = load(kHeat, {"grid.ranks=[2,1,3]"});
  const gf::Decomp d = gf::decompose(c, 6, 1);  // coords (1, 0, 0)
  CHECK(d.coords == std::array<int, 3>{1, 0, 0});
  CHECK(d.neighbour(0, -1) == 0);
  CHECK(d.neighbour(0, +1) == 0);  // x is periodic: two ranks, the same on both sides
  CHECK(d.neighbour(2, -1) == -1);  // z wall
  CHECK(d.neighbour(2, +1) == 3);
  const gf::Grid g = d.local_grid();
  CHECK(g.n[0] == 5 + 2);
  CHECK(g.n[1] == 7);
  CHECK(g.n[2] == 2 + 1);  // z block 0 of 5 over 3: 2 points, halo above only
  CHECK(g.offset[0] == 4);
  CHECK(g.halo_lo[2] == 0);
  CHECK(g.halo_hi[2] == 1);
  CHECK(g.owned_size() == 5 * 7 * 2);
  CHECK(g.coord(0, 1) == c.grid.coord(0, 5));  // local point 1 is global point 5
  const gf::Case lc = gf::local_case(c, d);
  CHECK(lc.decomp != nullptr);
  CHECK(lc.boundary[0].type == gf::BcType::Periodic);
  CHECK(lc.boundary[4].type == gf::BcType::Dirichlet);  // z-: the grid's own wall
  CHECK(lc.boundary[5].type == gf::BcType::Periodic);   // z+: shared with rank 3
  CHECK(gf::local_case(c, gf::decompose(c, 1, 0)).grid.size() == c.grid.size());
}

TEST_CASE("the rank-local case marks shared faces periodic in each pde field's boundary",
          "[decomp]") {
  const gf::Case c = load(R"Y(workload: pde
grid: {dims: [12, 9]}
boundary: {default: {type: neumann, gradient: 0}}
pde:
  fields:
    u: {boundary: {default: {type: dirichlet, value: "1 + t"}}}
    v: {}
  equations: {u: "lap(u)", v: "lap(v) + u"}
  steps: 2
)Y", {"grid.ranks=[3,1]"});
  const gf::Case lc = gf::local_case(c, gf::decompose(c, 3, 1));  // the middle block in x
  REQUIRE(lc.pde.fields.size() == 2);
  for (const gf::PdeFieldSpec& f : lc.pde.fields) {
    CHECK(f.boundary[0].type == gf::BcType::Periodic);  // x-: shared with rank 0
    CHECK(f.boundary[1].type == gf::BcType::Periodic);  // x+: shared with rank 2
  }
  CHECK(lc.pde.fields[0].boundary[2].type == gf::BcType::Dirichlet);  // y: the grid's own
  CHECK(lc.pde.fields[1].boundary[3].type == gf::BcType::Neumann);
  const gf::Case first = gf::local_case(c, gf::decompose(c, 3, 0));
  CHECK(first.pde.fields[0].boundary[0].type == gf::BcType::Dirichlet);  // x-: its own wall
  CHECK(first.pde.fields[0].boundary[1].type == gf::BcType::Periodic);
}

TEST_CASE("decompose refuses splits that cannot work", "[decomp]") {
  const gf::Case c = load(kHeat, {"grid.ranks=[2,2,1]"});
  CHECK_THROWS_WITH(gf::decompose(c, 3, 0), Contains("[2, 2, 1] makes 4 ranks, but the run has 3"));
  CHECK_THROWS_WITH(gf::decompose(load(kHeat, {"grid.ranks=[1,8,1]"}), 8, 0),
                    Contains("8 ranks on axis y but grid.dims[1] is 7"));
  CHECK_NOTHROW(gf::decompose(load(kHeat, {"grid.ranks=[1,1,5]"}), 5, 0));
}

TEST_CASE("halos as deep as the time block: set, auto (as the thinnest block allows), or one step",
          "[decomp]") {
  // 10 x 7 x 5, x periodic: x over 2 gives blocks of 5, z over 2 blocks of 2 and 3
  const auto decomp = [](const std::vector<std::string>& over, int nranks) {
    return gf::decompose(load(kHeat, over), nranks, 0);
  };
  gf::Decomp d = decomp({"grid.ranks=[2,1,1]", "heat.time_block=3"}, 2);
  CHECK(d.radius == 1);
  CHECK(d.time_block == 3);
  CHECK(d.halo == 3);
  CHECK(d.local_grid().n[0] == 5 + 2 * 3);  // periodic over 2: a halo of 3 on both sides
  CHECK(d.local_grid().offset[0] == -3);
  // auto with 200 steps or more: the split for one step, then as deep as it allows
  d = decomp({"grid.ranks=[2,1,1]", "heat.steps=200"}, 2);
  CHECK(d.time_block == 4);
  CHECK(d.halo == 4);
  d = decomp({"grid.ranks=[2,1,2]", "heat.steps=200"}, 4);
  CHECK(d.time_block == 2);  // the thinnest block: 5 / 2 = 2 points in z
  d = decomp({"heat.steps=200"}, 2);
  CHECK(d.halo == d.time_block);
  CHECK(d.time_block >= 2);
  // auto with fewer steps, set to 1, an implicit scheme, a 1D grid: one step
  CHECK(decomp({"grid.ranks=[2,1,1]"}, 2).halo == 1);
  CHECK(decomp({"grid.ranks=[2,1,1]", "heat.steps=200", "heat.time_block=1"}, 2).halo == 1);
  CHECK(decomp({"grid.ranks=[2,1,1]", "heat.steps=200", "heat.scheme=implicit", "heat.dt=0.01"}, 2)
            .halo == 1);
  CHECK(decomp({"grid.dims=[10]", "grid.ranks=[2]", "heat.steps=200"}, 2).halo == 1);
  // a 2D grid has passes too: x over 2 gives blocks of 5
  CHECK(decomp({"grid.dims=[10,7]", "grid.ranks=[2,1]", "heat.steps=200"}, 2).halo == 4);
  // set deeper than a block: the error names the time block
  CHECK_THROWS_WITH(decomp({"grid.ranks=[1,1,2]", "heat.time_block=3"}, 2),
                    Contains("2 ranks on axis z give blocks of 2 points, narrower than the halo of "
                             "3 (time_block 3 × the stencil radius 1)"));
  CHECK_THROWS_WITH(decomp({"grid.dims=[4,4,4]", "heat.time_block=4"}, 2),
                    Contains("cannot be split over 2 ranks with blocks at least 4 points wide (the "
                             "halo: time_block 4 × the stencil radius 1)"));
}

TEST_CASE("CPU pack/unpack and sums over the owned points of a rank-local grid", "[decomp]") {
  gf::Grid g;
  g.ndim = 2;
  g.n = {6, 5, 1};
  g.halo_lo = {1, 0, 0};
  g.halo_hi = {1, 1, 0};
  auto be = gf::make_cpu_backend<double>();
  gf::Field<double> f = be->make_field(g, "f");
  std::vector<double> v(f.size());
  std::iota(v.begin(), v.end(), 1.0);
  be->upload(v.data(), f);
  // owned: i in [1, 5), j in [0, 4)
  double sum = 0, sq = 0;
  for (int j = 0; j < 4; ++j)
    for (int i = 1; i < 5; ++i) sum += v[i + 6 * j], sq += v[i + 6 * j] * v[i + 6 * j];
  const gf::FieldStats s = be->vec().stats(f);
  CHECK(s.count == 16);
  CHECK(s.sum == sum);
  CHECK(s.min == v[1]);
  CHECK(s.max == v[4 + 6 * 3]);
  CHECK(be->vec().dot(f, f) == sq);

  gf::Grid b;
  b.n = {8, 1, 1};
  gf::Field<double> buf = be->make_field(b, "buf");
  const std::int64_t lo[3] = {2, 1, 0}, cnt[3] = {2, 4, 1};
  be->pack(f, lo, cnt, buf);
  std::vector<double> got(8);
  be->download(buf, got.data());
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 2; ++i) CHECK(got[i + 2 * j] == v[(2 + i) + 6 * (1 + j)]);
  std::vector<double> zeros(8, -1.0);
  be->upload(zeros.data(), buf);
  be->unpack(f, lo, cnt, buf);
  be->download(f, v.data());
  CHECK(v[2 + 6 * 1] == -1.0);
  CHECK(v[3 + 6 * 4] == -1.0);
  CHECK(v[1 + 6 * 1] == 8.0);  // outside the box: untouched
}
