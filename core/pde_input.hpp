// One input of a pde right-hand side (core/pde_program.hpp): a field's value
// or one of its derivatives at the point, as kernels/pde/pde_ops.hpp computes
// it. Plain data that the kernels compiled at run time see too (NVRTC: no
// standard headers but <cstdint>).
#pragma once
#include <cstdint>

namespace gf {

// Most state fields and coefficient fields a pde case may have.
inline constexpr int kPdeMaxFields = 8;
inline constexpr int kPdeMaxCoefficients = 8;

// The variables of a right-hand side's bytecode: 0 x, 1 y, 2 z, 3 t, then
// input q as variable kPdeFirstInput + q. A Dirichlet value's: x, y, z, t.
inline constexpr int kPdeVarT = 3;
inline constexpr int kPdeFirstInput = 4;

enum class PdeInputKind : std::int32_t {
  Value,  // f
  Lap,    // Σ_a ∂²f/∂x_a², second-order central differences
  D1,     // ∂f/∂x_axis, central: (f₊ − f₋)/2h
  Dm,     // backward difference (f − f₋)/h (upwind for a velocity ≥ 0)
  Dp,     // forward difference (f₊ − f)/h (upwind for a velocity < 0)
  DivK,   // ∇·(k∇f), k at the faces the mean of its two points
};

struct PdeInput {
  PdeInputKind kind = PdeInputKind::Value;
  std::int32_t field = 0;  // state field index, or nfields + coefficient index (Value, k)
  std::int32_t axis = 0;   // D1, Dm, Dp
  std::int32_t k = 0;      // DivK: the field holding k (as `field`)
};

}  // namespace gf
