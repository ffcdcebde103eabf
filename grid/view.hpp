// The layout of a field in memory and the view of a field that kernels and
// CPU loops take in place of bare pointers and extents: the one place where a
// grid point's index is computed (AMReX's Array4 is the model).
//
// A field holds n[0] × n[1] × n[2] points, x fastest; a row (fixed j, k)
// starts sy values after the one before it and a plane sz values after the
// one before it. A dense layout has sy = n[0] and sz = n[0]·n[1]; a padded
// one (rows starting on an aligned boundary) has sy > n[0], and its padding
// belongs to no point. Code that walks a field steps by the strides of its
// view (`idx + v.sy` is the point above), never by its extents.
#pragma once
#include <cstdint>

#include "core/hd.hpp"

namespace gf {

struct Layout {
  std::int64_t n[3] = {1, 1, 1};  // points per axis (1 on missing axes)
  std::int64_t sy = 1, sz = 1;     // values from a row to the next, from a plane to the next

  // Rows sy = n[0] apart, planes n[0]·n[1]: how host arrays, files and
  // checkpoints hold a field.
  static GF_HD Layout dense(const std::int64_t* n) {
    Layout l;
    for (int a = 0; a < 3; ++a) l.n[a] = n[a];
    l.sy = n[0];
    l.sz = n[0] * n[1];
    return l;
  }
  // Dense, rows padded to a multiple of `align` values.
  static GF_HD Layout padded(const std::int64_t* n, std::int64_t align) {
    Layout l = dense(n);
    l.sy = (n[0] + align - 1) / align * align;
    l.sz = l.sy * n[1];
    return l;
  }
  // The layout of a GPU field (CudaBackend::make_field): rows start on an
  // `align_bytes` boundary (128: a whole cache line) when n[0] values span
  // at least 8 of them, on a 16-byte boundary (one vector) when narrower, so
  // that every row is whole 16-byte vectors whatever n[0] is; a grid of one
  // row, and align_bytes 0, stay dense. The padding costs at most an eighth
  // more memory.
  static Layout aligned_rows(const std::int64_t* n, std::int64_t elem_bytes,
                             std::int64_t align_bytes) {
    if (align_bytes <= 0 || n[1] * n[2] <= 1) return dense(n);
    std::int64_t a = align_bytes / elem_bytes;
    if (n[0] * elem_bytes < 8 * align_bytes) a = 16 / elem_bytes;
    if (a <= 1 || n[0] % a == 0) return dense(n);
    return padded(n, a);
  }

