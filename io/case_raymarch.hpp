// Internal to io/: reading and echoing the raymarch: and render: sections
// (io/case.cpp calls these; the section's checks live in case_raymarch.cpp).
#pragma once
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "io/case.hpp"
#include "io/case_schema.hpp"

namespace gf::raymarch_case {

// raymarch: of a raymarch case; the grid and parameters are read already.
void read_raymarch(const schema::Map& top, const Case& c, const std::filesystem::path& base_dir,
                   RaySpec& out);
// render: of a heat, stencil or laplace case (none: out.enabled stays false).
void read_render(const schema::Map& top, const Case& c, RaySpec& out);
// The resolved section, under `key`.
void emit(YAML::Emitter& out, const char* key, const RaySpec& s, bool render);

}  // namespace gf::raymarch_case
