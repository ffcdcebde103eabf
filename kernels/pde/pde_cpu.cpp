// The CPU reference executor of the pde workload: pde_point at every point,
// rows over OpenMP (threads by core/threads.hpp's rule), the equations'
// bytecode run by the expressions' interpreter (kernels/expr/expr_ops.hpp).
#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/threads.hpp"
#include "kernels/expr/expr_ops.hpp"
#include "kernels/pde/pde_exec.hpp"

namespace gf {
namespace {

// The variables of the equations, as expr_run_as reads them.
template <class T>
struct PdeVars {
  const T* v;
  T operator()(int m) const { return v[m]; }
};

// The equations as pde_point asks for them, interpreted in T; `stack` is
// the thread's own.
template <class T>
struct InterpretedEq {
  const PdeProgram* prog;
  T* stack;
  int nfields() const { return int(prog->fields.size()); }
  int ninputs() const { return int(prog->inputs.size()); }
  PdeInput input(int q) const { return prog->inputs[std::size_t(q)]; }
  T rhs(int f, const T* v) const {
    const ExprCode& c = prog->rhs[std::size_t(f)];
    return expr_run_as<T>(c.code.data(), int(c.code.size()), PdeVars<T>{v}, stack);
  }
  T dirichlet(int f, int face, const T* v) const {
    const ExprCode& c = prog->dirichlet[std::size_t(f)][std::size_t(face)];
    return expr_run_as<T>(c.code.data(), int(c.code.size()), PdeVars<T>{v}, stack);
  }
};

template <class T>
class PdeCpu final : public PdeExec<T> {
 public:
  explicit PdeCpu(const PdeProgram& prog) : prog_(prog) {
    for (const ExprCode& c : prog.rhs) stack_ = std::max(stack_, c.stack);
    for (const auto& faces : prog.dirichlet)
      for (const ExprCode& c : faces) stack_ = std::max(stack_, c.stack);
  }

  void stage(PdeArgs<T> a, const PdeFields<T>& f) override {
    pde_set_arrays(a, f);
    const Layout& l = a.l;
    const std::int64_t rows = l.rows();
    const std::size_t nv = std::size_t(kPdeFirstInput) + prog_.inputs.size();
    const int team = cpu::threads_for(l.size() * std::int64_t(8 + prog_.inputs.size()));
#pragma omp parallel num_threads(team)
    {
      std::vector<T> v(nv), s(std::size_t(std::max(stack_, 1)));
      const InterpretedEq<T> eq{&prog_, s.data()};
      const auto rows_of = [&](auto d) {
        constexpr int D = decltype(d)::value;
#pragma omp for schedule(static)
        for (std::int64_t q = 0; q < rows; ++q) {
          const std::int64_t j = q % l.n[1], k = q / l.n[1];
          for (std::int64_t i = 0; i < l.n[0]; ++i) pde_point<D, std::int64_t>(a, eq, i, j, k, v.data());
        }
      };
      if (a.ndim == 1) rows_of(std::integral_constant<int, 1>{});
      else if (a.ndim == 2) rows_of(std::integral_constant<int, 2>{});
      else rows_of(std::integral_constant<int, 3>{});
    }
  }

 private:
  PdeProgram prog_;
  int stack_ = 1;
};

}  // namespace

template <class T>
std::unique_ptr<PdeExec<T>> make_pde_cpu(Backend<T>&, const PdeProgram& prog) {
  return std::make_unique<PdeCpu<T>>(prog);
}

template std::unique_ptr<PdeExec<float>> make_pde_cpu<float>(Backend<float>&, const PdeProgram&);
template std::unique_ptr<PdeExec<double>> make_pde_cpu<double>(Backend<double>&, const PdeProgram&);

}  // namespace gf
