// KEY=VALUE overrides (issue 25, item 1): KEY=null deletes a key, an
// override of one key of a "give only one of" group replaces the file's
// partner, and the conflict message says how to fix it from the command line.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "io/case.hpp"
#include "tests/unit/case_test_util.hpp"

namespace {

using gf::test::error_of;
using gf::test::load;

//   1 workload: heat
//   2 grid: {dims: [11, 11]}
//   3 heat:
//   4   alpha: 1.0
//   5   t_end: 0.001
const std::string kTEnd = "workload: heat\ngrid: {dims: [11, 11]}\nheat:\n  alpha: 1.0\n  t_end: 0.001\n";

}  // namespace

TEST_CASE("an override of steps replaces the file's t_end, and the reverse", "[case][overrides]") {
  const gf::Case c = load(kTEnd, {"heat.steps=10"});
  CHECK(c.heat.steps == 10);
  CHECK_FALSE(c.heat.use_t_end);
  const gf::Case d = load(kTEnd + "", {"heat.steps=3", "heat={alpha: 1.0, t_end: 0.002}"});
  CHECK(d.heat.use_t_end);  // a whole section replaced: nothing of the file is left
  const std::string steps = "workload: heat\ngrid: {dims: [11, 11]}\nheat: {alpha: 1.0, steps: 4}\n";
  const gf::Case e = load(steps, {"heat.t_end=0.002"});
  CHECK(e.heat.use_t_end);
  CHECK(e.heat.t_end == 0.002);
}

TEST_CASE("KEY=null, KEY=~ and KEY= delete the key", "[case][overrides]") {
  for (const char* v : {"null", "~", "", "Null"}) {
    INFO(v);
    CHECK(error_of(kTEnd, {std::string("heat.t_end=") + v}) ==
          "case.yaml:4:3: heat: missing required key 'steps' or 't_end'");
    // A required key deleted is reported missing, as in a file.
    CHECK(error_of(kTEnd, {std::string("heat.alpha=") + v}) ==
          "case.yaml:4:3: heat: missing required key 'alpha'");
  }
  const gf::Case c = load(kTEnd, {"heat.t_end=null", "heat.steps=2"});
  CHECK(c.heat.steps == 2);
  // Deleting a key the file lacks is harmless; a misspelt one is still an error.
  CHECK(error_of(kTEnd, {"heat.steps=null"}) == "(no error)");
  CHECK(error_of(kTEnd, {"heat.t_edn=null"}) ==
        "command line: heat.t_edn: unknown key; did you mean 't_end'?");
  CHECK(error_of(kTEnd, {"output.dir=null"}) == "(no error)");
  // A quoted null is text, not a deletion.
  CHECK(error_of(kTEnd, {"heat.t_end='null'"}) ==
        "command line: heat.t_end: expected a number, got 'null'");
}

TEST_CASE("two overrides of one group still conflict", "[case][overrides]") {
  CHECK(error_of(kTEnd, {"heat.steps=10", "heat.t_end=0.5"}) ==
        "command line: heat.t_end: give only one of 'steps' and 't_end'; the command line sets "
        "more than one of them");
  CHECK(error_of(kTEnd, {"heat={alpha: 1, steps: 1, t_end: 1}"}) ==
        "command line: heat.t_end: give only one of 'steps' and 't_end'; the command line sets "
        "more than one of them");
}

TEST_CASE("a conflict in the file says how to remove one key on the command line",
          "[case][overrides]") {
  CHECK(error_of(kTEnd + "  steps: 3\n") ==
        "case.yaml:6:3: heat.steps: give only one of 'steps' and 't_end'; on the command line, "
        "heat.steps=null removes the file's steps");
  CHECK(error_of("workload: heat\ngrid: {dims: [11, 11]}\ninitial: {value: 0, expr: x}\n"
                 "heat: {alpha: 1.0, steps: 1}\n") ==
        "case.yaml:3:21: initial.expr: give only one of 'value', 'expr' and 'file'; on the command "
        "line, initial.expr=null removes the file's expr");
}

TEST_CASE("every either/or group of the schema yields to an override", "[case][overrides]") {
  const std::string heat = "heat: {alpha: 1.0, steps: 1}\n";
  SECTION("grid extent | spacing") {
    const std::string t = "workload: heat\ngrid: {dims: [11, 11], extent: [1, 1]}\n" + heat;
    const gf::Case c = load(t, {"grid.spacing=[0.5, 0.5]"});
    CHECK(c.grid.h[0] == 0.5);
    CHECK(load("workload: heat\ngrid: {dims: [11, 11], spacing: [2, 2]}\n" + heat,
               {"grid.extent=[1, 1]"})
              .grid.h[0] == 0.1);
  }
  SECTION("initial value | expr | file") {
    const std::string t = "workload: heat\ngrid: {dims: [11, 11]}\ninitial: {value: 3}\n" + heat;
    const gf::Case c = load(t, {"initial.expr=x"});
    CHECK(c.initial.kind == gf::InitialSpec::Kind::Expr);
    // Through a deeper key too: initial.file.path replaces the file's value
    // (and then initial.file.dataset is missing).
    CHECK(error_of(t, {"initial.file.path=nowhere.h5"}) ==
          "command line: initial.file: missing required key 'dataset'");
  }
  SECTION("stencil preset | points") {
    const std::string t =
        "workload: stencil\ngrid: {dims: [9, 9]}\nstencil: {points: [[0, 0, 0, 1]], steps: 1}\n";
    const gf::Case c = load(t, {"stencil.preset=star5", "stencil.coeff=1e-3"});
    CHECK(c.stencil.preset == "star5");
    CHECK(c.stencil.points.size() == 5);
  }
  SECTION("wave steps | t_end") {
    const std::string t = "workload: wave\ngrid: {dims: [11, 11]}\nwave: {c: 1.0, t_end: 0.05}\n";
    const gf::Case c = load(t, {"wave.steps=2"});
    CHECK(c.wave.steps == 2);
  }
  SECTION("raymarch volume expr | sdf | file") {
    const std::string t =
        "workload: raymarch\ngrid: {dims: [8, 8, 8]}\nraymarch:\n  volume: {expr: \"x\"}\n"
        "  camera: {position: [2, 2, 2], look_at: [0.5, 0.5, 0.5], width: 8, height: 8}\n";
    const gf::Case c =
        load(t, {"raymarch.volume.sdf=[{sphere: {center: [0.5,0.5,0.5], radius: 0.2}}]"});
    CHECK(c.raymarch.volume.kind == gf::RayVolumeSpec::Kind::Sdf);
  }
}
