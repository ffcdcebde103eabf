// The point formulas of the in-situ frames of 1D and 2D grids (docs/cases.md,
// render): a pixel of a 2D field's colormapped image, and where a 1D field's
// line plot puts a value. The frames are drawn on the host from the field's
// values (solvers/frame_plot.cpp), so a CPU and a GPU run draw the same image
// from the same values; these are GF_HD so that a device executor could call
// them unchanged.
#pragma once
#include <cstdint>

#include "grid/view.hpp"
#include "kernels/ops/hd.hpp"
#include "kernels/raymarch/colormap.hpp"

namespace gf {

// Everything a pixel of a 2D frame needs besides the field's view.
struct ImageArgs {
  int width = 1, height = 1;
  Colormap colormap = Colormap::Viridis;
  double lo = 0, hi = 1;  // values mapped to 0 and 1 of the colormap (hi > lo)
  bool bilinear = false;  // else the nearest grid point
};

// Where the centre of pixel p (of `pixels` along an axis of n points) falls,
// in points: point i covers the pixels whose centres lie in [i, i + 1)·pixels/n.
GF_HD double pixel_to_point(int p, int pixels, std::int64_t n) {
  return (double(p) + 0.5) * double(n) / double(pixels) - 0.5;
}

// The nearest point to pixel p: exact k×k blocks when pixels = k·n.
GF_HD std::int64_t nearest_point(int p, int pixels, std::int64_t n) {
  const std::int64_t i = ((2 * std::int64_t(p) + 1) * n) / (2 * std::int64_t(pixels));
  return i < 0 ? 0 : (i < n ? i : n - 1);
}

// The colour of 2D frame pixel (px, py); row 0 is the top of the image, at
// the largest y, as a plot with y up shows it. Opaque.
template <class T>
GF_HD void image_pixel(const ImageArgs& a, const FieldView<const T>& v, int px, int py,
                       float out[4]) {
  const int row = a.height - 1 - py;  // counted from the bottom
  double u;
  if (!a.bilinear) {
    u = double(v(nearest_point(px, a.width, v.n[0]), nearest_point(row, a.height, v.n[1])));
  } else {
    double f[2];
    std::int64_t i0[2], i1[2];
    const int p[2] = {px, row}, pixels[2] = {a.width, a.height};
    for (int ax = 0; ax < 2; ++ax) {
      const std::int64_t n = v.n[ax];
      double x = pixel_to_point(p[ax], pixels[ax], n);
      x = x > 0 ? (x < double(n - 1) ? x : double(n - 1)) : 0.0;
      i0[ax] = std::int64_t(x);
      i1[ax] = i0[ax] + 1 < n ? i0[ax] + 1 : i0[ax];
      f[ax] = x - double(i0[ax]);
    }
    const double b = double(v(i0[0], i0[1])) * (1 - f[0]) + double(v(i1[0], i0[1])) * f[0];
    const double t = double(v(i0[0], i1[1])) * (1 - f[0]) + double(v(i1[0], i1[1])) * f[0];
    u = b * (1 - f[1]) + t * f[1];
  }
  colormap_rgb(a.colormap, float((u - a.lo) / (a.hi - a.lo)), out);
  out[3] = 1.0f;
}

// The plot area of a 1D frame and its value range: pixel columns [left,
// right] span x from the first point to the last, rows [top, bottom] the
// values from hi down to lo.
struct LineArgs {
  int width = 1, height = 1;
  int left = 0, right = 0, top = 0, bottom = 0;
  double lo = 0, hi = 1;
};

// The row (fractional, top 0) of value u, clamped to the plot area.
GF_HD double line_row(const LineArgs& a, double u) {
  double t = (u - a.lo) / (a.hi - a.lo);
  t = t > 0 ? (t < 1 ? t : 1) : 0;  // NaN reads as the bottom
  return double(a.bottom) - t * double(a.bottom - a.top);
}

// The value the line plot shows at pixel column px of the plot area
// (left ≤ px ≤ right): u linear between the grid points.
template <class T>
GF_HD double line_value(const LineArgs& a, const FieldView<const T>& v, int px) {
  const std::int64_t n = v.n[0];
  if (n == 1 || a.right == a.left) return double(v(0));
  double x = double(px - a.left) * double(n - 1) / double(a.right - a.left);
  x = x > 0 ? (x < double(n - 1) ? x : double(n - 1)) : 0.0;
  std::int64_t i = std::int64_t(x);
  if (i > n - 2) i = n - 2;
  const double f = x - double(i);
  return double(v(i)) * (1 - f) + double(v(i + 1)) * f;
}

}  // namespace gf
