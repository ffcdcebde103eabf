// The schedules of the driver loops (solvers/schedule.hpp).
#include <catch2/catch.hpp>

#include "solvers/schedule.hpp"

using namespace gf;

TEST_CASE("schedules say when they are due and when next", "[schedule]") {
  const Every e{25};
  CHECK(e.due(0));
  CHECK(e.due(50));
  CHECK_FALSE(e.due(51));
  CHECK(e.next(0) == 25);
  CHECK(e.next(24) == 25);
  CHECK(e.next(25) == 50);
  const Every never{0};
  CHECK_FALSE(never.due(0));
  CHECK(never.next(7) == kNever);
  const AtSteps at{{0, 10, 20, 23}};
  CHECK(at.due(23));
  CHECK_FALSE(at.due(22));
  CHECK(at.next(10) == 20);
  CHECK(at.next(20) == 23);
  CHECK(at.next(23) == kNever);
  CHECK(next_stop(12, 100, e, at, never) == 20);
  CHECK(next_stop(21, 22, e, at) == 22);
}
