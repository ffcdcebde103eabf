// The GPU's steps split for the overlapped halo exchange (the executors'
// step_part and jacobi_sweep_part, kernels/cuda/part_kernels.cuh): the shell and the core together are the
// whole step bit for bit, each part writes only its own points, where the
// marches run (2D and 3D rows of whole 16-byte vectors; for stencils the
// radius-1 presets); elsewhere the backend declines and writes nothing. And
// the halo stream (halo_fork/halo_join): the shell computed there and a face
// packed after it hold the shell's values while the core runs on the
// compute stream, and what is unpacked there is in place after the join. Run with `gridforge_tests "[gpu][step_parts]"`.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/device.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "../unit/step_parts_util.hpp"

using namespace gf;
using gf::test::check_parts;
using gf::test::make_box;
using gf::test::StepKind;

TEMPLATE_TEST_CASE("GPU steps split around a core are the whole step bit for bit",
                   "[gpu][step_parts]", float, double) {
  using T = TestType;
  auto be = make_cuda_backend<T>(0);
  auto dense = make_cuda_backend<T>(0, 0);  // dense rows
  const std::vector<Box> cores3 = {
      make_box({0, 0, 2}, {36, 11, 17}),  // a z split: x whole, the march from row end to row end
      make_box({0, 3, 2}, {36, 8, 17}),   // y and z split
      make_box({5, 2, 3}, {30, 9, 16}),   // x split: ends that are not whole vectors
      make_box({0, 0, 0}, {36, 11, 5}),   // touching the z and y faces
      make_box({8, 4, 4}, {8, 9, 9}),     // empty
      make_box({0, 0, 0}, {36, 11, 19}),  // everything
  };
  const std::vector<Box> cores2 = {make_box({0, 2, 0}, {40, 25, 1}),
                                   make_box({3, 4, 0}, {37, 20, 1}),
                                   make_box({0, 0, 0}, {40, 27, 1})};
  for (StepKind k : {StepKind::Heat, StepKind::Jacobi, StepKind::Star, StepKind::Box}) {
    for (const Box& c : cores3) check_parts<T>(*be, k, 3, {36, 11, 19}, c, true);
    for (const Box& c : cores2) check_parts<T>(*be, k, 2, {40, 27}, c, true);
    // a tall block: several z chunks in the march
    check_parts<T>(*be, k, 3, {16, 9, 61}, make_box({0, 0, 3}, {16, 9, 58}), true);
    // rows padded to whole vectors (nx = 37): the march runs, its core's
    // last column through the box points
    check_parts<T>(*be, k, 3, {37, 11, 19}, cores3[0], true);
    check_parts<T>(*be, k, 3, {37, 11, 19}, make_box({0, 2, 2}, {37, 9, 17}), true);
    // where the marches do not run the step is not split: dense rows that
    // are not whole vectors, 1D
    check_parts<T>(*dense, k, 3, {37, 11, 19}, cores3[0], false);
    check_parts<T>(*be, k, 1, {101}, make_box({3, 0, 0}, {97, 1, 1}), false);
  }
  // stencils other than the radius-1 presets run on the generic kernels: not split
  check_parts<T>(*be, StepKind::Radius2, 3, {36, 11, 19}, cores3[0], false);
  check_parts<T>(*be, StepKind::Radius2, 2, {40, 27}, cores2[0], false);
}

TEST_CASE("GPU halo stream: faces packed after the shell, unpacked before the join",
          "[gpu][step_parts]") {
  using T = float;
  auto be = make_cuda_backend<T>(0);
  auto exec = make_heat_exec(*be);
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  Grid g;
  g.ndim = 3;
  g.n = {64, 40, 48};
  const std::size_t np = std::size_t(g.size());
  std::vector<T> u0(np);
  for (auto& x : u0) x = T(d(rng));
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  HeatArgs<T> a;
  a.ndim = 3;
  for (int ax = 0; ax < 3; ++ax) {
    a.c[ax] = T(0.1);
    a.bc[ax].lo = a.bc[ax].hi = BcType::Periodic;
  }
  Field<T> u = be->make_field(g, "u"), v = be->make_field(g, "v");
  be->upload(u0.data(), u);
  // the expected: the whole step, then layer z = 1 copied into layer 0
  be->upload(poison.data(), v);
  exec->step(a, u, v);
  std::vector<T> want(np);
  be->download(v, want.data());
  const std::int64_t plane = g.n[0] * g.n[1];
  for (std::int64_t q = 0; q < plane; ++q) want[std::size_t(q)] = want[std::size_t(plane + q)];

  Grid b;
  b.n = {plane, 1, 1};
  Field<T> buf = be->make_field(b, "a face");
  const Box core = make_box({0, 0, 2}, {64, 40, 46});
  const std::int64_t face_lo[3] = {0, 0, 1}, halo_lo[3] = {0, 0, 0}, cnt[3] = {64, 40, 1};
  for (int rep = 0; rep < 3; ++rep) {
    be->upload(poison.data(), v);
    be->halo_fork();
    REQUIRE(exec->step_part(a, u, v, core, StepPart::Shell));  // on the halo stream
    REQUIRE(exec->step_part(a, u, v, core, StepPart::Core));   // on the compute stream
    be->pack(v, face_lo, cnt, buf);  // on the halo stream, after the shell
    std::vector<T> face(static_cast<std::size_t>(plane));
    be->download(buf, face.data());  // waits for the halo stream only
    std::size_t wrong_face = 0;
    for (std::int64_t q = 0; q < plane; ++q)
      if (face[std::size_t(q)] != want[std::size_t(q)]) ++wrong_face;
    CHECK(wrong_face == 0);
    be->unpack(v, halo_lo, cnt, buf);
    be->halo_join();
    std::vector<T> got(np);
    be->download(v, got.data());
    std::size_t wrong = 0;
    for (std::size_t q = 0; q < np; ++q)
      if (!(got[q] == want[q])) ++wrong;
    CHECK(wrong == 0);
  }
}
