// The CUDA executor of the generic stencil: the radius-1 presets' shapes
// through the marches (StarStencilOp, BoxStencilOp), any other stencil
// through the tiled kernels (stencil_kernels.cuh), the star's temporally
// blocked passes, CUDA graphs of small grids' chunks, and steps split for
// the overlapped halo exchange.
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/cuda/part_kernels.cuh"
#include "kernels/cuda/time_block2d_kernels.cuh"
#include "kernels/cuda/time_block_kernels.cuh"
#include "kernels/stencil/stencil_exec.hpp"
#include "kernels/stencil/stencil_kernels.cuh"

namespace gf {
namespace {

template <class T>
class StencilCuda final : public StencilExec<T> {
 public:
  explicit StencilCuda(CudaBackend<T>& be) : be_(be) {}

  void set_taps(const std::vector<StencilTap<T>>& taps) override {
    be_.graphs().drop();  // recorded for the old taps
    tile_radius_ = upload_stencil_taps(taps, be_.stream());
    fixed_ = fixed_stencil(taps);
  }
  void step(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch(a, in.view(), out.view());
  }
  void run(const StencilArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) override {
    be_.graphs().replay(
        be_.stream(), key(a), u, tmp, n,
        [&](const FieldView<const T>& in, const FieldView<T>& out) { launch(a, in, out); },
        [&] { StencilExec<T>::run(a, n, u, tmp); });
  }
  // A star of radius 1 in the presets' order (fixed_stencil's Star: star5 in
  // 2D, star7 in 3D), on a grid of fewer than 2³¹ values: the heat passes.
  int time_block(const StencilArgs<T>& a, const Layout& l, int asked) const override {
    return tb_passes(fixed_.shape == FixedShape::Star && fixed_.ndim == a.ndim &&
                         tb_fits(a.ndim, l),
                     asked);
  }
  void steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (time_block(a, in.layout(), k) != k || k < 2) StencilExec<T>::steps(a, k, in, out);
    with_tb_dim(a.ndim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      const TbStar<T, D> op(a, fixed_);
      if constexpr (D == 2) launch_time_block2d(op, k, in.view(), out.view(), be_.stream());
      else launch_time_block(op, k, in.view(), out.view(), be_.stream());
      GF_CUDA_CHECK_LAUNCH();
    });
  }
  // The radius-1 presets (the marches' stencils) only.
  bool step_part(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                 StepPart part) override {
    if (fixed_.shape == FixedShape::None || fixed_.ndim != a.ndim) return false;
    const cudaStream_t s = part == StepPart::Shell ? be_.exchange_stream() : be_.stream();
    const bool split =
        fixed_.shape == FixedShape::Box
            ? launch_split<true>(a.ndim, in.view(), out.view(), core, part, s,
                                 [&](auto d) {
                                   return fixed_op<BoxStencilOp<T, decltype(d)::value>>(a, fixed_);
                                 })
            : launch_split<false>(a.ndim, in.view(), out.view(), core, part, s, [&](auto d) {
                return fixed_op<StarStencilOp<T, decltype(d)::value>>(a, fixed_);
              });
    if (split) GF_CUDA_CHECK_LAUNCH();
    return split;
  }

 private:
  // A fixed-shape stencil through the marches where the grid allows, any
  // other through the generic kernels.
  void launch(const StencilArgs<T>& a, const FieldView<const T>& in, const FieldView<T>& out) {
    if (launch_fixed_stencil(a, fixed_, in, out, be_.stream())) return;
    launch_stencil(a, tile_radius_, in, out, be_.stream());
    GF_CUDA_CHECK_LAUNCH();
  }
  GraphKey key(const StencilArgs<T>& a) const {
    static const char tag = 0;
    GraphKey k(&tag);
    k.add(a.ndim).add_bc(a.bc).add(a.ntaps).add(a.radius).add(a.update).add(a.coeff);
    return k.add(tile_radius_);
  }
  CudaBackend<T>& be_;
  FixedStencil<T> fixed_;  // the taps' shape, when the marches can run them
  int tile_radius_ = 1;    // the radius the tiled kernels' tap offsets were made for
};

}  // namespace

template <class T>
std::unique_ptr<StencilExec<T>> make_stencil_cuda(Backend<T>& be) {
  return std::make_unique<StencilCuda<T>>(cuda_core(be));
}
template std::unique_ptr<StencilExec<float>> make_stencil_cuda<float>(Backend<float>&);
template std::unique_ptr<StencilExec<double>> make_stencil_cuda<double>(Backend<double>&);

}  // namespace gf
