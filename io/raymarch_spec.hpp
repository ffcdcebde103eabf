// The raymarch: section of a raymarch case and the render: section of a
// heat, stencil, wave, pde or laplace case (SPEC §3), loaded and checked, defaults filled.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace gf {

// One node of a signed-distance scene: a primitive or a combination of its
// children. Lengths in the grid's physical units.
struct SdfNode {
  enum class Kind {
    Sphere,
    Box,
    Torus,
    Capsule,
    Plane,
    Union,
    Intersection,
    Difference,
    SmoothUnion
  };
  Kind kind = Kind::Sphere;
  std::array<double, 3> a{0, 0, 0};  // sphere/box/torus: center; capsule: a; plane: point
  std::array<double, 3> b{0, 0, 0};  // box: half; capsule: b; torus: axis; plane: normal (unit)
  double r = 0;                      // sphere, capsule: radius; torus: major radius
  double r2 = 0;                     // torus: minor radius
  double k = 0;                      // smooth union: blend radius
  std::vector<SdfNode> children;     // combinations
};

struct RayVolumeSpec {
  enum class Kind { Expr, Sdf, File };
  Kind kind = Kind::Expr;
  std::string expr;          // Expr: an expression of x, y, z (checked)
  SourceLoc expr_loc;        // where it was written, for evaluation errors
  std::vector<SdfNode> sdf;  // Sdf: the scene, a union of these
  std::string path;          // File: absolute
  std::string dataset;
};

struct RaySpec {
  bool enabled = false;                      // render: present (always true for raymarch:)
  std::int64_t every = 0;                    // render: steps (iterations) between frames
  // render: the grid's dimension, which says what a frame is: 3 a ray-marched
  // volume (the camera and the keys below it), 2 a colormapped image of the
  // field, 1 a line plot of u against x (width, height, range; 2D: colormap,
  // interpolation). raymarch: always 3.
  int ndim = 3;
  std::string interpolation = "nearest";     // 2D frames: nearest | bilinear
  // render: the field the frames draw, by its name (render.field, checked
  // against the workload's fields); "" when not given: the first field.
  std::string field;
  RayVolumeSpec volume;                      // raymarch only
  std::string mode = "emission-absorption";  // | mip | isosurface
  double isovalue = 0;
  // camera
  std::array<double, 3> position{0, 0, 0}, look_at{0, 0, 0}, up{0, 0, 1};
  bool look_at_auto = true;  // the centre of the grid
  double fov_deg = 40;       // vertical
  std::int64_t width = 640, height = 480;  // 1D/2D frames: render.width, render.height
  double step = 0.5;  // in cell widths (the smallest spacing)
  std::string colormap = "viridis";
  bool range_auto = true;  // the volume's min and max (each frame's, for render)
  double range_lo = 0, range_hi = 1;
  double density = 20;  // extinction per unit length at the top of the range
  std::array<double, 3> background{0, 0, 0};
};

}  // namespace gf
