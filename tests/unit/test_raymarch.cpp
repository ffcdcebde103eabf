// The raymarch workload on the CPU reference: what an image must show
// (coverage, orientation, mip and transparency), the SDF primitives, the
// image files and the image comparison of validate.
#include <hdf5.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "case_test_util.hpp"
#include "io/image.hpp"
#include "io/output.hpp"
#include "solvers/raymarch.hpp"

namespace gf {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A raymarch case over the unit cube with `dims` points per axis.
std::string ray_case(const std::string& raymarch, int dims = 64) {
  return "workload: raymarch\nprecision: float64\ngrid: {dims: [" + std::to_string(dims) + ", " +
         std::to_string(dims) + ", " + std::to_string(dims) + "]}\nraymarch:\n" + raymarch;
}

template <class T = double>
io::Image render(const Case& c) {
  auto be = make_cpu_backend<T>();
  const std::vector<T> host = raymarch_volume<T>(c);
  double lo = INFINITY, hi = -INFINITY;
  for (T v : host) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
  Field<T> vol = be->make_field(c.grid, "volume");
  be->upload(host.data(), vol);
  FrameRenderer<T> r(c.raymarch, c.grid, *be, c.raymarch.volume.kind == RayVolumeSpec::Kind::Sdf);
  return r.render(vol, lo, hi);
}

struct Coverage {
  std::int64_t pixels = 0;
  double cx = 0, cy = 0;  // centroid of the covered pixels
};

Coverage coverage(const io::Image& img) {
  Coverage c;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      if (img.rgba[4 * (std::size_t(y) * img.width + x) + 3] > 0.5f) {
        ++c.pixels;
        c.cx += x + 0.5;
        c.cy += y + 0.5;
      }
  if (c.pixels) c.cx /= double(c.pixels), c.cy /= double(c.pixels);
  return c;
}

// Camera 2 units in front of the centre of the cube, looking along +y, z up:
// right is +x (right = forward × up).
const char* kCamera =
    "  camera: {position: [0.5, -1.5, 0.5], look_at: [0.5, 0.5, 0.5], up: [0, 0, 1], "
    "fov_deg: 30, width: 401, height: 301}\n";

TEST_CASE("an isosurface of a sphere covers the pixels its projection predicts", "[raymarch]") {
  // The silhouette of a sphere of radius r seen from distance d is a cone of
  // half-angle asin(r/d): a disc of radius tan(asin(r/d))/tan(fov/2)·H/2 pixels.
  const double r = 0.3, d = 2.0, fov = 30 * kPi / 180;
  const double R = std::tan(std::asin(r / d)) / std::tan(fov / 2) * 301 / 2;
  const double predicted = kPi * R * R;
  SECTION("an expression volume, fixed steps") {
    const Case c = test::load(
        ray_case(std::string("  volume: {expr: \"sqrt((x-0.5)^2+(y-0.5)^2+(z-0.5)^2)\"}\n"
                             "  mode: isosurface\n  isovalue: 0.3\n") +
                     kCamera,
                 96));
    const Coverage cov = coverage(render(c));
    CHECK(std::abs(double(cov.pixels) - predicted) < 0.01 * predicted);
    CHECK(cov.cx == Approx(200.5).margin(0.5));
    CHECK(cov.cy == Approx(150.5).margin(0.5));
  }
  SECTION("a distance field, sphere tracing, in float32") {
    const Case c = test::load(
        ray_case(std::string("  volume: {sdf: [{sphere: {center: [0.5, 0.5, 0.5], radius: 0.3}}]}\n"
                             "  mode: isosurface\n") +
                     kCamera,
                 96));
    const Coverage cov = coverage(render<float>(c));
    CHECK(std::abs(double(cov.pixels) - predicted) < 0.01 * predicted);
  }
}

TEST_CASE("what is right of and above the look-at point appears right and up in the image",
          "[raymarch]") {
  auto sphere_at = [](const char* center) {
    return test::load(ray_case(std::string("  volume: {sdf: [{sphere: {center: ") + center +
                               ", radius: 0.1}}]}\n  mode: isosurface\n" + kCamera));
  };
  const Coverage right = coverage(render(sphere_at("[0.75, 0.5, 0.5]")));
  REQUIRE(right.pixels > 100);
  CHECK(right.cx > 401 / 2.0 + 20);
  CHECK(right.cy == Approx(150.5).margin(1));
  const Coverage up = coverage(render(sphere_at("[0.5, 0.5, 0.75]")));
  REQUIRE(up.pixels > 100);
  CHECK(up.cy < 301 / 2.0 - 20);  // row 0 is the top
  CHECK(up.cx == Approx(200.5).margin(1));
  // Turning the camera upside down (up = −z) mirrors both.
  const Case flipped = test::load(ray_case(
      "  volume: {sdf: [{sphere: {center: [0.75, 0.5, 0.75], radius: 0.1}}]}\n  mode: isosurface\n"
      "  camera: {position: [0.5, -1.5, 0.5], look_at: [0.5, 0.5, 0.5], up: [0, 0, -1], "
      "fov_deg: 30, width: 401, height: 301}\n"));
  const Coverage f = coverage(render(flipped));
  CHECK(f.cx < 401 / 2.0 - 20);
  CHECK(f.cy > 301 / 2.0 + 20);
}

TEST_CASE("mip of a constant field is that constant wherever the ray meets the grid",
          "[raymarch]") {
  // The camera sees the cube and the background beside it.
  const Case c = test::load(ray_case(
      "  volume: {expr: \"0.3\"}\n  mode: mip\n"
      "  camera: {position: [0.5, -1.2, 0.5], look_at: [0.5, 0.5, 0.5], fov_deg: 50, width: 97, "
      "height: 61}\n  transfer: {colormap: grayscale, range: [0, 1]}\n  background: [1, 0, 0]\n",
      17));
  const io::Image img = render(c);
  std::int64_t hit = 0, miss = 0;
  for (std::size_t p = 0; p < img.rgba.size() / 4; ++p) {
    const float* px = &img.rgba[4 * p];
    if (px[3] == 1.0f) {
      ++hit;
      for (int k = 0; k < 3; ++k) REQUIRE(px[k] == Approx(0.3).margin(1e-6));
    } else {
      ++miss;
      REQUIRE(px[3] == 0.0f);
      REQUIRE((px[0] == 1.0f && px[1] == 0.0f && px[2] == 0.0f));
    }
  }
  CHECK(hit > 1000);
  CHECK(miss > 1000);
}

TEST_CASE("a transparent transfer function gives the background", "[raymarch]") {
  const Case c = test::load(ray_case(std::string("  volume: {expr: \"x*y+z\"}\n"
                                                 "  transfer: {colormap: viridis, density: 0}\n"
                                                 "  background: [0.2, 0.4, 0.6]\n") +
                                         kCamera,
                                     20));
  const io::Image img = render(c);
  for (std::size_t p = 0; p < img.rgba.size() / 4; ++p) {
    REQUIRE(img.rgba[4 * p + 0] == 0.2f);
    REQUIRE(img.rgba[4 * p + 1] == 0.4f);
    REQUIRE(img.rgba[4 * p + 2] == 0.6f);
    REQUIRE(img.rgba[4 * p + 3] == 0.0f);
  }
}

TEST_CASE("emission-absorption: denser is more opaque, and opacity never passes 1", "[raymarch]") {
  auto alpha_at_centre = [](const char* density) {
    const Case c = test::load(
        ray_case(std::string("  volume: {expr: \"1\"}\n  transfer: {range: [0, 1], density: ") +
                     density + "}\n" + kCamera,
                 9));
    const io::Image img = render(c);
    return img.rgba[4 * (150 * 401 + 200) + 3];
  };
  // Through the cube (length 1) at extinction σ: 1 − exp(−σ), until early termination.
  CHECK(alpha_at_centre("0.5") == Approx(1 - std::exp(-0.5)).epsilon(1e-5));
  CHECK(alpha_at_centre("2") == Approx(1 - std::exp(-2.0)).epsilon(1e-5));
  const float a = alpha_at_centre("1000");
  CHECK(a >= kOpaque);
  CHECK(a <= 1.0f);
}

TEST_CASE("colormaps match matplotlib at their ends and middles", "[raymarch]") {
  float rgb[3];
  colormap_rgb(Colormap::Viridis, 0.0f, rgb);
  CHECK(rgb[0] == Approx(0.267).margin(1e-3));
  CHECK(rgb[2] == Approx(0.329).margin(1e-3));
  colormap_rgb(Colormap::Inferno, 1.0f, rgb);
  CHECK(rgb[0] == Approx(0.988).margin(1e-3));
  CHECK(rgb[2] == Approx(0.645).margin(1e-3));
  colormap_rgb(Colormap::Grayscale, 0.37f, rgb);
  CHECK(rgb[1] == Approx(0.37).margin(1e-6));
  colormap_rgb(Colormap::Coolwarm, 0.5f, rgb);
  CHECK(rgb[0] == Approx(0.867).margin(2e-3));
  colormap_rgb(Colormap::Coolwarm, NAN, rgb);  // NaN reads as the low end
  CHECK(rgb[2] == Approx(0.754).margin(1e-3));
}

TEST_CASE("signed distances of the primitives and their combinations", "[raymarch]") {
  const Case c = test::load(
      ray_case("  volume:\n    sdf:\n"
               "      - box: {center: [0, 0, 0], half: [1, 2, 3]}\n"
               "      - torus: {center: [0, 0, 0], major: 2, minor: 0.5, axis: [0, 0, 2]}\n"
               "      - capsule: {a: [0, 0, 0], b: [0, 0, 2], radius: 0.5}\n"
               "      - plane: {point: [0, 0, 1], normal: [0, 0, -3]}\n"
               "      - difference: [{sphere: {center: [0, 0, 0], radius: 1}}, {sphere: {center: "
               "[1, 0, 0], radius: 1}}]\n"
               "      - smooth_union: {k: 0.5, of: [{sphere: {center: [0, 0, 0], radius: 1}}, "
               "{sphere: {center: [3, 0, 0], radius: 1}}]}\n"
               "      - intersection: [{sphere: {center: [0, 0, 0], radius: 1}}, {sphere: {center: "
               "[1, 0, 0], radius: 1}}]\n"
               "  camera: {position: [3, 3, 3]}\n"));
  const auto& s = c.raymarch.volume.sdf;
  REQUIRE(s.size() == 7);
  const double p1[3] = {2, 0, 0}, p2[3] = {3, 3, 0}, p3[3] = {0, 0, 0};
  CHECK(sdf_distance(s[0], p1) == Approx(1));                     // outside a face
  CHECK(sdf_distance(s[0], p2) == Approx(std::sqrt(4.0 + 1.0)));  // beyond an edge
  CHECK(sdf_distance(s[0], p3) == Approx(-1));                    // inside: nearest face
  const double t1[3] = {2, 0, 0}, t2[3] = {0, 2.0, 0.5};
  CHECK(sdf_distance(s[1], t1) == Approx(-0.5));
  CHECK(sdf_distance(s[1], t2) == Approx(0).margin(1e-12));
  const double c1[3] = {1, 0, 1}, c2[3] = {0, 0, 3};
  CHECK(sdf_distance(s[2], c1) == Approx(0.5));
  CHECK(sdf_distance(s[2], c2) == Approx(0.5));
  const double q1[3] = {5, 5, 0};
  CHECK(sdf_distance(s[3], q1) == Approx(1));  // below the plane, on its normal's side
  const double d1[3] = {-0.5, 0, 0}, d2[3] = {0.5, 0, 0};
  CHECK(sdf_distance(s[4], d1) == Approx(-0.5));
  CHECK(sdf_distance(s[4], d2) == Approx(0.5));  // in the bite
  const double u1[3] = {1.5, 0, 0}, u2[3] = {-1, 0, 0};
  CHECK(sdf_distance(s[5], u1) < 0.5);                       // the blend fills the gap a little
  CHECK(sdf_distance(s[5], u2) == Approx(0).margin(1e-12));  // far from the blend: a plain union
  CHECK(sdf_distance(s[6], d2) == Approx(-0.5));
  CHECK(sdf_distance(s[6], d1) == Approx(0.5));
}

TEST_CASE("a raymarch case reads with its defaults and its resolved form reads back the same",
          "[raymarch]") {
  const Case c = test::load(
      ray_case("  volume: {sdf: [{torus: {center: [0.5, 0.5, 0.5], major: 0.3, minor: 0.1}}, "
               "{smooth_union: {k: 0.1, of: [{sphere: {center: [0.5, 0.5, 0.5], radius: 0.2}}, "
               "{capsule: {a: [0, 0, 0], b: [1, 1, 1], radius: 0.05}}]}}]}\n"
               "  mode: isosurface\n  camera: {position: [2, 2, 2]}\n",
               11));
  CHECK(c.raymarch.look_at_auto);
  CHECK(c.raymarch.look_at == std::array<double, 3>{0.5, 0.5, 0.5});
  CHECK(c.raymarch.width == 640);
  CHECK(c.raymarch.height == 480);
  CHECK(c.raymarch.colormap == "viridis");
  CHECK(c.raymarch.range_auto);
  const Case again = test::load(c.resolved_yaml);
  CHECK(again.resolved_yaml == c.resolved_yaml);
  // Overrides reach into the section, as for any key.
  const Case o = test::load(c.resolved_yaml, {"raymarch.camera.width=33", "raymarch.mode=mip"});
  CHECK(o.raymarch.width == 33);
  CHECK(o.raymarch.mode == "mip");
}

TEST_CASE("raymarch and render case errors", "[raymarch]") {
  using test::error_of;
  const std::string vol = "  volume: {expr: \"x\"}\n";
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2], height: 0}\n")) ==
        "case.yaml:6:41: raymarch.camera.height: expected an integer ≥ 1, got 0");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2], up: [-1, -1, -1]}\n")) ==
        "case.yaml:6:37: raymarch.camera.up: up [-1, -1, -1] is parallel to the view direction "
        "(look_at − position): it cannot say which way is up; choose another up");
  CHECK(error_of(ray_case(vol + "  camera: {position: [0.5, 0.5, 3]}\n")) ==
        "case.yaml:6:11: raymarch.camera: the default up [0, 0, 1] is parallel to the view "
        "direction (look_at − position); give camera.up");
  CHECK(error_of(ray_case(vol + "  camera: {position: [0.5, 0.5, 0.5]}\n")) ==
        "case.yaml:6:22: raymarch.camera.position: the camera's position and look_at are the same "
        "point: no view direction");
  CHECK(
      error_of(ray_case(vol + "  camera: {position: [2, 2, 2]}\n  transfer: {colormap: jet}\n")) ==
      "case.yaml:7:24: raymarch.transfer.colormap: expected one of viridis, inferno, grayscale, "
      "coolwarm, got 'jet'");
  CHECK(error_of(ray_case("  volume: {sdf: [{capsule: {a: [0, 0, 0], b: [1, 1, 1], radius: -1}}]}\n"
                          "  camera: {position: [2, 2, 2]}\n")) ==
        "case.yaml:5:65: raymarch.volume.sdf[0].capsule.radius: expected a number > 0, got -1");
  CHECK(error_of(
            ray_case("  volume: {sdf: [{cone: {radius: 1}}]}\n  camera: {position: [2, 2, 2]}\n"))
            .find("raymarch.volume.sdf[0].cone: unknown key; expected one of sphere, box, torus") !=
        std::string::npos);
  CHECK(error_of(ray_case("  volume: {expr: \"x + q\"}\n  camera: {position: [2, 2, 2]}\n"))
            .find("raymarch.volume.expr") != std::string::npos);
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2]}\n  mode: surface\n"))
            .find("expected one of emission-absorption, mip, isosurface") != std::string::npos);
  CHECK(
      error_of(ray_case(vol + "  camera: {position: [2, 2, 2]}\n  transfer: {range: [1, 0]}\n")) ==
      "case.yaml:7:21: raymarch.transfer.range: expected low < high, got [1, 0]");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2]}\n  step: 0.001\n")) ==
        "case.yaml:7:9: raymarch.step: expected at least 0.01 (cell widths), got 0.001");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2]}\n  transfer: {density: -1}\n")) ==
        "case.yaml:7:23: raymarch.transfer.density: expected a number from 0 to 1e9, got -1");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2], look_at: [0, 0, -1e20]}\n")) ==
        "case.yaml:6:42: raymarch.camera.look_at: expected coordinates within ±1e12, got -1e+20");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2], fov_deg: 180}\n")) ==
        "case.yaml:6:42: raymarch.camera.fov_deg: expected a vertical field of view in degrees, "
        "0 < fov_deg < 180, got 180");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2], width: 16385}\n")) ==
        "case.yaml:6:40: raymarch.camera.width: expected at most 16384 pixels, got 16385");
  CHECK(error_of(ray_case(vol + "  camera: {position: [2, 2, 2]}\ninitial: {value: 1}\n")) ==
        "case.yaml:7:1: initial: does not apply to workload raymarch (the volume is "
        "raymarch.volume)");
  CHECK(error_of("workload: heat\ngrid: {dims: [8, 8, 8]}\nheat: {alpha: 1, steps: 4}\n"
                 "render: {camera: {position: [2, 2, 2]}}\n") ==
        "case.yaml:4:9: render: missing required key 'every'");
  CHECK(error_of("workload: heat\ngrid: {dims: [8, 8, 8]}\nheat: {alpha: 1, steps: 4}\n"
                 "render: {every: 2, volume: {expr: x}, camera: {position: [2, 2, 2]}}\n") ==
        "case.yaml:4:20: render.volume: unknown key; expected one of every, field, mode, "
        "isovalue, camera, step, transfer, background, width, height, interpolation");
}

