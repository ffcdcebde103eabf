// Hints in load errors (issue 25, item 15).
#include <catch2/catch.hpp>

#include <string>

#include "tests/unit/case_test_util.hpp"

using gf::test::error_of;

TEST_CASE("x**2 in an expression hints at ^", "[case][hints]") {
  CHECK(error_of("workload: heat\ngrid: {dims: [5, 5]}\ninitial: {expr: \"x**2\"}\n"
                 "heat: {alpha: 1, steps: 1}\n") ==
        "case.yaml:3:17: initial.expr: cannot parse \"x**2\": unexpected operator \"*\" found at "
        "position 2; muparser writes powers with ^ (x^2), not **");
}

TEST_CASE("workload: poisson points at laplace with rhs", "[case][hints]") {
  CHECK(error_of("workload: poisson\ngrid: {dims: [5, 5]}\n") ==
        "case.yaml:1:11: workload: expected one of heat, laplace, stencil, raymarch, wave, pde, got "
        "'poisson'; Poisson's equation is workload: laplace with laplace.rhs: f");
}

TEST_CASE("an empty output.dir is a case error at load", "[case][hints]") {
  CHECK(error_of("workload: heat\ngrid: {dims: [5, 5]}\nheat: {alpha: 1, steps: 1}\n"
                 "output: {dir: \"\"}\n") ==
        "case.yaml:4:15: output.dir: expected a folder path, got nothing");
}
