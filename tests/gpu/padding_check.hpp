// Whether a GPU field's row padding is still zero: the rule every kernel
// keeps (docs/design.md "Padded rows on the GPU"), read back raw.
#pragma once
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "grid/field.hpp"

namespace gf::test {

// Whether every padding value of a GPU field (past n[0] in each row, inside
// its pitch) is +0, bit for bit: the marches write zeros there (padding
// lanes, and the padding vector after a row's last piece), and nothing may
// write anything else. A field of dense rows has none: true.
template <class T>
bool padding_is_zero(const Field<T>& f) {
  const Layout& l = f.layout();
  if (l.sy == l.n[0]) return true;
  std::vector<T> raw(std::size_t(l.span()));
  if (cudaMemcpy(raw.data(), f.data(), raw.size() * sizeof(T), cudaMemcpyDeviceToHost) !=
      cudaSuccess)
    return false;
  const T zero = T(0);
  for (std::int64_t k = 0; k < l.n[2]; ++k)
    for (std::int64_t j = 0; j < l.n[1]; ++j)
      for (std::int64_t i = l.n[0]; i < l.sy; ++i)
        if (std::memcmp(&raw[std::size_t(k * l.sz + j * l.sy + i)], &zero, sizeof(T)) != 0)
          return false;
  return true;
}

}  // namespace gf::test
