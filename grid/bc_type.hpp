// The boundary rules of a face (SPEC §3; Absorbing: the wave workload's
// first-order radiating face, which the other workloads refuse): a property of the grid's
// faces that the case reader, the point formulas (kernels/ops/boundary.hpp)
// and the decomposition all name.
#pragma once
#include <cstdint>

namespace gf {

enum class BcType : std::uint8_t { Dirichlet = 0, Neumann = 1, Periodic = 2, Absorbing = 3 };

}  // namespace gf