TEST_CASE("a file volume is a field of a fields.h5 gridforge wrote", "[raymarch]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gf_test_raymarch_file";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string tail =
      "  mode: mip\n  camera: {position: [0.5, -1.5, 0.6], width: 64, height: 48}\n";
  const Case from_expr = test::load(ray_case("  volume: {expr: \"x*x + 2*y - z\"}\n" + tail, 13));
  const std::vector<double> u = raymarch_volume<double>(from_expr);
  {
    io::FieldSeriesWriter w(io::SeriesSpec{dir, "heat", from_expr.grid, Precision::Float64, false,
                                           true, "test", std::nullopt});
    w.write(7, 0.5, {{"u", u.data(), Precision::Float64}});
  }
  const Case from_file =
      test::load(ray_case("  volume: {file: {path: " + (dir / "fields.h5").string() +
                              ", dataset: /steps/000007/u}}\n" + tail,
                          13));
  CHECK(from_file.raymarch.volume.kind == RayVolumeSpec::Kind::File);
  CHECK(raymarch_volume<double>(from_file) == u);
  const io::Image a = render(from_expr), b = render(from_file);
  CHECK(a.rgba == b.rgba);
  CHECK(test::error_of(ray_case("  volume: {file: {path: " + (dir / "fields.h5").string() +
                                    ", dataset: /steps/000008/u}}\n" + tail,
                                13))
            .find("no dataset '/steps/000008/u'") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("in-situ frames: every render.every steps, of the field as it is then", "[raymarch]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gf_test_raymarch_insitu";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Case c = test::load(
      "workload: heat\nprecision: float64\ngrid: {dims: [12, 12, 12]}\n"
      "initial: {expr: \"exp(-((x-0.5)^2+(y-0.5)^2+(z-0.5)^2)/0.05)\"}\n"
      "heat: {alpha: 0.01, steps: 10}\noutput: {every: 0, formats: [hdf5]}\n"
      "render: {every: 4, camera: {position: [2, -1, 1.5], width: 40, height: 30}, "
      "transfer: {colormap: grayscale, density: 30}}\n");
  auto be = make_cpu_backend<double>();
  RunOptions opts{dir, false, "test", nullptr};
  const nlohmann::json timing = run_case<double>(c, *be, opts);
  CHECK(timing["render"]["frames"] == 3);  // steps 0, 4 and 8
  // The auto range is the run's own observation of the field (no reduction of the frames' own).
  CHECK(timing["render"]["range_reductions"] == 0);
  for (const char* k : {"range", "render", "download", "encode", "encode_cpu", "write"})
    CHECK(timing["render"]["per_frame_ms"].contains(k));
  CHECK(timing["render"]["encode_threads"] >= 1);
  CHECK(timing["render"]["png_bytes_per_frame"] > 0);
  for (const char* f :
       {"frames/case_000000.png", "frames/case_000004.png", "frames/case_000008.png"})
    CHECK(fs::exists(dir / f));
  CHECK_FALSE(fs::exists(dir / "frames/case_000010.png"));
  // Step 0's frame is the initial state rendered with its own min and max (range auto).
  const std::vector<double> u0 = initial_state<double>(c);
  Field<double> f = be->make_field(c.grid, "u");
  be->upload(u0.data(), f);
  FrameRenderer<double> r(c.render, c.grid, *be, false);
  const io::Image want = r.render(f);
  const io::Image got = io::read_png(dir / "frames/case_000000.png");
  REQUIRE(got.width == 40);
  double worst = 0;
  for (std::size_t p = 0; p < got.rgba.size(); ++p)
    if (p % 4 != 3)
      worst = std::max(worst,
                       std::fabs(double(got.rgba[p]) - std::clamp(double(want.rgba[p]), 0.0, 1.0)));
  CHECK(worst <= 0.5 / 255 + 1e-6);
  // ... and the field has moved on by step 8: that frame differs.
  const io::Image later = io::read_png(dir / "frames/case_000008.png");
  CHECK(later.rgba != got.rgba);
  fs::remove_all(dir);
}

TEST_CASE("in-situ frames: a frame's host image stays taken until its PNG task is done",
          "[raymarch]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gf_test_raymarch_images";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Case c = test::load(
      "workload: heat\nprecision: float32\ngrid: {dims: [11, 9, 10]}\n"
      "initial: {expr: \"exp(-((x-0.5)^2+(y-0.5)^2+(z-0.5)^2)/0.05)\"}\n"
      "heat: {alpha: 0.01, steps: 10}\n"
      "render: {every: 1, camera: {position: [2, -1, 1.5], width: 33, height: 21}, "
      "transfer: {colormap: inferno, range: [0, 1], density: 30}}\n");
  auto be = make_cpu_backend<float>();
  std::vector<float> u = initial_state<float>(c);
  Field<float> f = be->make_field(c.grid, "u");
  std::vector<std::function<void()>> held;  // the queue: tasks run when the test says
  const auto queue = [&](std::function<void()> t) { held.push_back(std::move(t)); };
  std::vector<io::Image> want;
  {
    InSituFrames<float> frames(c, *be, dir);
    FrameRenderer<float> r(c.render, c.grid, *be, false);
    // Each frame another field: the frames' images must not be each other's.
    auto step = [&](int s) {
      for (float& v : u) v *= 0.8f;
      be->upload(u.data(), f);
      want.push_back(r.render(f));
      frames.write(s, f, queue);
    };
    step(0);
    step(1);  // the first image is taken (its task held): a second is made
    REQUIRE(held.size() == 2);
    // A third frame waits for an image: the first task, run on another thread, frees one.
    std::thread runner([first = std::move(held[0])]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      first();
      first = nullptr;  // the lease goes with the task
    });
    step(2);
    runner.join();
    held[1] = nullptr;  // a task dropped without running (a writer that failed) frees its image too
    step(3);
    for (std::size_t i = 2; i < held.size(); ++i) held[i]();
    held.clear();
    const nlohmann::json j = frames.summary();
    CHECK(j["frames"] == 4);
    CHECK(j["image_wait_s"] > 0.02);
  }
  CHECK(want[0].rgba != want[2].rgba);  // a fixed range: each frame dimmer than the last
  CHECK(want[2].rgba != want[3].rgba);
  for (int s : {0, 2, 3}) {
    INFO("frame " << s);
    const io::Image got = io::read_png(frame_path(dir, c.name, s));
    const io::Image& w = want[std::size_t(s)];
    REQUIRE(got.rgba.size() == w.rgba.size());
    std::size_t off = 0;
    for (std::size_t p = 0; p < got.rgba.size(); ++p)
      if (p % 4 != 3)
        off += std::fabs(double(got.rgba[p]) - std::clamp(double(w.rgba[p]), 0.0, 1.0)) > 0.5 / 255 + 1e-6;
    CHECK(off == 0);
  }
  CHECK_FALSE(fs::exists(frame_path(dir, c.name, 1)));  // its task was dropped
  fs::remove_all(dir);
}

TEST_CASE("PNG rows run top to bottom, and image.h5 holds float RGBA", "[raymarch]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gf_test_raymarch_png";
  fs::create_directories(dir);
  io::Image img;
  img.width = 5;
  img.height = 3;
  img.rgba.assign(5 * 3 * 4, 0.0f);
  for (int x = 0; x < 5; ++x) {
    img.rgba[4 * x + 0] = 1.0f;            // the top row red
    img.rgba[4 * (2 * 5 + x) + 2] = 0.5f;  // the bottom row half blue
  }
  io::write_png(dir / "a.png", img);
  const io::Image back = io::read_png(dir / "a.png");
  REQUIRE(back.width == 5);
  REQUIRE(back.height == 3);
  CHECK(back.rgba[0] == 1.0f);
  CHECK(back.rgba[4 * (2 * 5) + 2] == Approx(128 / 255.0));
  CHECK(back.rgba[4 * (2 * 5) + 0] == 0.0f);
  io::write_image_h5(dir / "image.h5", img);
  hid_t f = H5Fopen((dir / "image.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  hid_t ds = H5Dopen2(f, "image", H5P_DEFAULT);
  hid_t sp = H5Dget_space(ds);
  hsize_t dims[3];
  CHECK(H5Sget_simple_extent_ndims(sp) == 3);
  H5Sget_simple_extent_dims(sp, dims, nullptr);
  CHECK(dims[0] == 3);
  CHECK(dims[1] == 5);
  CHECK(dims[2] == 4);
  std::vector<float> data(60);
  H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
  CHECK(data == img.rgba);
  H5Sclose(sp);
  H5Dclose(ds);
  H5Fclose(f);
  CHECK_FALSE(fs::exists(dir / ".a.png.tmp"));
  fs::remove_all(dir);
}

TEST_CASE("image comparison: PSNR and the fraction of pixels off by more than 2/255",
          "[raymarch]") {
  io::Image a;
  a.width = 100;
  a.height = 10;
  a.rgba.assign(100 * 10 * 4, 0.5f);
  io::Image b = a;
  io::ImageDiff d = io::compare_images(b, a);
  CHECK(std::isinf(d.psnr_db));
  CHECK(d.pass);
  b.rgba[0] += 1.5f / 255;  // within 2/255: not off
  b.rgba[5] += 0.1f;        // one channel of pixel 1 off
  d = io::compare_images(b, a);
  CHECK(d.off_fraction == Approx(1.0 / 1000));
  const double mse = (std::pow(1.5 / 255, 2) + 0.01) / 3000;
  CHECK(d.psnr_db == Approx(10 * std::log10(1 / mse)).epsilon(1e-4));
  CHECK(d.pass);
  for (int p = 0; p < 20; ++p) b.rgba[4 * p + 1] = 0.0f;  // 2 % of the pixels off by 0.5
  d = io::compare_images(b, a);
  CHECK_FALSE(d.pass);
  b = a;
  b.rgba[7] = NAN;  // alpha is not compared
  CHECK(io::compare_images(b, a).pass);
  b.rgba[6] = NAN;
  CHECK(io::compare_images(b, a).max_abs == 1.0);
}

}  // namespace
}  // namespace gf

// A ray's transfer constants (Transfer<T>): t multiplies by 1/(hi − lo), and
// is exactly 1 from the top up (mip stops marching there), 0 at and below the
// low end and for NaN; the opacity by exp2 is the opacity by exp to round-off.
TEST_CASE("the transfer function's place in the range and opacity, worked out once a ray",
          "[raymarch]") {
  for (const auto& [lo, hi] : {std::pair{0.0, 1.0}, {0.1, 0.7}, {-3.0, 0.3}, {0.2, 0.2000001}}) {
    gf::RayArgs<float> a;
    a.lo = float(lo);
    a.hi = float(hi);
    a.density = 37;
    const gf::Transfer<float> tr(a);
    CHECK(tr.t(a.hi) == 1.0f);
    CHECK(tr.t(std::nextafter(a.hi, 1e30f)) == 1.0f);
    CHECK(tr.t(a.hi + 5) == 1.0f);
    CHECK(tr.t(a.lo) == 0.0f);
    CHECK(tr.t(a.lo - 1) == 0.0f);
    CHECK(tr.t(std::nanf("")) == 0.0f);
    for (int k = 0; k <= 100; ++k) {
      const float s = a.lo + (a.hi - a.lo) * float(k) / 100.0f;
      const float t = tr.t(s);
      const double exact = (double(s) - double(a.lo)) / (double(a.hi) - double(a.lo));
      CHECK(t >= 0.0f);
      CHECK(t <= 1.0f);
      CHECK(std::fabs(t - std::clamp(exact, 0.0, 1.0)) <= 4e-7 * (1 + 1e-6 / (hi - lo)));
      const float ds = 0.013f;
      const double by_exp = std::exp(-double(a.density) * t * ds);
      CHECK(std::fabs(double(std::exp2(tr.k2 * t * ds)) - by_exp) <= 4e-7);
    }
  }
}
