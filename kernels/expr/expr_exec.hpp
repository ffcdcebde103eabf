// The expressions' executor: fills boxes of a field with the values of
// compiled expressions (ExprCode, core/expr_code.hpp) where the field lives.
// One formula, expr_value (expr_ops.hpp), run by the CPU reference
// (expr_cpu.cpp: OpenMP over rows), the CUDA kernel (expr_cuda.cu) and,
// over MPI ranks, the wrapper that refreshes the halo afterwards
// (expr_dist.cpp). Each value is computed in double and stored as T, as
// muparser's values were.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/expr_code.hpp"
#include "kernels/backend.hpp"
#include "kernels/expr/expr_ops.hpp"

namespace gf {

// One program over one box of the field's points.
struct ExprPart {
  const ExprCode* code = nullptr;
  Box box;
};

template <class T>
class ExprExec {
 public:
  virtual ~ExprExec() = default;
  // Writes each part's values at the points of its box of `out` (parts in
  // order: where boxes overlap, the later part's value stands), point
  // (i, j, k) at (at.coord(0, i), at.coord(1, j), at.coord(2, k)). Returns,
  // part by part, the lowest point of its box whose value is not finite
  // once stored as T (its index in x-fastest order over out's points,
  // Layout::dense), or −1. Returns when the values are written.
  virtual std::vector<std::int64_t> fill(const std::vector<ExprPart>& parts, const ExprPoints& at,
                                         Field<T>& out) = 0;
};

// The executor for the backend's kind (kernels/exec.hpp).
template <class T>
std::unique_ptr<ExprExec<T>> make_expr_exec(Backend<T>& be);

template <class T>
std::unique_ptr<ExprExec<T>> make_expr_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<ExprExec<T>> make_expr_cuda(Backend<T>& be);

// The CPU reference loop over box b of a view of host memory (any layout;
// points outside b are left alone): the lowest bad point as fill() says, or −1.
template <class T>
std::int64_t expr_fill_cpu(const ExprCode& code, const ExprPoints& at, const FieldView<T>& out,
                           const Box& b);

}  // namespace gf
