// The CPU reference executor of the explicit heat step: ftcs_point in plain
// loops (kernels/cpu/loops.hpp), row by row, the points off every face in a
// loop the compiler vectorises.
#include <type_traits>

#include "kernels/cpu/loops.hpp"
#include "kernels/heat/heat_exec.hpp"

namespace gf {
namespace {

using namespace cpu;

// FTCS at points first..last − 1, all off every face, in the form ISO, SRC
// (heat_form); s(idx) is heat_source.
template <int D, bool ISO, bool SRC, class T, class Source>
GF_ROW_LOOP_CLONES void heat_inner(const T* __restrict in, T* __restrict out, std::int64_t first,
                                   std::int64_t last, std::int64_t sy, std::int64_t sz,
                                   const T* __restrict c, Source s) {
  for (std::int64_t idx = first; idx < last; ++idx) {
    T m[3], p[3];
    direct_neighbours<D>(in, idx, sy, sz, m, p);
    out[idx] = ftcs_point_as<D, ISO, SRC>(in[idx], m, p, c, s(idx));
  }
}

// f(iso, src) with the form as compile-time constants (std::bool_constant).
template <class F>
void with_heat_form(HeatForm form, F&& f) {
  if (form.iso) {
    if (form.src) f(std::true_type{}, std::true_type{});
    else f(std::true_type{}, std::false_type{});
  } else {
    if (form.src) f(std::false_type{}, std::true_type{});
    else f(std::false_type{}, std::false_type{});
  }
}

// The step over box b of the fields.
template <int D, class T>
void heat_box(const HeatArgs<T>& a, const Box& box, const FieldView<const T>& in,
              const FieldView<T>& out) {
  const std::int64_t sy = in.sy, sz = in.sz;
  for_rows<D>(
      in, box, a.bc, in.p, out.p,
      [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        out[idx] = heat_point_bc<D>(a, in, i, j, k);
      },
      [&](std::int64_t first, std::int64_t last) {
        with_heat_form(heat_form<D>(a), [&](auto iso, auto src) {
          constexpr bool I = decltype(iso)::value, S = decltype(src)::value;
          if (a.source) {
            heat_inner<D, I, S>(in.p, out.p, first, last, sy, sz, a.c,
                                [&](std::int64_t idx) { return heat_source(a, idx); });
          } else {
            const T s = heat_source(a, first);  // a constant: the same at every point
            heat_inner<D, I, S>(in.p, out.p, first, last, sy, sz, a.c,
                                [s](std::int64_t) { return s; });
          }
        });
      });
}

template <class T>
class HeatCpu final : public HeatExec<T> {
 public:
  void step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    box(a, Box::whole(in.layout().n), in, out);
  }
  bool step_part(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                 StepPart part) override {
    for (const Box& b : part_boxes(in.layout().n, core, part)) box(a, b, in, out);
    return true;
  }
  // 2D and 3D grids: k = 2 to 4 steps a pass (a wavefront along the last
  // axis, time_block_cpu).
  int time_block(const HeatArgs<T>& a, const Layout& l, int asked) const override {
    return passes(has_passes(a.ndim, l.n), asked);
  }
  void steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (time_block(a, in.layout(), k) != k || k < 2) HeatExec<T>::steps(a, k, in, out);
    with_tb_heat(a, [&](const auto& op) { time_block_cpu(op, k, in.view(), out.view()); });
  }

 private:
  static void box(const HeatArgs<T>& a, const Box& b, const Field<T>& in, Field<T>& out) {
    by_dim(a.ndim, [&](auto d) { heat_box<decltype(d)::value>(a, b, in.view(), out.view()); });
  }
};

}  // namespace

template <class T>
std::unique_ptr<HeatExec<T>> make_heat_cpu(Backend<T>&) {
  return std::make_unique<HeatCpu<T>>();
}
template std::unique_ptr<HeatExec<float>> make_heat_cpu<float>(Backend<float>&);
template std::unique_ptr<HeatExec<double>> make_heat_cpu<double>(Backend<double>&);

}  // namespace gf
