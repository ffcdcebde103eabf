// The CUDA executor of the explicit heat step: the marches of
// kernels/cuda/march_kernels.cuh with HeatOp (heat_kernels.cuh), the
// temporally blocked passes (kernels/cuda/time_block*_kernels.cuh) with
// TbHeat, CUDA graphs of small grids' chunks, and steps split for the
// overlapped halo exchange (kernels/cuda/part_kernels.cuh).
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/cuda/part_kernels.cuh"
#include "kernels/cuda/time_block2d_kernels.cuh"
#include "kernels/cuda/time_block_kernels.cuh"
#include "kernels/heat/heat_exec.hpp"
#include "kernels/heat/heat_kernels.cuh"

namespace gf {
namespace {

// One pass of an operator of ops/time_block.hpp: the 2D or the 3D kernels.
template <class Op, class T = typename Op::value_type>
void launch_passes(const Op& op, int k, const Field<T>& in, Field<T>& out, cudaStream_t s) {
  if constexpr (Op::kDim == 2) launch_time_block2d(op, k, in.view(), out.view(), s);
  else launch_time_block(op, k, in.view(), out.view(), s);
  GF_CUDA_CHECK_LAUNCH();
}

template <class T>
class HeatCuda final : public HeatExec<T> {
 public:
  explicit HeatCuda(CudaBackend<T>& be) : be_(be) {}

  void step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch_heat_step(a, in.view(), out.view(), be_.stream());
    GF_CUDA_CHECK_LAUNCH();
  }
  void run(const HeatArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) override {
    be_.graphs().replay(
        be_.stream(), key(a), u, tmp, n,
        [&](const FieldView<const T>& in, const FieldView<T>& out) {
          launch_heat_step(a, in, out, be_.stream());
          GF_CUDA_CHECK_LAUNCH();
        },
        [&] { HeatExec<T>::run(a, n, u, tmp); });
  }
  // 2D and 3D grids of fewer than 2³¹ values (the kernels' indices are 32-bit).
  int time_block(const HeatArgs<T>& a, const Layout& l, int asked) const override {
    return tb_passes(tb_fits(a.ndim, l), asked);
  }
  void steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (time_block(a, in.layout(), k) != k || k < 2) HeatExec<T>::steps(a, k, in, out);
    with_tb_heat(a, [&](const auto& op) { launch_passes(op, k, in, out, be_.stream()); });
  }
  bool step_part(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                 StepPart part) override {
    // the shell on the halo stream (ahead of the exchange that sends it),
    // the core on the compute stream beside it
    const cudaStream_t s = part == StepPart::Shell ? be_.exchange_stream() : be_.stream();
    if (!launch_split<false>(a.ndim, in.view(), out.view(), core, part, s,
                             [&](auto d) { return HeatOp<T, decltype(d)::value>{a}; }))
      return false;
    GF_CUDA_CHECK_LAUNCH();
    return true;
  }

 private:
  static GraphKey key(const HeatArgs<T>& a) {
    static const char tag = 0;
    GraphKey k(&tag);
    k.add(a.ndim);
    for (int ax = 0; ax < 3; ++ax) k.add(a.c[ax]);
    k.add_bc(a.bc).add(a.dt).add(a.source).add(a.source_const);
    return k;
  }
  CudaBackend<T>& be_;
};

}  // namespace

template <class T>
std::unique_ptr<HeatExec<T>> make_heat_cuda(Backend<T>& be) {
  return std::make_unique<HeatCuda<T>>(cuda_core(be));
}
template std::unique_ptr<HeatExec<float>> make_heat_cuda<float>(Backend<float>&);
template std::unique_ptr<HeatExec<double>> make_heat_cuda<double>(Backend<double>&);

}  // namespace gf
