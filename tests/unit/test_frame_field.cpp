// render.field (docs/cases.md, render): the in-situ frames of a pde run draw
// the field it names, with that field's own auto range, in 2D (drawn on the
// host) and 3D (ray-marched from the observation's range); without it the
// first field; a name the case lacks is exit 2 where it was written.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "io/image.hpp"
#include "io/output.hpp"
#include "kernels/backend.hpp"
#include "solvers/frame_plot.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/run.hpp"
#include "tests/unit/pde_test_util.hpp"

namespace gf {
namespace {

namespace fs = std::filesystem;

// Two fields far apart in value (u about 1 to 2, v about 0 to 0.25) and in
// shape, so that a frame of the one is no frame of the other, nor drawn with
// the other's range.
std::string two_fields(int steps) {
  return "  fields:\n"
         "    u: {initial: {expr: \"1 + x*x\"}}\n"
         "    v: {initial: {expr: \"0.25*exp(-((x-0.3)^2+(y-0.6)^2)/0.02)\"}}\n"
         "  equations:\n"
         "    u: \"0.01*lap(u) - u*v\"\n"
         "    v: \"0.005*lap(v) + u*v - 0.1*v\"\n"
         "  integrator: ssprk2\n  dt: 0.01\n  steps: " +
         std::to_string(steps) + "\n";
}

// The largest difference of a colour channel between a PNG frame (8 bits)
// and the image it was written from.
double worst_channel(const io::Image& png, const io::Image& want) {
  REQUIRE(png.width == want.width);
  REQUIRE(png.height == want.height);
  double worst = 0;
  for (std::size_t p = 0; p < png.rgba.size(); ++p)
    if (p % 4 != 3)
      worst = std::max(worst,
                       std::fabs(double(png.rgba[p]) - std::clamp(double(want.rgba[p]), 0.0, 1.0)));
  return worst;
}
constexpr double kPngTol = 0.5 / 255 + 1e-6;

nlohmann::json run_in(const Case& c, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto be = make_cpu_backend<double>();
  RunOptions opts{dir, false, "test", nullptr};
  return run_case<double>(c, *be, opts);
}

}  // namespace

TEST_CASE("render.field: a 2D pde run's frames draw the field it names", "[frames]") {
  const fs::path dir = fs::temp_directory_path() / "gf_test_frame_field_2d";
  const std::string text = test::pde_case("[13, 11]", two_fields(4)) +
                           "render: {every: 2, transfer: {colormap: grayscale}}\n";
  const Case first = test::load(text);
  const Case of_v = test::load(text, {"render.field=v"});
  CHECK(first.render.field.empty());
  CHECK(of_v.render.field == "v");
  CHECK(of_v.resolved_yaml.find("  field: v\n") != std::string::npos);
  CHECK(first.resolved_yaml.find("field:") == std::string::npos);

  const nlohmann::json t = run_in(of_v, dir / "v");
  CHECK(t["render"]["frames"] == 3);  // steps 0, 2 and 4
  run_in(first, dir / "first");
  // The last frame is v of the run's own fields.h5 at that step, drawn with
  // v's own min and max; the default run's is u's.
  const Grid& g = of_v.grid;
  for (const auto& [sub, name] : {std::pair{"v", "v"}, {"first", "u"}}) {
    const std::vector<double> f =
        io::h5_read_dataset((dir / sub / "fields.h5").string(), std::string("/steps/000004/") + name);
    REQUIRE(f.size() == std::size_t(g.size()));
    const auto [lo, hi] = frame_range(of_v.render, f.data(), g.size());
    const io::Image want = draw_frame(of_v.render, g, f.data(), lo, hi);
    const io::Image got = io::read_png(dir / sub / "frames/t_000004.png");
    INFO(sub);
    CHECK(worst_channel(got, want) <= kPngTol);
  }
  for (const char* step : {"t_000000.png", "t_000004.png"})
    CHECK(io::read_png(dir / "v/frames" / step).rgba !=
          io::read_png(dir / "first/frames" / step).rgba);
  // render.field: u is the default said out loud: the same frames.
  run_in(test::load(text, {"render.field=u"}), dir / "u");
  CHECK(io::read_png(dir / "u/frames/t_000004.png").rgba ==
        io::read_png(dir / "first/frames/t_000004.png").rgba);
  fs::remove_all(dir);
}

TEST_CASE("render.field: a 3D frame's auto range is the named field's, from the run's statistics",
          "[frames]") {
  const fs::path dir = fs::temp_directory_path() / "gf_test_frame_field_3d";
  const Case c = test::load(test::pde_case("[9, 8, 7]", two_fields(2)) +
                            "render: {every: 2, field: v, mode: mip, camera: {position: "
                            "[2, -1, 1.5], width: 24, height: 18}, transfer: {colormap: "
                            "grayscale}}\n");
  const nlohmann::json t = run_in(c, dir);
  CHECK(t["render"]["frames"] == 2);
  // The range is the observation's (the log row's v_min, v_max), not reduced again.
  CHECK(t["render"]["range_reductions"] == 0);
  // v after 2 steps, rendered with its own min and max (a reduction of v).
  auto be = make_cpu_backend<double>();
  const std::vector<std::vector<double>> fields = test::pde_run(c, *be, 2);
  Field<double> v = be->make_field(c.grid, "v");
  be->upload(fields[1].data(), v);
  FrameRenderer<double> r(c.render, c.grid, *be, false);
  const io::Image got = io::read_png(dir / "frames/t_000002.png");
  CHECK(worst_channel(got, r.render(v)) <= kPngTol);
  // The same values drawn with u's range are another image: the range matters here.
  double ulo = *std::min_element(fields[0].begin(), fields[0].end());
  double uhi = *std::max_element(fields[0].begin(), fields[0].end());
  CHECK(worst_channel(got, r.render(v, ulo, uhi)) > 0.1);
  fs::remove_all(dir);
}

TEST_CASE("render.field: a name the case lacks is exit 2 where it was written", "[frames]") {
  using test::error_of;
  const std::string pde = test::pde_case("[9, 9]", two_fields(2));
  CHECK(error_of(pde + "render: {every: 2, field: w}\n") ==
        "case.yaml:19:27: render.field: unknown field 'w'; the fields of this case are u, v");
  CHECK(error_of(pde + "render: {every: 2, field: V}\n") ==
        "case.yaml:19:27: render.field: unknown field 'V'; the fields of this case are u, v; "
        "did you mean 'v'?");
  CHECK(error_of(pde + "render: {every: 2, field: [u]}\n").find("render.field: expected a text") !=
        std::string::npos);
  // One-field workloads: u alone.
  const std::string heat = "workload: heat\ngrid: {dims: [8]}\nheat: {alpha: 1, steps: 4}\n";
  CHECK(error_of(heat + "render: {every: 2, field: v}\n") ==
        "case.yaml:4:27: render.field: unknown field 'v'; a heat case has one field, u");
  CHECK(error_of(heat + "render: {every: 2, field: U}\n") ==
        "case.yaml:4:27: render.field: unknown field 'U'; a heat case has one field, u; did you "
        "mean 'u'?");
  CHECK(error_of(heat + "render: {every: 2, field: u}\n") == "(no error)");
  CHECK(error_of(heat + "render: {every: 2}\n", {"render.field=v"}) ==
        "command line: render.field: unknown field 'v'; a heat case has one field, u");
  CHECK(error_of(heat + "render: {every: 2, fild: u}\n") ==
        "case.yaml:4:20: render.fild: unknown key; did you mean 'field'?");
}

}  // namespace gf
