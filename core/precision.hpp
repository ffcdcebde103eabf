#pragma once
#include <cstddef>
#include <string>

namespace gf {

enum class Precision { Float32, Float64 };

inline const char* to_string(Precision p) { return p == Precision::Float32 ? "float32" : "float64"; }
inline std::size_t bytes_of(Precision p) { return p == Precision::Float32 ? 4 : 8; }

template <class T>
constexpr Precision precision_of() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  return sizeof(T) == 4 ? Precision::Float32 : Precision::Float64;
}

}  // namespace gf
