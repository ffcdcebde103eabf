#include "solvers/frame_plot.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/raymarch/plot_ops.hpp"

namespace gf {

namespace {

Colormap colormap_of(const std::string& name) {
  return name == "inferno"     ? Colormap::Inferno
         : name == "grayscale" ? Colormap::Grayscale
         : name == "coolwarm"  ? Colormap::Coolwarm
                               : Colormap::Viridis;
}

io::Image blank(int width, int height, const float rgb[3]) {
  io::Image img;
  img.width = width;
  img.height = height;
  img.rgba.resize(std::size_t(width) * std::size_t(height) * 4);
  for (std::size_t p = 0; p < img.rgba.size(); p += 4) {
    for (int c = 0; c < 3; ++c) img.rgba[p + c] = rgb[c];
    img.rgba[p + 3] = 1.0f;
  }
  return img;
}

void put(io::Image& img, int x, int y, const float rgb[3]) {
  if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
  float* d = &img.rgba[4 * (std::size_t(y) * std::size_t(img.width) + std::size_t(x))];
  for (int c = 0; c < 3; ++c) d[c] = rgb[c];
}

template <class T>
io::Image draw_image(const RaySpec& s, const Grid& g, const T* u, double lo, double hi) {
  ImageArgs a;
  a.width = int(s.width);
  a.height = int(s.height);
  a.colormap = colormap_of(s.colormap);
  a.lo = lo;
  a.hi = hi;
  a.bilinear = s.interpolation == "bilinear";
  const FieldView<const T> v(u, g.layout());
  io::Image img = blank(a.width, a.height, kPlotPaper);
#pragma omp parallel for schedule(static)
  for (int py = 0; py < a.height; ++py)
    for (int px = 0; px < a.width; ++px)
      image_pixel(a, v, px, py, &img.rgba[4 * (std::size_t(py) * std::size_t(a.width) + px)]);
  return img;
}

// White paper, a box around the plot area with ticks at every quarter, a
// grey line at u = 0 when the range holds it, and the curve: in each pixel
// column the rows from the previous column's value to this one's, widened by
// lw rows on each side (a line without gaps at any slope).
template <class T>
io::Image draw_line(const RaySpec& s, const Grid& g, const T* u, double lo, double hi) {
  LineArgs a;
  a.width = int(s.width);
  a.height = int(s.height);
  const int m = std::max(4, std::min(a.width, a.height) / 12);
  a.left = m;
  a.right = a.width - 1 - m;
  a.top = m;
  a.bottom = a.height - 1 - m;
  a.lo = lo;
  a.hi = hi;
  io::Image img = blank(a.width, a.height, kPlotPaper);
  const int tick = std::max(2, m / 3);
  for (int x = a.left - 1; x <= a.right + 1; ++x) {
    put(img, x, a.top - 1, kPlotAxes);
    put(img, x, a.bottom + 1, kPlotAxes);
  }
  for (int y = a.top - 1; y <= a.bottom + 1; ++y) {
    put(img, a.left - 1, y, kPlotAxes);
    put(img, a.right + 1, y, kPlotAxes);
  }
  for (int q = 0; q <= 4; ++q) {
    const int x = a.left + int(std::lround(q * (a.right - a.left) / 4.0));
    const int y = a.top + int(std::lround(q * (a.bottom - a.top) / 4.0));
    for (int t = 1; t <= tick; ++t) {
      put(img, x, a.bottom + 1 + t, kPlotAxes);
      put(img, a.left - 1 - t, y, kPlotAxes);
    }
  }
  if (lo < 0 && hi > 0) {
    const int y = int(std::lround(line_row(a, 0.0)));
    for (int x = a.left; x <= a.right; ++x) put(img, x, y, kPlotZero);
  }
  const FieldView<const T> v(u, g.layout());
  const int lw = a.height / 200;  // 1 row from 200 pixels up: 3 rows thick
  int prev = -1;
  for (int x = a.left; x <= a.right; ++x) {
    const int r = int(std::lround(line_row(a, line_value(a, v, x))));
    const int r0 = std::max(a.top, std::min(r, prev < 0 ? r : prev) - lw);
    const int r1 = std::min(a.bottom, std::max(r, prev < 0 ? r : prev) + lw);
    for (int y = r0; y <= r1; ++y) put(img, x, y, kPlotLine);
    prev = r;
  }
  return img;
}

}  // namespace

template <class T>
std::pair<double, double> frame_range(const RaySpec& s, const T* u, std::int64_t count) {
  double lo = s.range_lo, hi = s.range_hi;
  if (s.range_auto) {
    lo = INFINITY;
    hi = -INFINITY;
    for (std::int64_t q = 0; q < count; ++q) {
      lo = std::min(lo, double(u[q]));
      hi = std::max(hi, double(u[q]));
    }
  }
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {  // a constant (or empty) field
    lo = std::isfinite(lo) ? lo : 0.0;
    hi = lo + 1;
  }
  return {lo, hi};
}

template <class T>
io::Image draw_frame(const RaySpec& s, const Grid& g, const T* u, double lo, double hi) {
  return s.ndim == 1 ? draw_line(s, g, u, lo, hi) : draw_image(s, g, u, lo, hi);
}

template std::pair<double, double> frame_range<float>(const RaySpec&, const float*, std::int64_t);
template std::pair<double, double> frame_range<double>(const RaySpec&, const double*, std::int64_t);
template io::Image draw_frame<float>(const RaySpec&, const Grid&, const float*, double, double);
template io::Image draw_frame<double>(const RaySpec&, const Grid&, const double*, double, double);

}  // namespace gf