  GF_HD std::int64_t index(std::int64_t i, std::int64_t j = 0, std::int64_t k = 0) const {
    return i + sy * j + sz * k;
  }
  // The same in an index type of the caller's (32-bit in kernels whose
  // fields hold fewer than 2³¹ values: fewer registers).
  template <class I>
  GF_HD I index_as(I i, I j, I k) const {
    return i + I(sy) * j + I(sz) * k;
  }
  // Values between neighbours along axis a.
  GF_HD std::int64_t stride(int a) const { return a == 0 ? 1 : a == 1 ? sy : sz; }
  GF_HD std::int64_t size() const { return n[0] * n[1] * n[2]; }  // points
  // Values the memory of the field spans (points plus padding).
  GF_HD std::int64_t span() const { return sz * n[2]; }
  GF_HD bool is_dense() const { return sy == n[0] && sz == n[0] * n[1]; }
  // Rows in the field: n[1]·n[2] (a row is n[0] points).
  GF_HD std::int64_t rows() const { return n[1] * n[2]; }
  // Where row q (0 ≤ q < rows()) starts: rows run y fastest, then z.
  GF_HD std::int64_t row_start(std::int64_t q) const { return index(0, q % n[1], q / n[1]); }
  // The point of the q-th point (0 ≤ q < size()) in x-fastest order.
  GF_HD void position(std::int64_t q, std::int64_t& i, std::int64_t& j, std::int64_t& k) const {
    i = q % n[0];
    j = (q / n[0]) % n[1];
    k = q / (n[0] * n[1]);
  }
  // The index of the q-th point in x-fastest order (the dense order of files).
  GF_HD std::int64_t index_of_point(std::int64_t q) const {
    std::int64_t i, j, k;
    position(q, i, j, k);
    return index(i, j, k);
  }
  // The point whose value sits at index idx (index()'s inverse; i ≥ n[0] in
  // a padded row's padding).
  GF_HD void locate(std::int64_t idx, std::int64_t& i, std::int64_t& j, std::int64_t& k) const {
    k = idx / sz;
    const std::int64_t r = idx - k * sz;
    j = r / sy;
    i = r - j * sy;
  }
  // The points on the faces of a grid of at least 3 points on each of its
  // d axes (its shell; the points off the faces are i = 1 … nx − 2 and so
  // on): how many, and the q-th of them. In order: the planes k = 0 and
  // nz − 1, the rows j = 0 and ny − 1 of the planes between, then the ends
  // i = 0 and nx − 1 of the rows between.
  GF_HD std::int64_t shell_count(int d) const {
    if (d == 1) return 2;
    if (d == 2) return 2 * n[0] + 2 * (n[1] - 2);
    return 2 * n[0] * n[1] + 2 * n[0] * (n[2] - 2) + 2 * (n[1] - 2) * (n[2] - 2);
  }
  GF_HD void shell_point(int d, std::int64_t q, std::int64_t& i, std::int64_t& j,
                         std::int64_t& k) const {
    const std::int64_t nx = n[0], ny = n[1];
    i = j = k = 0;
    if (d == 1) {
      i = q == 0 ? 0 : nx - 1;
    } else if (d == 2) {
      if (q < 2 * nx) {
        j = q < nx ? 0 : ny - 1;
        i = q < nx ? q : q - nx;
      } else {
        q -= 2 * nx;
        j = 1 + q / 2;
        i = (q & 1) ? nx - 1 : 0;
      }
    } else if (q < 2 * nx * ny) {
      k = q < nx * ny ? 0 : n[2] - 1;
      q = q < nx * ny ? q : q - nx * ny;
      j = q / nx;
      i = q - j * nx;
    } else if ((q -= 2 * nx * ny) < 2 * nx * (n[2] - 2)) {
      const std::int64_t r = q / nx;
      i = q - r * nx;
      j = (r & 1) ? ny - 1 : 0;
      k = 1 + r / 2;
    } else {
      q -= 2 * nx * (n[2] - 2);
      const std::int64_t r = q / 2;
      i = (q & 1) ? nx - 1 : 0;
      j = 1 + r % (ny - 2);
      k = 1 + r / (ny - 2);
    }
  }
  GF_HD bool same_as(const Layout& o) const {
    return n[0] == o.n[0] && n[1] == o.n[1] && n[2] == o.n[2] && sy == o.sy && sz == o.sz;
  }
};

template <class T>
struct FieldView : Layout {
  T* p = nullptr;

  FieldView() = default;
  GF_HD FieldView(T* data, const Layout& l) : Layout(l), p(data) {}
  // A view of const values from one of mutable ones.
  template <class U>
  GF_HD FieldView(const FieldView<U>& o) : Layout(o), p(o.p) {}

  GF_HD T& operator()(std::int64_t i, std::int64_t j = 0, std::int64_t k = 0) const {
    return p[index(i, j, k)];
  }
  GF_HD T& operator[](std::int64_t idx) const { return p[idx]; }
  // The points [lo, lo + count) of this view as a view of their own (same strides).
  GF_HD FieldView box(const std::int64_t* lo, const std::int64_t* count) const {
    FieldView b(p + index(lo[0], lo[1], lo[2]), *this);
    for (int a = 0; a < 3; ++a) b.n[a] = count[a];
    return b;
  }
};

}  // namespace gf
