// The factory of multigrid executors. Over MPI ranks multigrid is refused
// when the case is checked (solvers/registry.cpp: laplace_check_ranks), so
// no distributed executor exists yet.
#include <stdexcept>

#include "kernels/exec.hpp"
#include "kernels/multigrid/mg_exec.hpp"

namespace gf {
namespace {

template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_dist(std::unique_ptr<MultigridExec<T>>,
                                                      DistributedBackend<T>&) {
  throw std::logic_error("multigrid on several ranks (laplace_check_ranks refuses it)");
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
