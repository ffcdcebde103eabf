// The executor of mixed-precision iterative refinement (laplace.precision:
// mixed): the two operations that cross precisions, run on the float64
// backend's device and stream; the float32 fields belong to a float32
// backend on the same device (the caller synchronises the two between
// their turns). Formulas: mixed_ops.hpp; CPU loops: mixed_cpu.cpp; CUDA
// kernels: mixed_cuda.cu. One rank (multigrid's rule).
#pragma once
#include <memory>

#include "kernels/backend.hpp"
#include "kernels/mixed/mixed_ops.hpp"

namespace gf {

class MixedExec {
 public:
  virtual ~MixedExec() = default;
  // d = s·(f − L u) into the float32 field d (any layout; 0 at Dirichlet
  // points); returns Σ (W·(f − L u))² over the points, in double: the
  // solver's squared residual (a.f_coef 1, a.lap_coef −1). `decides`: the
  // sum only decides (convergence, a rescaling), so its terms may be added
  // in any fixed order (the GPU's tiles, reduce_tiles_kernel); else in the
  // reductions' order (the first defect's sum sets the scale).
  virtual double defect(const LaplaceArgs<double>& a, const Field<double>& u, double s,
                        Field<float>& d, bool decides = false) = 0;
  // u += e/s at every point.
  virtual void correct(const Field<float>& e, double s, Field<double>& u) = 0;
};

std::unique_ptr<MixedExec> make_mixed_exec(Backend<double>& be);
std::unique_ptr<MixedExec> make_mixed_cpu(Backend<double>& be);
std::unique_ptr<MixedExec> make_mixed_cuda(Backend<double>& be);

}  // namespace gf
