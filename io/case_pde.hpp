// Internal to io/: reading and echoing the pde: section (io/workload.cpp
// calls these; the equations are compiled by io/pde_program.cpp).
#pragma once
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "io/case.hpp"
#include "io/expression.hpp"
#include "io/case_schema.hpp"

namespace gf::pde_case {

// pde: of a pde case; the grid, parameters, boundary and initial are read
// already (they are every field's defaults).
void read(const schema::Map& top, Case& c, const std::filesystem::path& base_dir);
// The resolved section.
void emit(YAML::Emitter& out, const Case& c);

// The stability estimate of the explicit step (docs/cases.md#pde): at sample
// points of the initial state, the largest rate at which each right-hand side
// can change per unit of each input, turned into the dt at which the
// integrator's stability region still holds the spectrum so estimated
// (rhs: compile()'s equations, over x, y, z, t and the program's inputs).
// inf when nothing limits dt (no input moves a right-hand side).
struct PdeLimit {
  double dt = 0;
  std::string why;  // "the diffusion of u", ...
};
PdeLimit stability_limit(const Case& c, const PdeSpec& p, const std::vector<Expression>& rhs);

}  // namespace gf::pde_case
