// The CPU reference executor of the expressions: expr_value at every point
// of a box, in a plain loop nest parallel over its rows (OpenMP, as many
// threads as core/threads.hpp's rule gives the work).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/threads.hpp"
#include "kernels/expr/expr_exec.hpp"

namespace gf {

template <class T>
std::int64_t expr_fill_cpu(const ExprCode& c, const ExprPoints& at, const FieldView<T>& out,
                           const Box& b) {
  if (b.empty() || c.code.empty()) return -1;
  const Layout dense = Layout::dense(out.n);  // the points' x-fastest order
  const ExprInstr* code = c.code.data();
  const int n = int(c.code.size());
  const bool constant = c.constant();
  std::vector<double> s(std::size_t(c.stack) + 1);
  const double value = constant ? expr_value(code, n, 0, 0, 0, at.t, s.data()) : 0.0;
  // A point costs about an instruction's worth of a cheap update (a few ns)
  // per instruction: the grain of core/threads.hpp divided by the program's length.
  const std::int64_t grain =
      std::max<std::int64_t>(256, cpu::points_per_thread() / std::max(1, constant ? 1 : n));
  std::int64_t first_bad = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel num_threads(cpu::threads_for(b.size(), grain)) reduction(min : first_bad)
  {
    std::vector<double> stack(std::size_t(c.stack) + 1);
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j) {
        const double y = at.coord(1, j), z = at.coord(2, k);
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
          const T v = static_cast<T>(
              constant ? value : expr_value(code, n, at.coord(0, i), y, z, at.t, stack.data()));
          out(i, j, k) = v;
          if (!std::isfinite(v)) first_bad = std::min(first_bad, dense.index(i, j, k));
        }
      }
  }
  return first_bad == std::numeric_limits<std::int64_t>::max() ? -1 : first_bad;
}

template std::int64_t expr_fill_cpu<float>(const ExprCode&, const ExprPoints&,
                                           const FieldView<float>&, const Box&);
template std::int64_t expr_fill_cpu<double>(const ExprCode&, const ExprPoints&,
                                            const FieldView<double>&, const Box&);

namespace {

template <class T>
class ExprCpu final : public ExprExec<T> {
 public:
  std::vector<std::int64_t> fill(const std::vector<ExprPart>& parts, const ExprPoints& at,
                                 Field<T>& out) override {
    std::vector<std::int64_t> bad;
    for (const ExprPart& p : parts) bad.push_back(expr_fill_cpu(*p.code, at, out.view(), p.box));
    return bad;
  }
};

}  // namespace

template <class T>
std::unique_ptr<ExprExec<T>> make_expr_cpu(Backend<T>&) {
  return std::make_unique<ExprCpu<T>>();
}
template std::unique_ptr<ExprExec<float>> make_expr_cpu<float>(Backend<float>&);
template std::unique_ptr<ExprExec<double>> make_expr_cpu<double>(Backend<double>&);

}  // namespace gf
