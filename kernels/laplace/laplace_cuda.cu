// The CUDA executor of the Laplace operator: Jacobi through the marches
// (JacobiOp) or a point kernel, red-black SOR, the residual as a fused
// reduction, the operator matrix-free (ApplyOp through the marches, the
// x faces after) or as a cuSPARSE CSR matrix built on the device from
// laplace_row (32- or 64-bit indices), the spectral solve with cuFFT; Jacobi's temporally blocked
// passes, CUDA graphs of small grids' chunks, and sweeps split for the
// overlapped halo exchange.
#include <cub/device/device_scan.cuh>

#include <cmath>
#include <stdexcept>

#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/cuda/halo_kernels.cuh"
#include "kernels/cuda/part_kernels.cuh"
#include "kernels/cuda/time_block2d_kernels.cuh"
#include "kernels/cuda/time_block_kernels.cuh"
#include "kernels/laplace/laplace_exec.hpp"
#include "kernels/laplace/laplace_kernels.cuh"

namespace gf {
namespace {

// Dispatch on the grid dimension: fn(std::integral_constant<int, D>).
template <class F>
void by_dim(int ndim, F&& fn) {
  switch (ndim) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    default: fn(std::integral_constant<int, 3>{}); break;
  }
}

template <class T>
class LaplaceCuda final : public LaplaceExec<T> {
 public:
  explicit LaplaceCuda(CudaBackend<T>& be) : be_(be) {}
  ~LaplaceCuda() override {
    release_operator();
    if (sparse_) cusparseDestroy(sparse_);
    release_fft_plans();
  }

