// The pde executor over MPI ranks (kernels/dist/): the rank's executor runs
// the stage over its padded block, then the halo of every field the stage
// wrote is refreshed, so that the next stage's inputs hold their
// neighbours' values (the invariant of dist_backend.hpp); and the factory of
// pde executors.
//
// What a stage reads beyond a point: its input fields' neighbours (one
// layer: lap, the first differences and div(k*grad f) are radius 1) and the
// coefficients' neighbours. The coefficients are filled once by the
// expressions' executor, which refreshes their halos (expr_dist.cpp); u0
// and acc are read at a point's own index only. The rank-local case marks
// the faces shared with another rank periodic in every field's boundary
// (solvers/decompose.cpp, local_case), so pde_point applies Dirichlet
// values, mirrors and wraps on the grid's own faces only, and reads the
// halo like any neighbour elsewhere; coordinates, hence Dirichlet values of
// x, y, z and t, come from global indices (PdeArgs::offset).
//
// The exchange follows the whole stage (no overlap with the interior: the
// stage writes several fields at once, and PdeExec has no split stage).
#include <stdexcept>

#include "kernels/dist/dist_backend.hpp"
#include "kernels/pde/pde_codegen.hpp"
#include "kernels/pde/pde_exec.hpp"
#include "kernels/pde/pde_rtc.hpp"

namespace gf {
namespace {

template <class T>
class PdeDist final : public PdeExec<T> {
 public:
  PdeDist(std::unique_ptr<PdeExec<T>> in, DistributedBackend<T>& be)
      : in_(std::move(in)), be_(be) {}
  void stage(PdeArgs<T> a, const PdeFields<T>& f) override {
    in_->stage(a, f);
    for (Field<T>* out : f.out) be_.refresh(*out);
  }
  std::string setup_note() const override { return in_->setup_note(); }
  double compile_s() const override { return in_->compile_s(); }

 private:
  std::unique_ptr<PdeExec<T>> in_;
  DistributedBackend<T>& be_;
};

}  // namespace

// As kernels/exec.hpp's make_exec, by hand: the makers take the program.
template <class T>
std::unique_ptr<PdeExec<T>> make_pde_exec(Backend<T>& be, const PdeProgram& prog, int ndim,
                                          PdeTerms terms, bool equal_h) {
  switch (be.kind()) {
    case BackendKind::Distributed: {
      auto& d = static_cast<DistributedBackend<T>&>(be);
      return std::make_unique<PdeDist<T>>(make_pde_exec(d.inner(), prog, ndim, terms, equal_h), d);
    }
    case BackendKind::Cuda:
#if defined(GRIDFORGE_HAVE_CUDA)
      return make_pde_cuda(
          be,
          pde_kernel_source(prog, sizeof(T) == 4 ? "float" : "double", ndim, terms, equal_h,
                            pde_march_prefetch(int(sizeof(T)))),
          terms, equal_h);
#else
      throw std::logic_error("a CUDA backend in a build without CUDA");
#endif
    case BackendKind::Cpu: break;
  }
  return make_pde_cpu(be, prog);
}

template std::unique_ptr<PdeExec<float>> make_pde_exec<float>(Backend<float>&, const PdeProgram&,
                                                              int, PdeTerms, bool);
template std::unique_ptr<PdeExec<double>> make_pde_exec<double>(Backend<double>&,
                                                                const PdeProgram&, int, PdeTerms, bool);

}  // namespace gf
