// Internal to io/: the equations of a pde case compiled into the program the
// executors run (core/pde_program.hpp). io/case_pde.cpp calls it once the
// fields, coefficients and boundaries are read.
#pragma once
#include <vector>

#include "io/case.hpp"
#include "io/expression.hpp"

namespace gf::pde_case {

// Rewrites each equation's differential operators (lap, dx, dy, dz, dx_up,
// dy_up, dz_up, div(k*grad(f))) into input variables, parses what is left
// with muparser (fields, coefficients, x, y, z, t, the parameters) and
// compiles it, and the Dirichlet values of every field (x, y, z, t), into
// p.program. A k of div(k*grad(f)) that is an expression becomes a
// coefficient field of its own (appended to p.coefficients). Throws
// CaseError at the equation or value that is wrong.
// Returns the equations as muparser expressions over x, y, z, t and the
// program's inputs (the stability estimate evaluates them).
std::vector<Expression> compile(PdeSpec& p, const Params& params, int ndim);

// Whether a field or coefficient may not take this name: x, y, z, t, an
// operator's name, or a name starting with __ (the compiled inputs').
bool is_reserved_name(const std::string& name);

}  // namespace gf::pde_case
