// The STREAM triad's point formula, a = b + s·c: the reference load that
// `gridforge bench` measures a device's memory bandwidth with.
#pragma once
#include "kernels/ops/hd.hpp"

namespace gf {

template <class T>
GF_HD T triad_point(T b, T s, T c) {
  return b + s * c;
}

}  // namespace gf
