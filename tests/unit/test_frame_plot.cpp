// In-situ frames of 1D and 2D grids (solvers/frame_plot.hpp): a known field
// gives known pixel colours, the line plot passes through the pixels its
// values say, and a run writes the frames.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "case_test_util.hpp"
#include "io/image.hpp"
#include "kernels/backend.hpp"
#include "kernels/raymarch/colormap.hpp"
#include "kernels/raymarch/plot_ops.hpp"
#include "solvers/frame_plot.hpp"
#include "solvers/run.hpp"
#include "solvers/stepper.hpp"

namespace gf {
namespace {

const float* pixel(const io::Image& img, int x, int y) {
  return &img.rgba[4 * (std::size_t(y) * std::size_t(img.width) + std::size_t(x))];
}

bool same_rgb(const float* p, const float* rgb, float tol = 1e-6f) {
  for (int c = 0; c < 3; ++c)
    if (std::fabs(p[c] - rgb[c]) > tol) return false;
  return true;
}

Grid grid_of(std::int64_t nx, std::int64_t ny = 1) {
  Grid g;
  g.ndim = ny > 1 ? 2 : 1;
  g.n = {nx, ny, 1};
  return g;
}

RaySpec spec(int ndim, int width, int height) {
  RaySpec s;
  s.enabled = true;
  s.ndim = ndim;
  s.width = width;
  s.height = height;
  s.colormap = "grayscale";
  return s;
}

}  // namespace

TEST_CASE("2D frame: each grid point a block of its colour, y up", "[frames]") {
  // 3×2 points, values 0.1·(i + 3j): 6×4 pixels are 2×2 blocks.
  const Grid g = grid_of(3, 2);
  std::vector<double> u(6);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) u[std::size_t(g.index(i, j))] = 0.1 * (i + 3 * j);
  const RaySpec s = spec(2, 6, 4);
  const io::Image img = draw_frame(s, g, u.data(), 0.0, 1.0);
  REQUIRE(img.width == 6);
  REQUIRE(img.height == 4);
  for (int py = 0; py < 4; ++py)
    for (int px = 0; px < 6; ++px) {
      const int i = px / 2, j = 1 - py / 2;  // row 0 is the top: y = 1
      const float* p = pixel(img, px, py);
      INFO("pixel " << px << ", " << py);
      CHECK(p[0] == Approx(0.1 * (i + 3 * j)).margin(1e-6));
      CHECK(p[0] == p[1]);
      CHECK(p[3] == 1.0f);
    }
  // The colormap is the ray marcher's (one formula): the range's ends map to its ends.
  RaySpec v = spec(2, 3, 2);
  v.colormap = "viridis";
  const io::Image ends = draw_frame(v, g, u.data(), 0.0, 0.5);
  float lo[3], hi[3];
  colormap_rgb(Colormap::Viridis, 0.0f, lo);
  colormap_rgb(Colormap::Viridis, 1.0f, hi);
  CHECK(same_rgb(pixel(ends, 0, 1), lo));  // u = 0 at the bottom left
  CHECK(same_rgb(pixel(ends, 2, 0), hi));  // u = 0.5 at the top right, clamped
}

TEST_CASE("2D frame: bilinear interpolates between points, nearest does not", "[frames]") {
  // u = i on 2×2 points; 4 pixels across: pixel centres at point 0.25·(2p + 1)·2/4 − 0.5.
  const Grid g = grid_of(2, 2);
  const std::vector<double> u = {0, 1, 0, 1};
  RaySpec s = spec(2, 8, 2);
  s.interpolation = "bilinear";
  const io::Image img = draw_frame(s, g, u.data(), 0.0, 1.0);
  for (int px = 0; px < 8; ++px) {
    const double x = std::clamp(pixel_to_point(px, 8, 2), 0.0, 1.0);
    CHECK(pixel(img, px, 0)[0] == Approx(x).margin(1e-6));
  }
  s.interpolation = "nearest";
  const io::Image flat = draw_frame(s, g, u.data(), 0.0, 1.0);
  for (int px = 0; px < 8; ++px) CHECK(pixel(flat, px, 1)[0] == (px < 4 ? 0.0f : 1.0f));
}

