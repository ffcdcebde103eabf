// The CPU reference executor of the generic stencil: stencil_point_bc at
// every point, and the star's temporally blocked wavefront.
#include "kernels/cpu/loops.hpp"
#include "kernels/stencil/stencil_exec.hpp"

namespace gf {
namespace {

using namespace cpu;

template <int D, class T>
void stencil_box(const StencilArgs<T>& a, const Box& b, const StencilTap<T>* taps,
                 const FieldView<const T>& in, const FieldView<T>& out) {
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_for(b.size()))
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
        out(i, j, k) = stencil_point_bc<D>(a, taps, in, i, j, k);
}

template <class T>
class StencilCpu final : public StencilExec<T> {
 public:
  void set_taps(const std::vector<StencilTap<T>>& taps) override {
    taps_ = taps;
    fixed_ = fixed_stencil(taps);
  }
  void step(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    box(a, Box::whole(in.layout().n), in, out);
  }
  bool step_part(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                 StepPart part) override {
    for (const Box& b : part_boxes(in.layout().n, core, part)) box(a, b, in, out);
    return true;
  }
  // A star of radius 1 in the presets' order (star5 in 2D, star7 in 3D):
  // the heat passes' wavefront.
  int time_block(const StencilArgs<T>& a, const Layout& l, int asked) const override {
    return passes(has_passes(a.ndim, l.n) && fixed_.shape == FixedShape::Star &&
                      fixed_.ndim == a.ndim,
                  asked);
  }
  void steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (time_block(a, in.layout(), k) != k || k < 2) StencilExec<T>::steps(a, k, in, out);
    with_tb_dim(a.ndim, [&](auto d) {
      time_block_cpu(TbStar<T, decltype(d)::value>(a, fixed_), k, in.view(), out.view());
    });
  }

 private:
  void box(const StencilArgs<T>& a, const Box& b, const Field<T>& in, Field<T>& out) const {
    by_dim(a.ndim, [&](auto d) {
      stencil_box<decltype(d)::value>(a, b, taps_.data(), in.view(), out.view());
    });
  }
  std::vector<StencilTap<T>> taps_;
  FixedStencil<T> fixed_;  // the taps' shape, when a blocked pass can run them
};

}  // namespace

template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_cpu(Backend<T>&) {
  return std::make_unique<StencilCpu<T>>();
}
template std::unique_ptr<StencilExec<float>> make_stencil_cpu<float>(Backend<float>&);
template std::unique_ptr<StencilExec<double>> make_stencil_cpu<double>(Backend<double>&);

}  // namespace gf
