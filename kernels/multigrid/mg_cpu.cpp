// The CPU reference executor of multigrid: the mg_ops.hpp formulas in plain
// loops over each field's view (kernels/cpu/loops.hpp).
#include <algorithm>

#include "kernels/cpu/loops.hpp"
#include "kernels/multigrid/mg_exec.hpp"

namespace gf {
namespace {

using namespace cpu;

template <class T>
class MultigridCpu final : public MultigridExec<T> {
 public:
  // Points of one colour read only points of other colours: the order does not matter.
  void smooth(const LaplaceArgs<T>& a, const MgColouring& c, Field<T>& f, int colour) override {
    const FieldView<T> u = f.view();
    by_dim(a.ndim, [&](auto d) {
      for_each_point(u, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        if (mg_colour(c, i, j, k) == colour)
          u[idx] = sor_point<decltype(d)::value>(a, FieldView<const T>(u), i, j, k);
      });
    });
  }
  void residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>& r) override {
    const FieldView<const T> in = u.view();
    const FieldView<T> out = r.view();
    by_dim(a.ndim, [&](auto d) {
      for_each_point(in, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        out(i, j, k) = mg_residual_point<decltype(d)::value>(a, in, i, j, k);
      });
    });
  }
  void restrict_to(const LaplaceArgs<T>& ca, const MgAxis* ax, const Field<T>& fine,
                   Field<T>& coarse) override {
    const FieldView<const T> in = fine.view();
    const FieldView<T> out = coarse.view();
    by_dim(ca.ndim, [&](auto d) {
      for_each_point(out, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        out[idx] = mg_restrict_point<decltype(d)::value>(ca, ax, in, i, j, k);
      });
    });
  }
  void prolong_add(const LaplaceArgs<T>& fa, const MgAxis* ax, const Field<T>& coarse,
                   Field<T>& fine) override {
    const FieldView<const T> in = coarse.view();
    const FieldView<T> out = fine.view();
    by_dim(fa.ndim, [&](auto d) {
      for_each_point(out, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        out[idx] += mg_prolong_point<decltype(d)::value>(fa, ax, in, i, j, k);
      });
    });
  }
  double weighted_sum(const LaplaceArgs<T>& a, const Field<T>& v) override {
    const FieldView<const T> in = v.view();
    double s = 0;
    by_dim(a.ndim, [&](auto d) {
      s = sum_points(in, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        return double(mg_weighted_point<decltype(d)::value>(a, in, i, j, k));
      });
    });
    return s;
  }
  void unweight(const LaplaceArgs<T>& a, T s, const Field<T>& r, Field<T>& z) override {
    const FieldView<const T> in = r.view();
    const FieldView<T> out = z.view();
    by_dim(a.ndim, [&](auto d) {
      for_each_point(in, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        out(i, j, k) = mg_unweight_point<decltype(d)::value>(a, s, in, i, j, k);
      });
    });
  }
  void zero(Field<T>& v) override {
    const FieldView<T> out = v.view();
    for_each_point(out, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t idx) {
      out[idx] = T(0);
    });
  }
};

}  // namespace

template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_cpu(Backend<T>&) {
  return std::make_unique<MultigridCpu<T>>();
}
template std::unique_ptr<MultigridExec<float>> make_multigrid_cpu<float>(Backend<float>&);
template std::unique_ptr<MultigridExec<double>> make_multigrid_cpu<double>(Backend<double>&);

}  // namespace gf
