#include "solvers/prepare.hpp"

#include "solvers/laplace_setup.hpp"

namespace gf {

Case prepare_case(Case c) {
  if (c.workload == Workload::Laplace) {
    resolve_laplace(c);
    c.resolved_yaml = emit_resolved(c);
  }
  return c;
}

}  // namespace gf
