// The point formulas of mixed-precision iterative refinement
// (laplace.precision: mixed), shared by the CPU loops (mixed_cpu.cpp) and the
// CUDA kernels (mixed_cuda.cu): the float64 defect handed to a float32
// multigrid cycle, and that cycle's correction added back in float64.
//
//   defect     dᵢ = fᵢ − (L u)ᵢ in float64 (mg_residual_point: 0 at Dirichlet
//              points), stored as float(s·dᵢ); the point's term of the
//              solver's check Σ (Wᵢ·dᵢ)² (the weighted residual of
//              residual_point, the same operations), in double
//   correct    uᵢ += eᵢ/s, eᵢ widened to float64
//
// s scales the defect to order 1 before it is rounded to float32 (its
// exponent range then never matters); 1/s scales the correction back.
#pragma once
#include "kernels/multigrid/mg_ops.hpp"

namespace gf {

// The defect d (mg_residual_point's value) at a point of weight w: stored
// as float(s·d); the term (w·d)².
GF_HD double mixed_defect_term(double d, double w, double s, float& d32) {
  const double wd = w * d;
  d32 = static_cast<float>(s * d);
  return wd * wd;
}

template <int D>
GF_HD double mixed_defect_point(const LaplaceArgs<double>& a, const FieldView<const double>& u,
                                std::int64_t i, std::int64_t j, std::int64_t k, double s,
                                float& d32) {
  const double d = mg_residual_point<D>(a, u, i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  return mixed_defect_term(d, bc_weight<D>(a, u.n, pos), s, d32);
}

GF_HD double mixed_corrected(double u, float e, double inv_s) { return u + double(e) * inv_s; }

}  // namespace gf
