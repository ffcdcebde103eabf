// The equations of a pde case (workload pde, docs/cases.md#pde) compiled for
// the executors: which values and derivatives of the fields a point needs
// (the inputs), and for each field the bytecode of its right-hand side and of
// its Dirichlet faces' values. io/case_pde.cpp builds it from the case file
// (io/pde_program.cpp); kernels/pde/ runs it: the CPU reference interprets
// the bytecode, the CUDA executor turns it into one kernel compiled at run
// time. Plain data, in core/ because io/ and kernels/ both use it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/expr_code.hpp"
#include "core/pde_input.hpp"

namespace gf {

struct PdeProgram {
  std::vector<std::string> fields;        // the state fields, in the case's order
  std::vector<std::string> coefficients;  // fields of x, y, z evaluated once (k of div(k*grad(f)))
  std::vector<PdeInput> inputs;           // what the right-hand sides read at a point
  std::vector<std::string> input_names;   // their variable names (messages, generated code)
  std::vector<ExprCode> rhs;              // per state field
  // Per state field and face (x- x+ y- y+ z- z+): the Dirichlet value's
  // program, empty where the face is not Dirichlet.
  std::vector<std::array<ExprCode, 6>> dirichlet;
  // Whether a right-hand side or a Dirichlet value reads t.
  bool uses_t = false;
};

}  // namespace gf
