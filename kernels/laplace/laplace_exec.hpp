// The Laplace/Poisson operator's executor: the operations of the iterative
// and direct solves of ∇²u = f and of the implicit heat schemes (AMReX's
// MLLinOp is the model: an operator offers apply, smooth, residual), one
// formula each in laplace_ops.hpp, run by the CPU reference
// (laplace_cpu.cpp, FFTW), the CUDA kernels (laplace_cuda.cu, cuSPARSE,
// cuFFT) and, over MPI ranks, laplace_dist.cpp.
#pragma once
#include <memory>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/laplace/laplace_ops.hpp"

namespace gf {

// The form of CG's operator (LaplaceExec::set_operator).
enum class OperatorForm { MatrixFree, Csr };

template <class T>
class LaplaceExec {
 public:
  virtual ~LaplaceExec() = default;

  // ---- smoothing: Jacobi and red-black SOR ----
  // One Jacobi sweep: out = Jacobi(in) at every point (Dirichlet points copied).
  virtual void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) = 0;
  // Temporal blocking of Jacobi, as HeatExec::time_block: k sweeps in one
  // pass, bit for bit k jacobi_sweep calls. The CPU and CUDA executors have
  // passes of k = 2 to 4 for 2D and 3D grids; 1 elsewhere.
  virtual int jacobi_time_block(const LaplaceArgs<T>& a, const Layout& l, int asked) const {
    (void)a, (void)l, (void)asked;
    return 1;
  }
  virtual void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) {
    (void)a, (void)in, (void)out;
    throw DeviceError("no temporally blocked Jacobi pass of " + std::to_string(k) +
                      " sweeps here");
  }
  // n Jacobi sweeps u → tmp → u ... (result in u, as HeatExec::run), and n
  // whole red-black SOR sweeps (red then black) in place: bit for bit the
  // single calls.
  virtual void jacobi_run(const LaplaceArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) {
    for (int s = 0; s < n; ++s) {
      jacobi_sweep(a, u, tmp);
      u.swap(tmp);
    }
  }
  // One Jacobi sweep in two parts, as HeatExec::step_part.
  virtual bool jacobi_sweep_part(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out,
                                 const Box& core, StepPart part) {
    (void)a, (void)in, (void)out, (void)core, (void)part;
    return false;
  }
  // One half of a red-black SOR sweep, in place: the points of one colour
  // (0 red, 1 black: the parity of i + j + k).
  virtual void sor_sweep(const LaplaceArgs<T>& a, Field<T>& u, int colour) = 0;
  virtual void sor_run(const LaplaceArgs<T>& a, int n, Field<T>& u) {
    for (int s = 0; s < n; ++s) {
      sor_sweep(a, u, 0);
      sor_sweep(a, u, 1);
    }
  }

  // ---- the residual ----
  // r = W·(f_coef·f + lap_coef·L u) at every point (0 at Dirichlet points),
  // stored in *r when r is given; returns Σ r² (accumulated in double) over
  // the points the field's rank owns.
  virtual double residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>* r) = 0;

  // ---- the operator A of apply_point (CG's) ----
  // Kept by the executor for fields of layout l, in the form asked:
  // MatrixFree (the args themselves: apply_point at every point, the GPU's
  // marches; fields of any layout) or Csr (a sparse matrix of laplace_row's
  // rows, 64-bit indices where 32-bit ones would overflow: cuSPARSE's SpMV on
  // the GPU, a plain row loop on the CPU; dense fields on the GPU).
  virtual void set_operator(const LaplaceArgs<T>& a, const Layout& l, OperatorForm form) = 0;
  virtual void apply(const Field<T>& x, Field<T>& y) = 0;  // y = A x

  // ---- the direct spectral solve ----
  // The spectral solution of ∇²u = f on a grid periodic on every axis (f's
  // mean is dropped; u has mean 0). Returns the relative spectral residual
  // ‖f − ∇²u‖₂ / ‖f‖₂ of the u written, measured by transforming u again.
  virtual double fft_poisson(const LaplaceArgs<T>& a, const Field<T>& f, Field<T>& u) = 0;
  // Plans the transforms and takes the spectra's memory for fft_poisson on
  // fields of layout l, so that the solve's time is the solve's (setup, not compute).
  virtual void prepare_fft(const LaplaceArgs<T>& a, const Layout& l) { (void)a, (void)l; }
};

template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_exec(Backend<T>& be);

template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_cuda(Backend<T>& be);

}  // namespace gf
