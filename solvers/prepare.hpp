// The step between io's load_case and the solvers: what a loaded case leaves
// to the numerics, worked out. The app calls it on every case it loads
// (app/common.cpp), bench on the cases it builds; a solver takes a prepared case.
#pragma once
#include "io/case.hpp"

namespace gf {

// laplace: the auto SOR ω and the check that f balances the boundaries
// (solvers/laplace_setup.hpp; a CaseError where the case is at fault); then
// the resolved YAML again, with what was worked out. Other workloads: as loaded.
Case prepare_case(Case c);

}  // namespace gf
