// The geometric multigrid executor: the operations of a cycle on one level
// or between two (AMReX's MLLinOp: smooth, residual, restrict, interpolate),
// one formula each in mg_ops.hpp, run by the CPU reference (mg_cpu.cpp) and
// the CUDA kernels (mg_cuda.cu). The cycle itself is solvers/multigrid.cpp.
// Fields of any layout (the GPU's padded rows included): every point is
// found through its field's view.
#pragma once
#include <memory>

#include "kernels/backend.hpp"
#include "kernels/multigrid/mg_ops.hpp"

namespace gf {

template <class T>
class MultigridExec {
 public:
  virtual ~MultigridExec() = default;
  // One colour of a Gauss–Seidel sweep, in place: sor_point at the points of
  // colour `colour` of c (0 ≤ colour < c.colours).
  virtual void smooth(const LaplaceArgs<T>& a, const MgColouring& c, Field<T>& u, int colour) = 0;
  // One sweep of a two-colour colouring out of place: v = u after smooth's
  // pass of colour `first` and then of the other, to the last bit, in one
  // pass over memory. False (v untouched) where this executor has none for
  // u's level (the GPU's: 3D, two colours, 3 points an axis and 4096 in all,
  // v laid out as u): the caller smooths in place. sweeps_out_of_place says
  // on which levels it pays (the GPU's: those of 2^24 points or more).
  virtual bool sweeps_out_of_place(int ndim, const MgColouring& c, const Layout& l) const {
    (void)ndim, (void)c, (void)l;
    return false;
  }
  virtual bool sweep_to(const LaplaceArgs<T>& a, const MgColouring& c, const Field<T>& u,
                        Field<T>& v, int first) {
    (void)a, (void)c, (void)u, (void)v, (void)first;
    return false;
  }
  // r = f − L u at every point (0 at Dirichlet points).
  virtual void residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>& r) = 0;
  // coarse = R fine (0 at the coarse level's Dirichlet points); ax: the three axes' maps.
  virtual void restrict_to(const LaplaceArgs<T>& coarse_args, const MgAxis* ax,
                           const Field<T>& fine, Field<T>& coarse) = 0;
  // fine += P coarse (not at the fine level's Dirichlet points).
  virtual void prolong_add(const LaplaceArgs<T>& fine_args, const MgAxis* ax,
                           const Field<T>& coarse, Field<T>& fine) = 0;
  // Σ W·v over the points (W: bc_weight), in double.
  virtual double weighted_sum(const LaplaceArgs<T>& a, const Field<T>& v) = 0;
  // z = s·r/W at every point (0 at Dirichlet points): mg_unweight_point.
  virtual void unweight(const LaplaceArgs<T>& a, T s, const Field<T>& r, Field<T>& z) = 0;
  // v = 0 at every point.
  virtual void zero(Field<T>& v) = 0;
};

template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_exec(Backend<T>& be);
template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_cuda(Backend<T>& be);

}  // namespace gf
