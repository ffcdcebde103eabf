// Helpers of the pde workload's tests (unit and [gpu]): cases from text and
// a solver's fields on the host.
#pragma once
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "solvers/pde.hpp"
#include "tests/unit/case_test_util.hpp"

namespace gf::test {

// A pde case: a grid of `dims`, the boundary and the pde: section as YAML
// text (their bodies, indented by two spaces), parameters, precision.
inline std::string pde_case(const std::string& dims, const std::string& pde,
                            const std::string& boundary = "  default: {type: periodic}\n",
                            const std::string& params = "", const std::string& precision = "float64",
                            const std::string& extent = "") {
  return "name: t\nworkload: pde\nprecision: " + precision + "\ngrid:\n  dims: " + dims + "\n" +
         (extent.empty() ? "" : "  extent: " + extent + "\n") +
         (params.empty() ? "" : "parameters: " + params + "\n") + "boundary:\n" + boundary +
         "pde:\n" + pde + "output: {every: 0, formats: [hdf5]}\n";
}

// Every field of a solver after its run, downloaded, in its order.
template <class T>
std::vector<std::vector<T>> pde_run(const Case& c, Backend<T>& be, std::int64_t steps = -1) {
  PdeSolver<T> s(c, be);
  s.advance(steps < 0 ? c.pde.steps : steps);
  std::vector<std::vector<T>> out;
  for (const NamedField<T>& f : s.fields()) {
    out.emplace_back(std::size_t(f.field->points()));
    be.download(*f.field, out.back().data());
  }
  return out;
}

}  // namespace gf::test
