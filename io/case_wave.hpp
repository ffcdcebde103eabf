// Internal to io/: reading and echoing the wave: section (io/case.cpp calls
// these; the section's checks live in case_wave.cpp).
#pragma once
#include <yaml-cpp/yaml.h>

#include "io/case.hpp"
#include "io/case_schema.hpp"

namespace gf::wave_case {

// wave: of a wave case; the grid and parameters are read already.
void read(const schema::Map& top, const Case& c, WaveSpec& out);
// The resolved section.
void emit(YAML::Emitter& out, const WaveSpec& w);
// The CFL limit of the leapfrog step: 1 / (c·√Σ 1/h²).
double cfl_limit(const Grid& g, double c);

}  // namespace gf::wave_case
