// How a workload's executor is made for a backend: each workload has its
// executor interface (kernels/<workload>/<workload>_exec.hpp) and three
// implementations beside it, the CPU reference (<workload>_cpu.cpp), the
// CUDA one (<workload>_cuda.cu) and the wrapper over MPI ranks
// (<workload>_dist.cpp, on kernels/dist/); make_exec picks the one for the
// backend, wrapping the rank's own for a distributed backend.
#pragma once
#include <memory>
#include <stdexcept>

#include "kernels/backend.hpp"
#include "kernels/dist/dist_backend.hpp"

namespace gf {

template <class Exec, class T>
struct ExecMakers {
  std::unique_ptr<Exec> (*cpu)(Backend<T>&);
  std::unique_ptr<Exec> (*cuda)(Backend<T>&);  // null in a build without CUDA
  std::unique_ptr<Exec> (*dist)(std::unique_ptr<Exec>, DistributedBackend<T>&);
};

template <class Exec, class T>
std::unique_ptr<Exec> make_exec(Backend<T>& be, const ExecMakers<Exec, T>& m) {
  switch (be.kind()) {
    case BackendKind::Distributed: {
      auto& d = static_cast<DistributedBackend<T>&>(be);
      return m.dist(make_exec<Exec, T>(d.inner(), m), d);
    }
    case BackendKind::Cuda:
      if (!m.cuda) throw std::logic_error("a CUDA backend in a build without CUDA");
      return m.cuda(be);
    case BackendKind::Cpu:
      break;
  }
  return m.cpu(be);
}

// The CUDA maker where the build has CUDA, else null.
#if defined(GRIDFORGE_HAVE_CUDA)
#define GF_CUDA_MAKER(f) (f)
#else
#define GF_CUDA_MAKER(f) nullptr
#endif

}  // namespace gf