  void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch_jacobi(a, in.view(), out.view());
  }
  void jacobi_run(const LaplaceArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) override {
    static const char tag = 0;
    be_.graphs().replay(
        be_.stream(), key(&tag, a), u, tmp, n,
        [&](const FieldView<const T>& in, const FieldView<T>& out) { launch_jacobi(a, in, out); },
        [&] { LaplaceExec<T>::jacobi_run(a, n, u, tmp); });
  }
  // Jacobi on 2D and 3D grids of fewer than 2³¹ values: the same passes as heat.
  int jacobi_time_block(const LaplaceArgs<T>& a, const Layout& l, int asked) const override {
    return tb_passes(tb_fits(a.ndim, l), asked);
  }
  void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (jacobi_time_block(a, in.layout(), k) != k || k < 2)
      LaplaceExec<T>::jacobi_steps(a, k, in, out);
    with_tb_jacobi(a, [&](const auto& op) {
      if constexpr (std::decay_t<decltype(op)>::kDim == 2)
        launch_time_block2d(op, k, in.view(), out.view(), be_.stream());
      else
        launch_time_block(op, k, in.view(), out.view(), be_.stream());
      GF_CUDA_CHECK_LAUNCH();
    });
  }
  bool jacobi_sweep_part(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out,
                         const Box& core, StepPart part) override {
    const cudaStream_t s = part == StepPart::Shell ? be_.exchange_stream() : be_.stream();
    if (!launch_split<false>(a.ndim, in.view(), out.view(), core, part, s,
                             [&](auto d) { return JacobiOp<T, decltype(d)::value>{a}; }))
      return false;
    GF_CUDA_CHECK_LAUNCH();
    return true;
  }

  void sor_sweep(const LaplaceArgs<T>& a, Field<T>& u, int colour) override {
    launch_sor(a, u.view(), colour);
  }
  // In place: the graph's "two fields" are u twice, and nothing is swapped.
  void sor_run(const LaplaceArgs<T>& a, int n, Field<T>& u) override {
    static const char tag = 0;
    be_.graphs().replay(
        be_.stream(), key(&tag, a), u, u, n,
        [&](const FieldView<const T>&, const FieldView<T>& v) {
          launch_sor(a, v, 0);
          launch_sor(a, v, 1);
        },
        [&] { LaplaceExec<T>::sor_run(a, n, u); });
  }

  double residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>* r) override {
    double s = 0;
    by_dim(a.ndim, [&](auto d) {
      const ResidualFn<decltype(d)::value, T> fn{a, u.data(), r ? r->data() : nullptr,
                                                 u.layout()};
      // the norm alone only decides (convergence, stalls), so its sum may
      // take the tiles' order; with r (CG's start) it seeds the iteration
      if (r)
        s = be_.reduce_field(fn, u.grid(), u.layout());
      else
        s = be_.reduce_field_tiles(fn, u.grid(), u.layout());
    });
    return s;
  }

  // The operator: matrix-free, its args kept (apply_op); or a CSR matrix
  // built on the device from laplace_row (the formula the CPU's apply_point
  // is tested against): count the entries of every row, scan them into row
  // pointers (CUB), fill. 32-bit indices while the entries fit, else 64-bit.
  void set_operator(const LaplaceArgs<T>& a, const Layout& l,
                    OperatorForm form) override {
    release_operator();
    op_ = a;
    op_layout_ = l;
    csr_ = form == OperatorForm::Csr;
    if (!csr_) return;
    if (!l.is_dense())  // SpMV's sums depend on the rows: dense, as LaplaceSolver makes them
      throw std::logic_error("set_operator: the CSR operator takes dense fields (make_dense_field)");
    const std::int64_t n = l.span();
    if (!sparse_) {
      GF_CUSPARSE_CHECK(cusparseCreate(&sparse_));
      GF_CUSPARSE_CHECK(cusparseSetStream(sparse_, be_.stream()));
    }
    if (n * kMaxRowEntries < (std::int64_t(1) << 31))
      build_csr<int>(a, l, CUSPARSE_INDEX_32I);
    else
      build_csr<std::int64_t>(a, l, CUSPARSE_INDEX_64I);
    rows_ = n;
  }

  void apply(const Field<T>& x, Field<T>& y) override {
    if (!x.layout().same_as(op_layout_) || !y.layout().same_as(op_layout_))
      throw DeviceError("apply: the vectors do not match the operator");
    if (csr_) spmv(x, y);
    else apply_op(x.view(), y.view());
  }

  // cuFFT: f̂ = FFT(f); û = spectral_factor·f̂; u = IFFT(û); then FFT(u) for
  // the residual. Plans are made once per grid and kept. Dense fields.
  void prepare_fft(const LaplaceArgs<T>& a, const Layout& l) override {
    using C = FftComplex<T>;
    const HalfSpectrum hs(l.n);
    make_fft_plans(a, l.n);
    fft_f_.at_least(be_.memory(), std::size_t(hs.modes.size()) * sizeof(C), "the spectrum of f");
    fft_u_.at_least(be_.memory(), std::size_t(hs.modes.size()) * sizeof(C), "the spectrum of u");
  }
  double fft_poisson(const LaplaceArgs<T>& a, const Field<T>& f, Field<T>& u) override {
    using C = FftComplex<T>;
    if (!f.layout().is_dense() || !u.layout().is_dense())
      throw std::logic_error("fft_poisson: cuFFT's plans take dense fields (make_dense_field)");
    const HalfSpectrum hs(f.layout().n);
    const std::int64_t nhalf = hs.modes.size();
    make_fft_plans(a, f.layout().n);  // kept from prepare_fft when the grid is the same
    MemoryResource& mem = be_.memory();
    C* F = static_cast<C*>(fft_f_.at_least(mem, std::size_t(nhalf) * sizeof(C), "the spectrum of f"));
    C* U = static_cast<C*>(fft_u_.at_least(mem, std::size_t(nhalf) * sizeof(C), "the spectrum of u"));
    exec_r2c(const_cast<T*>(f.data()), F);
    spectral_scale_kernel<T><<<flat_blocks(nhalf), 256, 0, be_.stream()>>>(
        a, hs, F, U, double(f.layout().size()));
    GF_CUDA_CHECK_LAUNCH();
    exec_c2r(U, u.data());  // overwrites U
    exec_r2c(u.data(), U);
    GF_CUDA_CHECK(cudaMemsetAsync(F, 0, sizeof(C), be_.stream()));  // the mean is not part of it
    const double res = be_.reduce(SpectralResidualFn<T>{a, hs, F, U}, nhalf);
    const double base = be_.reduce(SpectralResidualFn<T>{a, hs, F, nullptr}, nhalf);
    return base > 0 ? std::sqrt(res / base) : 0.0;
  }

 private:
  static cudaDataType data_type() { return sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F; }

  void launch_jacobi(const LaplaceArgs<T>& a, const FieldView<const T>& in,
                     const FieldView<T>& out) {
    const cudaStream_t s = be_.stream();
    if (a.ndim == 2 && march2d_fits(in, out)) {
      launch_march2d<false>(JacobiOp<T, 2>{a}, in, out, s);
      GF_CUDA_CHECK_LAUNCH();
      return;
    }
    if (a.ndim == 3 && march3d_fits(in, out)) {
      launch_march3d<false>(JacobiOp<T, 3>{a}, in, out, s);
      GF_CUDA_CHECK_LAUNCH();
      return;
    }
    dim3 grid, block;
    point_launch(a.ndim, in.n, grid, block);
    by_dim(a.ndim, [&](auto d) {
      jacobi_kernel<decltype(d)::value, T><<<grid, block, 0, s>>>(a, in.p, out.p, in);
    });
    GF_CUDA_CHECK_LAUNCH();
  }
  void launch_sor(const LaplaceArgs<T>& a, const FieldView<T>& u, int colour) {
    dim3 grid, block;
    point_launch(a.ndim, u.n, grid, block);
    by_dim(a.ndim, [&](auto d) {
      sor_kernel<decltype(d)::value, T><<<grid, block, 0, be_.stream()>>>(a, u.p, u, colour);
    });
    GF_CUDA_CHECK_LAUNCH();
  }
  static GraphKey key(const void* tag, const LaplaceArgs<T>& a) {
    GraphKey k(tag);
    k.add(a.ndim);
    for (int ax = 0; ax < 3; ++ax) k.add(a.ih2[ax]);
    k.add_bc(a.bc).add(a.diag).add(a.inv_diag).add(a.f).add(a.f_const).add(a.f_coef);
    return k.add(a.lap_coef).add(a.omega).add(a.op_scale).add(a.op_shift);
  }

  // y = A x matrix-free: the marches (2D, 3D) and the x faces after them,
  // or one thread a point.
  void apply_op(const FieldView<const T>& x, const FieldView<T>& y) {
    const LaplaceArgs<T>& a = op_;
    const cudaStream_t s = be_.stream();
    const bool x_periodic = a.bc[0].lo == BcType::Periodic && a.bc[0].hi == BcType::Periodic;
    const auto x_faces = [&](auto d) {
      if (x_periodic) return;
      const std::int64_t t = 2 * x.n[1] * x.n[2];
      apply_xfaces_kernel<decltype(d)::value, T><<<flat_blocks(t), 256, 0, s>>>(a, x.p, y.p, x);
      GF_CUDA_CHECK_LAUNCH();
    };
    if (a.ndim == 2 && march2d_fits(x, y)) {
      launch_march2d<false>(ApplyOp<T, 2>{a}, x, y, s);
      GF_CUDA_CHECK_LAUNCH();
      x_faces(std::integral_constant<int, 2>{});
      return;
    }
    if (a.ndim == 3 && march3d_fits(x, y)) {
      launch_march3d<false>(ApplyOp<T, 3>{a}, x, y, s);
      GF_CUDA_CHECK_LAUNCH();
      x_faces(std::integral_constant<int, 3>{});
      return;
    }
    dim3 grid, block;
    point_launch(a.ndim, x.n, grid, block);
    by_dim(a.ndim, [&](auto d) {
      apply_kernel<decltype(d)::value, T><<<grid, block, 0, s>>>(a, x.p, y.p, x);
    });
    GF_CUDA_CHECK_LAUNCH();
  }

  template <class I>
  void build_csr(const LaplaceArgs<T>& a, const Layout& l, cusparseIndexType_t index_type) {
    MemoryResource& mem = be_.memory();
    const cudaStream_t s = be_.stream();
    const std::int64_t n = l.span();
    rowptr_.reset(mem, std::size_t(n + 1) * sizeof(I), "the CSR row pointers");
    DeviceBuffer counts;
    counts.reset(mem, std::size_t(n + 1) * sizeof(I), "the CSR row counts");
    GF_CUDA_CHECK(cudaMemsetAsync(counts.as<I>() + n, 0, sizeof(I), s));
    by_dim(a.ndim, [&](auto d) {
      csr_count_kernel<decltype(d)::value, T, I><<<flat_blocks(n), 256, 0, s>>>(a, l, counts.as<I>(), n);
    });
    GF_CUDA_CHECK_LAUNCH();
    std::size_t temp = 0;
    GF_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp, counts.as<I>(), rowptr_.as<I>(),
                                                I(n + 1), s));
    void* tmp = be_.scratch(temp);
    GF_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(tmp, temp, counts.as<I>(), rowptr_.as<I>(), I(n + 1), s));
    I nnz = 0;
    GF_CUDA_CHECK(cudaMemcpyAsync(&nnz, rowptr_.as<I>() + n, sizeof(I), cudaMemcpyDeviceToHost, s));
    GF_CUDA_CHECK(cudaStreamSynchronize(s));
    counts.release();  // before the columns and values: the peak is the matrix
    colind_.reset(mem, std::size_t(std::max<I>(nnz, 1)) * sizeof(I), "the CSR column indices");
    values_.reset(mem, std::size_t(std::max<I>(nnz, 1)) * sizeof(T), "the CSR values");
    by_dim(a.ndim, [&](auto d) {
      csr_fill_kernel<decltype(d)::value, T, I><<<flat_blocks(n), 256, 0, s>>>(
          a, l, rowptr_.as<I>(), colind_.as<I>(), values_.as<T>(), n);
    });
    GF_CUDA_CHECK_LAUNCH();
    GF_CUSPARSE_CHECK(cusparseCreateCsr(&matrix_, n, n, std::int64_t(nnz), rowptr_.get(),
                                        colind_.get(), values_.get(), index_type, index_type,
                                        CUSPARSE_INDEX_BASE_ZERO, data_type()));
  }

  // y = A x by cuSPARSE's generic SpMV, CSR algorithm 2 (deterministic).
  void spmv(const Field<T>& x, Field<T>& y) {
    if (!matrix_) throw DeviceError("apply before set_operator");
    if (std::int64_t(x.size()) != rows_ || std::int64_t(y.size()) != rows_)
      throw DeviceError("apply: the vectors do not match the operator");
    if (!vec_x_) {
      GF_CUSPARSE_CHECK(
          cusparseCreateDnVec(&vec_x_, rows_, const_cast<T*>(x.data()), data_type()));
      GF_CUSPARSE_CHECK(cusparseCreateDnVec(&vec_y_, rows_, y.data(), data_type()));
    } else {
      GF_CUSPARSE_CHECK(cusparseDnVecSetValues(vec_x_, const_cast<T*>(x.data())));
      GF_CUSPARSE_CHECK(cusparseDnVecSetValues(vec_y_, y.data()));
    }
    const T one = 1, zero = 0;
    if (!spmv_ready_) {
      std::size_t bytes = 0;
      GF_CUSPARSE_CHECK(cusparseSpMV_bufferSize(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                matrix_, vec_x_, &zero, vec_y_, data_type(),
                                                CUSPARSE_SPMV_CSR_ALG2, &bytes));
      spmv_buffer_.at_least(be_.memory(), std::max<std::size_t>(bytes, 16),
                            "the cuSPARSE SpMV buffer");
      spmv_ready_ = true;
    }
    GF_CUSPARSE_CHECK(cusparseSpMV(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_,
                                   vec_x_, &zero, vec_y_, data_type(), CUSPARSE_SPMV_CSR_ALG2,
                                   spmv_buffer_.get()));
  }

  void release_operator() {
    if (vec_x_) cusparseDestroyDnVec(vec_x_);
    if (vec_y_) cusparseDestroyDnVec(vec_y_);
    if (matrix_) cusparseDestroySpMat(matrix_);
    vec_x_ = vec_y_ = nullptr;
    matrix_ = nullptr;
    spmv_ready_ = false;
    rows_ = 0;
    rowptr_.release();
    colind_.release();
    values_.release();
  }

  void make_fft_plans(const LaplaceArgs<T>& a, const std::int64_t* n) {
    const bool same = fft_plans_ && fft_dims_[0] == n[0] && fft_dims_[1] == n[1] &&
                      fft_dims_[2] == n[2];
    if (same) return;
    release_fft_plans();
    long long dims[3];  // slowest axis first
    for (int ax = 0; ax < a.ndim; ++ax) dims[ax] = n[a.ndim - 1 - ax];
    const bool f32 = sizeof(T) == 4;
    std::size_t work = 0;
    GF_CUFFT_CHECK(cufftCreate(&plan_r2c_));
    GF_CUFFT_CHECK(cufftCreate(&plan_c2r_));
    fft_plans_ = true;
    GF_CUFFT_CHECK(cufftSetStream(plan_r2c_, be_.stream()));
    GF_CUFFT_CHECK(cufftSetStream(plan_c2r_, be_.stream()));
    GF_CUFFT_CHECK(cufftMakePlanMany64(plan_r2c_, a.ndim, dims, nullptr, 1, 0, nullptr, 1, 0,
                                       f32 ? CUFFT_R2C : CUFFT_D2Z, 1, &work));
    GF_CUFFT_CHECK(cufftMakePlanMany64(plan_c2r_, a.ndim, dims, nullptr, 1, 0, nullptr, 1, 0,
                                       f32 ? CUFFT_C2R : CUFFT_Z2D, 1, &work));
    for (int ax = 0; ax < 3; ++ax) fft_dims_[ax] = n[ax];
  }
  void release_fft_plans() {
    if (!fft_plans_) return;
    cufftDestroy(plan_r2c_);
    cufftDestroy(plan_c2r_);
    fft_plans_ = false;
  }
  void exec_r2c(T* in, FftComplex<T>* out) {
    if constexpr (sizeof(T) == 4)
      GF_CUFFT_CHECK(cufftExecR2C(plan_r2c_, in, out));
    else
      GF_CUFFT_CHECK(cufftExecD2Z(plan_r2c_, in, out));
  }
  void exec_c2r(FftComplex<T>* in, T* out) {
    if constexpr (sizeof(T) == 4)
      GF_CUFFT_CHECK(cufftExecC2R(plan_c2r_, in, out));
    else
      GF_CUFFT_CHECK(cufftExecZ2D(plan_c2r_, in, out));
  }

  CudaBackend<T>& be_;
  // The operator of apply: its args (matrix-free), or cuSPARSE's CSR matrix and vectors.
  LaplaceArgs<T> op_;
  Layout op_layout_;
  bool csr_ = false;
  cusparseHandle_t sparse_ = nullptr;
  cusparseSpMatDescr_t matrix_ = nullptr;
  cusparseDnVecDescr_t vec_x_ = nullptr, vec_y_ = nullptr;
  std::int64_t rows_ = 0;
  bool spmv_ready_ = false;
  DeviceBuffer rowptr_, colind_, values_, spmv_buffer_;
  // cuFFT plans and the two half spectra of the FFT solve.
  cufftHandle plan_r2c_{}, plan_c2r_{};
  bool fft_plans_ = false;
  std::int64_t fft_dims_[3] = {0, 0, 0};
  DeviceBuffer fft_f_, fft_u_;
};

}  // namespace

template <class T>
std::unique_ptr<LaplaceExec<T>> make_laplace_cuda(Backend<T>& be) {
  return std::make_unique<LaplaceCuda<T>>(cuda_core(be));
}
template std::unique_ptr<LaplaceExec<float>> make_laplace_cuda<float>(Backend<float>&);
template std::unique_ptr<LaplaceExec<double>> make_laplace_cuda<double>(Backend<double>&);

}  // namespace gf
