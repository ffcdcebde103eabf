// The three boundary rules of a face (SPEC §3): a property of the grid's
// faces that the case reader, the point formulas (kernels/ops/boundary.hpp)
// and the decomposition all name.
#pragma once
#include <cstdint>

namespace gf {

enum class BcType : std::uint8_t { Dirichlet = 0, Neumann = 1, Periodic = 2 };

}  // namespace gf
