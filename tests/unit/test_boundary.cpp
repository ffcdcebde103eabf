// The boundary rules as the point formulas see them (kernels/ops/boundary.hpp).
#include <catch2/catch.hpp>

#include "kernels/ops/boundary.hpp"
#include "kernels/heat/heat_ops.hpp"

using namespace gf;

TEST_CASE("neighbour() inside the grid is the adjacent value on every axis type", "[boundary]") {
  const double u[5] = {10, 11, 12, 13, 14};
  for (BcType t : {BcType::Dirichlet, BcType::Neumann, BcType::Periodic}) {
    AxisBc<double> bc{t, t, 0.5, 0.25};
    CHECK(neighbour(u, 2, 2, 5, 1, -1, bc) == 11);
    CHECK(neighbour(u, 2, 2, 5, 1, +1, bc) == 13);
  }
}

TEST_CASE("neighbour() wraps on a periodic axis", "[boundary]") {
  const double u[5] = {10, 11, 12, 13, 14};
  AxisBc<double> bc{BcType::Periodic, BcType::Periodic};
  CHECK(neighbour(u, 0, 0, 5, 1, -1, bc) == 14);
  CHECK(neighbour(u, 4, 4, 5, 1, +1, bc) == 10);
  // with a stride (the y axis of a 3-wide grid)
  const double v[6] = {0, 1, 2, 3, 4, 5};  // 3 x 2
  CHECK(neighbour(v, 1, 0, 2, 3, -1, bc) == 4);
}

TEST_CASE("neighbour() mirrors with 2h·g on a Neumann face", "[boundary]") {
  const double u[4] = {1, 2, 4, 8};
  AxisBc<double> bc{BcType::Neumann, BcType::Neumann, 0.5, -0.25};
  CHECK(neighbour(u, 0, 0, 4, 1, -1, bc) == 2 + 0.5);   // ghost left = u[1] + ghost_lo
  CHECK(neighbour(u, 3, 3, 4, 1, +1, bc) == 4 - 0.25);  // ghost right = u[2] + ghost_hi
}

TEST_CASE("on_dirichlet() marks exactly the points on Dirichlet faces", "[boundary]") {
  AxisBc<double> lo_only{BcType::Dirichlet, BcType::Neumann};
  CHECK(on_dirichlet(0, 5, lo_only));
  CHECK_FALSE(on_dirichlet(4, 5, lo_only));
  CHECK_FALSE(on_dirichlet(2, 5, lo_only));
  AxisBc<double> both{};
  CHECK(on_dirichlet(4, 5, both));
}

TEST_CASE("heat_point_bc keeps Dirichlet points and applies FTCS elsewhere", "[boundary]") {
  HeatArgs<double> a;
  a.ndim = 1;
  a.c[0] = 0.25;
  a.bc[0] = AxisBc<double>{BcType::Dirichlet, BcType::Neumann, 0, 0};
  a.dt = 0.1;
  a.source_const = 2.0;
  const double data[4] = {1, 2, 4, 8};
  const std::int64_t n[3] = {4, 1, 1};
  const FieldView<const double> u(data, Layout::dense(n));
  CHECK(heat_point_bc<1>(a, u, 0, 0, 0) == 1);                          // held
  CHECK(heat_point_bc<1>(a, u, 1, 0, 0) == 2 + 0.25 * (1 + 4 - 4) + 0.2);  // interior + dt·s
  CHECK(heat_point_bc<1>(a, u, 3, 0, 0) == 8 + 0.25 * (4 + 4 - 16) + 0.2);  // mirror ghost
}
