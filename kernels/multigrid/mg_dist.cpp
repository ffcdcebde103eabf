// The multigrid executor over MPI ranks (kernels/dist/) and the factory of
// multigrid executors. Over ranks only the fine level is split: the levels
// below it live on rank 0 (solvers/multigrid.cpp gathers the fine residual
// there), so this executor smooths, takes residuals and sums on a rank's
// block, and never restricts or prolongs. The colouring carries the block's
// offset (MgColouring::off): the colours are those of the global indices,
// as on one rank. Every operation here writes halo points too (the inner
// executor walks the padded block), wrongly where it reads past the halo's
// outer edge: the halo of a field neighbours read is refreshed afterwards.
#include <stdexcept>

#include "core/mpi.hpp"
#include "kernels/exec.hpp"
#include "kernels/multigrid/mg_exec.hpp"

namespace gf {
namespace {

template <class T>
class MultigridDist final : public MultigridExec<T> {
 public:
  MultigridDist(std::unique_ptr<MultigridExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  // One colour, then the halo: the next colour reads this one's values there.
  void smooth(const LaplaceArgs<T>& a, const MgColouring& c, Field<T>& u, int colour) override {
    in_->smooth(a, c, u, colour);
    be_.refresh(u);
  }
  void residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>& r) override {
    in_->residual(a, u, r);
    be_.refresh(r);
  }
  void restrict_to(const LaplaceArgs<T>&, const MgAxis*, const Field<T>&, Field<T>&) override {
    throw std::logic_error("multigrid restriction over ranks (the coarse levels live on rank 0)");
  }
  void prolong_add(const LaplaceArgs<T>&, const MgAxis*, const Field<T>&, Field<T>&) override {
    throw std::logic_error("multigrid prolongation over ranks (the coarse levels live on rank 0)");
  }
  // The sum over the owned points of every rank: the inner sum walks the
  // padded block, halo included, so it is refused (only a singular level
  // needs it, and laplace_check_ranks refuses singular cases over ranks).
  double weighted_sum(const LaplaceArgs<T>&, const Field<T>&) override {
    throw std::logic_error("a multigrid weighted sum over ranks (singular cases run on one rank)");
  }
  // Pointwise: a halo point takes the value of the point it copies.
  void unweight(const LaplaceArgs<T>& a, T s, const Field<T>& r, Field<T>& z) override {
    in_->unweight(a, s, r, z);
    be_.refresh(z);
  }
  void zero(Field<T>& v) override { in_->zero(v); }

 private:
  std::unique_ptr<MultigridExec<T>> in_;
  DistributedBackend<T>& be_;
};

template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_dist(std::unique_ptr<MultigridExec<T>> in,
                                                      DistributedBackend<T>& be) {
  return std::make_unique<MultigridDist<T>>(std::move(in), be);
}

}  // namespace

template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_exec(Backend<T>& be) {
  return make_exec<MultigridExec<T>, T>(
      be, {make_multigrid_cpu<T>, GF_CUDA_MAKER(make_multigrid_cuda<T>), make_multigrid_dist<T>});
}
template std::unique_ptr<MultigridExec<float>> make_multigrid_exec<float>(Backend<float>&);
template std::unique_ptr<MultigridExec<double>> make_multigrid_exec<double>(Backend<double>&);

}  // namespace gf
