// The CPU reference executor of the Laplace operator: the laplace_ops.hpp
// formulas in plain loops (kernels/cpu/loops.hpp), the spectral solve with
// FFTW (cuFFT's reference).
#include <fftw3.h>

#include <cmath>
#include <complex>
#include <vector>

#include "kernels/cpu/loops.hpp"
#include "kernels/laplace/laplace_exec.hpp"

namespace gf {
namespace {

using namespace cpu;

// Jacobi at points first..last − 1, all off every face; f(idx) is rhs_at.
template <int D, class T, class Rhs>
GF_ROW_LOOP_CLONES void jacobi_inner(const T* __restrict u, T* __restrict v, std::int64_t first,
                                     std::int64_t last, std::int64_t sy, std::int64_t sz,
                                     const T* __restrict ih2, T inv_diag, Rhs f) {
  for (std::int64_t idx = first; idx < last; ++idx) {
    T m[3], p[3];
    direct_neighbours<D>(u, idx, sy, sz, m, p);
    v[idx] = jacobi_formula<D>(m, p, ih2, f(idx), inv_diag);
  }
}

template <int D, class T>
void jacobi_box(const LaplaceArgs<T>& a, const Box& box, const FieldView<const T>& u,
                const FieldView<T>& v) {
  for_rows<D>(
      u, box, a.bc, u.p, v.p,
      [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        v[idx] = jacobi_point<D>(a, u, i, j, k);
      },
      [&](std::int64_t first, std::int64_t last) {
        if (a.f) {
          jacobi_inner<D>(u.p, v.p, first, last, u.sy, u.sz, a.ih2, a.inv_diag,
                          [&](std::int64_t idx) { return rhs_at(a, idx); });
        } else {
          const T f = rhs_at(a, first);  // a constant: the same at every point
          jacobi_inner<D>(u.p, v.p, first, last, u.sy, u.sz, a.ih2, a.inv_diag,
                          [f](std::int64_t) { return f; });
        }
      });
}

// FFTW in the executor's precision (fftwf_ for float).
template <class T>
struct Fftw;
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using complex = fftw_complex;
  static plan r2c(int rank, const int* n, double* in, complex* out) {
    return fftw_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE);
  }
  static plan c2r(int rank, const int* n, complex* in, double* out) {
    return fftw_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE);
  }
  static void execute(plan p) { fftw_execute(p); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using complex = fftwf_complex;
  static plan r2c(int rank, const int* n, float* in, complex* out) {
    return fftwf_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE);
  }
  static plan c2r(int rank, const int* n, complex* in, float* out) {
    return fftwf_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE);
  }
  static void execute(plan p) { fftwf_execute(p); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

// The spectral Poisson solve with FFTW (the reference for cuFFT): f̂ = FFT(f),
// û = spectral_factor·f̂, u = IFFT(û); then FFT(u) again for the residual.
// The fields are dense (FFTW's layout).
template <class T>
double fft_poisson_cpu(const LaplaceArgs<T>& a, const std::int64_t* n, const T* f, T* u) {
  using W = Fftw<T>;
  int dims[3];  // FFTW wants the slowest axis first
  for (int ax = 0; ax < a.ndim; ++ax) dims[ax] = int(n[a.ndim - 1 - ax]);
  const std::int64_t half[3] = {n[0] / 2 + 1, n[1], n[2]};
  const Layout modes = Layout::dense(half);
  std::vector<std::complex<T>> fh(static_cast<std::size_t>(modes.size())), uh(fh.size());
  auto* F = reinterpret_cast<typename W::complex*>(fh.data());
  auto* U = reinterpret_cast<typename W::complex*>(uh.data());
  const double npts = double(Layout::dense(n).size());
  auto plan_f = W::r2c(a.ndim, dims, const_cast<T*>(f), F);
  auto plan_b = W::c2r(a.ndim, dims, U, u);
  auto plan_u = W::r2c(a.ndim, dims, u, U);
  if (!plan_f || !plan_b || !plan_u) throw DeviceError("FFTW could not plan the transforms");
  W::execute(plan_f);
  for_each_point(modes, [&](std::int64_t mx, std::int64_t my, std::int64_t mz, std::int64_t m) {
    const double s = spectral_factor(a, n, mx, my, mz, npts);
    uh[m] = std::complex<T>(T(s * double(fh[m].real())), T(s * double(fh[m].imag())));
  });
  W::execute(plan_b);  // destroys uh
  W::execute(plan_u);  // uh = FFT(u)
  fh[0] = 0;           // the mean is not part of the problem
  const double res = sum_points(modes, [&](std::int64_t mx, std::int64_t my, std::int64_t mz,
                                           std::int64_t m) {
    return spectral_residual2(spectral_k2(a, n, mx, my, mz), half_spectrum_weight(mx, n[0]),
                              fh[m].real(), fh[m].imag(), uh[m].real(), uh[m].imag());
  });
  const double base = sum_points(modes, [&](std::int64_t mx, std::int64_t, std::int64_t,
                                            std::int64_t m) {
    return spectral_residual2(0.0, half_spectrum_weight(mx, n[0]), fh[m].real(), fh[m].imag(),
                              0.0, 0.0);
  });
  W::destroy(plan_f);
  W::destroy(plan_b);
  W::destroy(plan_u);
  return base > 0 ? std::sqrt(res / base) : 0.0;
}

template <class T>
class LaplaceCpu final : public LaplaceExec<T> {
 public:
  void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    box(a, Box::whole(in.layout().n), in, out);
  }
  bool jacobi_sweep_part(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out,
                         const Box& core, StepPart part) override {
    for (const Box& b : part_boxes(in.layout().n, core, part)) box(a, b, in, out);
    return true;
  }
  int jacobi_time_block(const LaplaceArgs<T>& a, const Layout& l, int asked) const override {
    return passes(has_passes(a.ndim, l.n), asked);
  }
  void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (jacobi_time_block(a, in.layout(), k) != k || k < 2)
      LaplaceExec<T>::jacobi_steps(a, k, in, out);
    with_tb_jacobi(a, [&](const auto& op) { time_block_cpu(op, k, in.view(), out.view()); });
  }

  // Points of one colour read only points of the other: the order does not matter.
  void sor_sweep(const LaplaceArgs<T>& a, Field<T>& f, int colour) override {
    const FieldView<T> u = f.view();
    by_dim(a.ndim, [&](auto d) {
      for_each_point(u, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        if (sor_colour(i, j, k) == colour)
          u[idx] = sor_point<decltype(d)::value>(a, FieldView<const T>(u), i, j, k);
      });
    });
  }

  double residual(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>* r) override {
    const FieldView<const T> u = in.view();
    T* out = r ? r->data() : nullptr;
    double s = 0;
    const Grid& g = in.grid();
    if (g.has_halo()) {  // r everywhere, Σ r² over the owned points
      by_dim(a.ndim, [&](auto d) {
        constexpr int D = decltype(d)::value;
        if (out) {
          for_each_point(u, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
            out[idx] = residual_point<D>(a, u, i, j, k);
          });
          s = sum_owned(g, u, [&](std::int64_t idx) { return double(out[idx]) * double(out[idx]); });
          return;
        }
        s = sum_owned(g, u, [&](std::int64_t idx) {
          std::int64_t i, j, k;
          u.locate(idx, i, j, k);
          const T v = residual_point<D>(a, u, i, j, k);
          return double(v) * double(v);
        });
      });
      return s;
    }
    by_dim(a.ndim, [&](auto d) {
      s = sum_points(u, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        const T v = residual_point<decltype(d)::value>(a, u, i, j, k);
        if (out) out[idx] = v;
        return double(v) * double(v);
      });
    });
    return s;
  }

  void set_operator(const LaplaceArgs<T>& a, const Layout& l,
                    OperatorForm form) override {
    op_ = a;
    csr_ = form == OperatorForm::Csr;
    rowptr_.clear(), cols_.clear(), vals_.clear();
    if (csr_) build_csr(a, l);
  }
  void apply(const Field<T>& x, Field<T>& y) override {
    const FieldView<const T> p = x.view();
    const FieldView<T> q = y.view();
    if (csr_) {  // y = Σ vals·x over each row's entries, in column order
      if (std::int64_t(rowptr_.size()) != p.span() + 1)
        throw DeviceError("apply: the vectors do not match the operator");
      const T* xv = p.p;
      for_each_point(p, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t idx) {
        T s = 0;
        for (std::int64_t e = rowptr_[std::size_t(idx)]; e < rowptr_[std::size_t(idx) + 1]; ++e)
          s += vals_[std::size_t(e)] * xv[cols_[std::size_t(e)]];
        q[idx] = s;
      });
      return;
    }
    by_dim(op_.ndim, [&](auto d) { apply_free<decltype(d)::value>(p, q); });
  }

  double fft_poisson(const LaplaceArgs<T>& a, const Field<T>& f, Field<T>& u) override {
    return fft_poisson_cpu(a, f.layout().n, f.data(), u.data());
  }

 private:
  static void box(const LaplaceArgs<T>& a, const Box& b, const Field<T>& in, Field<T>& out) {
    by_dim(a.ndim, [&](auto d) { jacobi_box<decltype(d)::value>(a, b, in.view(), out.view()); });
  }
  // Matrix-free: apply_point at the points next to a face; the rows off
  // every face take apply_formula from their neighbours directly (the same
  // formula, the same operands: the same values).
  template <int D>
  void apply_free(const FieldView<const T>& p, const FieldView<T>& q) const {
    const LaplaceArgs<T>& a = op_;
    const std::int64_t nx = p.n[0], ny = p.n[1], nz = p.n[2];
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_for(p.size()))
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t j = 0; j < ny; ++j) {
        const std::int64_t row = p.index(0, j, k);
        const bool off_faces =
            nx > 2 && (D < 2 || (j > 0 && j < ny - 1)) && (D < 3 || (k > 0 && k < nz - 1));
        if (!off_faces) {
          for (std::int64_t i = 0; i < nx; ++i) q[row + i] = apply_point<D>(a, p, i, j, k);
          continue;
        }
        q[row] = apply_point<D>(a, p, 0, j, k);
        for (std::int64_t idx = row + 1; idx < row + nx - 1; ++idx) {
          T m[3], pp[3];
          direct_neighbours<D>(p.p, idx, p.sy, p.sz, m, pp);
          q[idx] = apply_formula<D>(a, p[idx], m, pp);
        }
        q[row + nx - 1] = apply_point<D>(a, p, nx - 1, j, k);
      }
  }
  // The CSR matrix of laplace_row's rows over the values of layout l (a
  // padding value's row is empty): counted, summed into row pointers, filled.
  void build_csr(const LaplaceArgs<T>& a, const Layout& l) {
    const std::int64_t n = l.span();
    rowptr_.assign(std::size_t(n + 1), 0);
    by_dim(a.ndim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      for_each_point(l, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        std::int64_t c[kMaxRowEntries];
        T v[kMaxRowEntries];
        rowptr_[std::size_t(idx) + 1] = laplace_row<D>(a, l, i, j, k, c, v);
      });
      for (std::size_t r = 1; r < rowptr_.size(); ++r) rowptr_[r] += rowptr_[r - 1];
      cols_.resize(std::size_t(rowptr_.back()));
      vals_.resize(cols_.size());
      for_each_point(l, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        const std::size_t base = std::size_t(rowptr_[std::size_t(idx)]);
        laplace_row<D>(a, l, i, j, k, cols_.data() + base, vals_.data() + base);
      });
    });
  }
  LaplaceArgs<T> op_;
  bool csr_ = false;
  std::vector<std::int64_t> rowptr_, cols_;
  std::vector<T> vals_;
};

}  // namespace

template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_cpu(Backend<T>&) {
  return std::make_unique<LaplaceCpu<T>>();
}
template std::unique_ptr<LaplaceExec<float>> make_laplace_cpu<float>(Backend<float>&);
template std::unique_ptr<LaplaceExec<double>> make_laplace_cpu<double>(Backend<double>&);

}  // namespace gf
