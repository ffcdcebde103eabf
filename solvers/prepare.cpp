#include "solvers/prepare.hpp"

#include "solvers/registry.hpp"

namespace gf {

Case prepare_case(Case c) {
  if (const auto prepare = workload_entry(c.workload).prepare) {
    prepare(c);
    c.resolved_yaml = emit_resolved(c);
  }
  return c;
}

}  // namespace gf