TEST_CASE("1D frame: the line passes through the pixels of its values", "[frames]") {
  // u = x on 11 points over [0, 1], range [-0.5, 1]: a straight line from the
  // bottom-left to the top-right of the plot area, a grey line at u = 0.
  const Grid g = grid_of(11);
  std::vector<double> u(11);
  for (int i = 0; i < 11; ++i) u[std::size_t(i)] = 0.1 * i;
  const RaySpec s = spec(1, 400, 301);
  const io::Image img = draw_frame(s, g, u.data(), -0.5, 1.0);
  const int m = 301 / 12;  // the margin
  const int left = m, right = 399 - m, top = m, bottom = 300 - m;
  int lit_columns = 0;
  for (int x = left; x <= right; ++x) {
    const double t = double(x - left) / (right - left);  // u at this column
    const int row = int(std::lround(bottom - (t + 0.5) / 1.5 * (bottom - top)));
    INFO("column " << x << ", row " << row);
    CHECK(same_rgb(pixel(img, x, row), kPlotLine));
    // Nothing of the line far from it.
    if (row - 8 >= top) CHECK_FALSE(same_rgb(pixel(img, x, row - 8), kPlotLine));
    lit_columns += same_rgb(pixel(img, x, row), kPlotLine);
  }
  CHECK(lit_columns == right - left + 1);
  // u = 0 two thirds of the way down, where the line is not.
  const int zero = int(std::lround(bottom - 0.5 / 1.5 * (bottom - top)));
  CHECK(same_rgb(pixel(img, right - 5, zero), kPlotZero));
  CHECK(same_rgb(pixel(img, left - 1, (top + bottom) / 2), kPlotAxes));  // the axes' box
  CHECK(same_rgb(pixel(img, (left + right) / 2, bottom + 1), kPlotAxes));
  CHECK(same_rgb(pixel(img, 1, 1), kPlotPaper));
}

TEST_CASE("frame range: auto is the field's min and max; a constant field gets [u, u + 1]",
          "[frames]") {
  RaySpec s = spec(1, 64, 64);
  const std::vector<float> u = {3, -1, 2};
  CHECK(frame_range(s, u.data(), 3) == std::pair<double, double>(-1, 3));
  const std::vector<float> c = {2, 2};
  CHECK(frame_range(s, c.data(), 2) == std::pair<double, double>(2, 3));
  s.range_auto = false;
  s.range_lo = 0;
  s.range_hi = 10;
  CHECK(frame_range(s, u.data(), 3) == std::pair<double, double>(0, 10));
}

TEST_CASE("a 2D and a 1D run write their frames: the field drawn at those steps", "[frames]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gf_test_frame_plot";
  fs::remove_all(dir);
  for (const auto& [name, grid] : {std::pair{"2d", "{dims: [9, 5]}"}, {"1d", "{dims: [17]}"}}) {
    const Case c = test::load(std::string("workload: heat\nprecision: float32\ngrid: ") + grid +
                              "\ninitial: {expr: \"x*(1-x)\"}\nheat: {alpha: 0.1, steps: 6}\n"
                              "output: {every: 0, formats: [hdf5]}\nrender: {every: 3}\n");
    auto be = make_cpu_backend<float>();
    fs::create_directories(dir / name);
    RunOptions opts{dir / name, false, "test", nullptr};
    const nlohmann::json timing = run_case<float>(c, *be, opts);
    CHECK(timing["render"]["frames"] == 3);  // steps 0, 3 and 6
    CHECK(timing["render"]["mode"] == (c.grid.ndim == 2 ? "image" : "line plot"));
    const io::Image got = io::read_png(dir / name / "frames/case_000000.png");
    CHECK(got.width == c.render.width);
    CHECK(got.height == c.render.height);
    // Step 0's frame is the initial state drawn with its own min and max.
    const std::vector<float> u0 = initial_state<float>(c);
    const auto [lo, hi] = frame_range(c.render, u0.data(), std::int64_t(u0.size()));
    const io::Image want = draw_frame(c.render, c.grid, u0.data(), lo, hi);
    double worst = 0;
    for (std::size_t p = 0; p < got.rgba.size(); ++p)
      if (p % 4 != 3) worst = std::max(worst, std::fabs(double(got.rgba[p]) - want.rgba[p]));
    CHECK(worst <= 0.5 / 255 + 1e-6);
    CHECK(io::read_png(dir / name / "frames/case_000006.png").rgba != got.rgba);
  }
  fs::remove_all(dir);
}

}  // namespace gf
