// In-situ frames of 1D and 2D grids (docs/cases.md, render): a colormapped
// image of a 2D field, a line plot of a 1D one, drawn on the host from the
// field's values with the point formulas of kernels/raymarch/plot_ops.hpp.
// A CPU run and a GPU run draw the same image from the same values.
#pragma once
#include <cstdint>
#include <utility>

#include "grid/grid.hpp"
#include "io/image.hpp"
#include "io/raymarch_spec.hpp"

namespace gf {

// The value range of a frame: the spec's, or (range auto) the min and max of
// u's `count` values; a constant field gets [u, u + 1].
template <class T>
std::pair<double, double> frame_range(const RaySpec& s, const T* u, std::int64_t count);

// The frame of field u (the whole grid g, dense, x fastest) with the values
// [lo, hi] mapped to the colormap (2D) or the plot's height (1D); s.ndim says which.
template <class T>
io::Image draw_frame(const RaySpec& s, const Grid& g, const T* u, double lo, double hi);

// The colours of a 1D frame (tests look for them).
inline constexpr float kPlotLine[3] = {0.122f, 0.467f, 0.706f};  // matplotlib's C0
inline constexpr float kPlotAxes[3] = {0.2f, 0.2f, 0.2f};
inline constexpr float kPlotZero[3] = {0.75f, 0.75f, 0.75f};  // u = 0 when in range
inline constexpr float kPlotPaper[3] = {1.0f, 1.0f, 1.0f};

}  // namespace gf
