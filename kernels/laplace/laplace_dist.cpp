// The Laplace executor over MPI ranks (kernels/dist/): halos refreshed after
// every operation that writes a field neighbours will read, sums added over
// the ranks, SOR coloured by the parity of global indices; and the factory
// of Laplace executors.
#include <stdexcept>

#include "core/mpi.hpp"
#include "kernels/exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"

namespace gf {
namespace {

template <class T>
class LaplaceDist final : public LaplaceExec<T> {
 public:
  LaplaceDist(std::unique_ptr<LaplaceExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    be_.one_step(
        "Jacobi sweeps", in, out,
        [&](StepPart p) { return in_->jacobi_sweep_part(a, in, out, be_.core(), p); },
        [&] { in_->jacobi_sweep(a, in, out); });
  }
  int jacobi_time_block(const LaplaceArgs<T>& a, const Layout& l, int asked) const override {
    return be_.blocked_depth(in_->jacobi_time_block(be_.pass_args(a), l, asked));
  }
  void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    be_.blocked(k, in, out, [&] { in_->jacobi_steps(be_.pass_args(a), k, in, out); });
  }
  // Colour by the parity of the global index: local (i+j+k) plus the offsets'.
  void sor_sweep(const LaplaceArgs<T>& a, Field<T>& u, int colour) override {
    in_->sor_sweep(a, u, colour ^ be_.parity());
    be_.refresh(u);
  }
  double residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>* r) override {
    const double s = in_->residual(a, u, r);
    if (r) be_.refresh(*r);
    return mpi::sum(s);
  }
  void set_operator(const LaplaceArgs<T>& a, const Layout& l,
                    OperatorForm form) override {
    in_->set_operator(a, l, form);
  }
  void apply(const Field<T>& x, Field<T>& y) override {
    in_->apply(x, y);
    be_.refresh(y);
  }
  double fft_poisson(const LaplaceArgs<T>&, const Field<T>&, Field<T>&) override {
    throw std::logic_error("fft_poisson on several ranks (decompose() refuses it)");
  }
  void prepare_fft(const LaplaceArgs<T>&, const Layout&) override {
    throw std::logic_error("prepare_fft on several ranks (decompose() refuses it)");
  }

 private:
  std::unique_ptr<LaplaceExec<T>> in_;
  DistributedBackend<T>& be_;
};

template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_dist(std::unique_ptr<LaplaceExec<T>> in,
                                                  DistributedBackend<T>& be) {
  return std::make_unique<LaplaceDist<T>>(std::move(in), be);
}

}  // namespace

template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_exec(Backend<T>& be) {
  return make_exec<LaplaceExec<T>, T>(
      be, {make_laplace_cpu<T>, GF_CUDA_MAKER(make_laplace_cuda<T>), make_laplace_dist<T>});
}
template std::unique_ptr<LaplaceExec<float>> make_laplace_exec<float>(Backend<float>&);
template std::unique_ptr<LaplaceExec<double>> make_laplace_exec<double>(Backend<double>&);

}  // namespace gf
