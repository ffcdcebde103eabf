// Internal to io/: reading and echoing the raymarch: and render: sections
// (io/case.cpp calls these; the section's checks live in case_raymarch.cpp).
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <utility>

#include "io/case.hpp"
#include "io/case_schema.hpp"

namespace gf::raymarch_case {

// raymarch: of a raymarch case; the grid and parameters are read already.
void read_raymarch(const schema::Map& top, const Case& c, const std::filesystem::path& base_dir,
                   RaySpec& out);
// render: of a heat, stencil or laplace case (none: out.enabled stays false).
void read_render(const schema::Map& top, const Case& c, RaySpec& out);
// The size of a 1D or 2D frame: the given width and height (0: not given);
// without either, 640×360 for a line plot and, for an image, one pixel per
// grid point scaled up by a whole factor while the longer side stays within
// 512 (a side over 1024 points shrinks to 1024); with one, the other in the
// grid's proportion of points.
std::pair<std::int64_t, std::int64_t> default_frame_size(int ndim, std::int64_t nx, std::int64_t ny,
                                                         std::int64_t width, std::int64_t height);
// The resolved section, under `key`.
void emit(YAML::Emitter& out, const char* key, const RaySpec& s, bool render);

}  // namespace gf::raymarch_case
