// The CUDA executor of multigrid: one thread a point through each field's
// view (padded rows included), every point by the mg_ops.hpp formula the CPU
// reference loops call; Σ W·v through the backend's deterministic reduction.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/laplace/laplace_kernels.cuh"
#include "kernels/multigrid/mg_exec.hpp"

namespace gf {
namespace {

// fn(i, j, k, idx) at every point of layout l (x across threads, y and z
// looped over as in the laplace point kernels).
template <class F>
__global__ void __launch_bounds__(256) mg_points_kernel(F fn, Layout l) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= nx) return;
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y)
      fn(i, j, k, l.index(i, j, k));
}

// A pass over a level of at least 3 points an axis runs as two launches:
// the points off the faces by the straight formula (every neighbour in the
// grid, no face test), then the shell of points on the faces by the
// boundary rules. One kernel holding both paths ran ~190 instructions a
// point in the residual (ncu at 513³, 70 % SM in float32).
constexpr std::int64_t kMgSplitPoints = 4096;  // smaller levels: one launch over every point

template <int D>
bool mg_split(const Layout& l) {
  for (int a = 0; a < D; ++a)
    if (l.n[a] < 3) return false;
  return l.size() >= kMgSplitPoints;
}

// fn.interior_row(t, j, k) for every row (j, k) off the faces of l, t the
// thread along x (the functor says which point of the row t is).
template <int D, class F>
__global__ void __launch_bounds__(256) mg_interior_kernel(F fn, Layout l) {
  const std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t ny = D > 1 ? l.n[1] - 1 : 1, nz = D > 2 ? l.n[2] - 1 : 1;
  for (std::int64_t k = (D > 2 ? 1 : 0) + blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = (D > 1 ? 1 : 0) + blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
         j < ny; j += std::int64_t(gridDim.y) * blockDim.y)
      fn.interior_row(t, j, k);
}

// fn(i, j, k, idx) at every point of the faces of l (count of them).
template <int D, class F>
__global__ void __launch_bounds__(256) mg_shell_kernel(F fn, Layout l, std::int64_t count) {
  for (std::int64_t q = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; q < count;
       q += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t i, j, k;
    l.shell_point(D, q, i, j, k);
    fn(i, j, k, l.index(i, j, k));
  }
}

// Any colouring (three colours with an odd periodic axis): a thread a point,
// those of other colours idle.
template <int D, class T>
struct SmoothFn {
  LaplaceArgs<T> a;
  MgColouring c;
  FieldView<T> u;
  int colour;
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k,
                             std::int64_t idx) const {
    if (mg_colour(c, i, j, k) == colour) sor_in_place<D>(a, u, i, j, k, idx);
  }
  // Red-black only: thread t takes the t-th point of the colour from i = 1
  // in row (j, k) off the faces (mg_colour's parity of the global i + j + k).
  __device__ void interior_row(std::int64_t t, std::int64_t j, std::int64_t k) const {
    const std::int64_t off = 1 + c.off[0] + c.off[1] + c.off[2];
    const std::int64_t i = 1 + 2 * t + ((colour ^ int((j + k + off) & 1)) & 1);
    if (i < u.n[0] - 1) sor_interior_in_place<D>(a, u, u.index(i, j, k));
  }
};

// Red-black: a thread a point of the colour, every other point of a row
// (mg_colour's parity of the global i + j + k). The smoother's passes are
// bound by their instructions, not by memory (ncu at 513³: 74 % SM, 49 %
// DRAM, float32 as slow as float64), so idle threads cost.
template <int D, class T>
__global__ void __launch_bounds__(256) mg_red_black_kernel(LaplaceArgs<T> a, MgColouring c,
                                                           FieldView<T> u, int colour) {
  const std::int64_t nx = u.n[0], ny = u.n[1], nz = u.n[2];
  const std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t off = c.off[0] + c.off[1] + c.off[2];
  for (std::int64_t k = blockIdx.z; k < nz; k += gridDim.z)
    for (std::int64_t j = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; j < ny;
         j += std::int64_t(gridDim.y) * blockDim.y) {
      const std::int64_t i = 2 * t + ((colour ^ int((j + k + off) & 1)) & 1);
      if (i < nx) sor_in_place<D>(a, u, i, j, k, u.index(i, j, k));
    }
}

template <int D, class T>
struct ResidualPointFn {
  LaplaceArgs<T> a;
  FieldView<const T> u;
  FieldView<T> r;
  __device__ void interior(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) const {
    T m[3], p[3];
    gather_interior<D>(static_cast<const Layout&>(u), u.p, idx, m, p);
    r(i, j, k) = mg_residual_formula<D>(a, u[idx], m, p, rhs_at(a, idx));
  }
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k,
                             std::int64_t idx) const {
    if (lap_interior<D>(u.n, i, j, k))
      interior(i, j, k, idx);
    else
      r(i, j, k) = mg_residual_point<D>(a, u, i, j, k);
  }
  // Point i = 1 + t of row (j, k) off the faces.
  __device__ void interior_row(std::int64_t t, std::int64_t j, std::int64_t k) const {
    const std::int64_t i = 1 + t;
    if (i < u.n[0] - 1) interior(i, j, k, u.index(i, j, k));
  }
};

// ---- a red-black sweep in one pass over memory (3D, two colours) ----------------
//
// v = u after one Gauss–Seidel sweep: the colour `first` by sor_point, then
// the other from the first's new values; bit for bit smooth()'s two passes
// in place (the same formulas on the same numbers), with u and f read and v
// written once instead of twice. A block takes a tile of kMgFx × kMgFy
// interior points of a row of planes and marches up kMgFz planes of it: the
// first colour's new values of the plane above the one it finishes, over the
// tile and a ring of one point (on the faces by the boundary rules), go to a
// ring of three planes in shared memory; then each point of the finished
// plane takes its value (the first colour's copied, the second's from them).
// Indices in I (32 bits below 2³¹ values). The faces' points of the second
// colour follow (SmoothFn on the shell), reading v.
constexpr int kMgFx = 32, kMgFy = 8, kMgFz = 32;
// Multigrid::smooth takes the sweep on levels of 2^24 points (256³) or more:
// on an H100 it was level at 257³ and 8-10 % faster from 385³ (a whole
// solve), and slower at 129³, where the marching blocks are too few.
constexpr std::int64_t kMgSweepPoints = std::int64_t(1) << 24;

template <class T, class I>
__global__ void __launch_bounds__(256) mg_rb_sweep_kernel(LaplaceArgs<T> a, MgColouring c,
                                                          FieldView<const T> u, FieldView<T> v,
                                                          int first) {
  constexpr int RX = kMgFx + 2, RY = kMgFy + 2, HALF = RX / 2;
  __shared__ T nw[3][RY][RX];
  const I n0 = I(u.n[0]), n1 = I(u.n[1]), n2 = I(u.n[2]);
  const I i0 = 1 + I(blockIdx.x) * kMgFx, j0 = 1 + I(blockIdx.y) * kMgFy;
  const I kb = 1 + I(blockIdx.z) * kMgFz;
  const I ke = kb + kMgFz - 1 < n2 - 2 ? kb + kMgFz - 1 : n2 - 2;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y), t = tx + kMgFx * ty;
  const I off = I((c.off[0] + c.off[1] + c.off[2]) & 1);
  // The first colour's new values of plane kk, into its slot: a thread a
  // point of the colour (HALF of a region row's RX points are).
  auto plane = [&](I kk) {
    if (t >= HALF * RY) return;
    const int y = t / HALF, q = t % HALF;
    const I j = j0 - 1 + y;
    const int x0 = int((I(first) - j - kk - off - (i0 - 1)) & 1);
    const int x = x0 + 2 * q;
    const I i = i0 - 1 + x;
    if (i >= n0 || j >= n1) return;
    nw[kk % 3][y][x] = sor_value<T, I>(a, u, i, j, kk);
  };
  plane(kb - 1);
  plane(kb);
  const I i = i0 + tx, j = j0 + ty;
  const bool mine = i <= n0 - 2 && j <= n1 - 2;
  for (I k = kb; k <= ke; ++k) {
    // This thread's point of plane k: its value and f loaded before the
    // plane above is computed, so that the loads' latency overlaps it.
    const I idx = mine ? v.template index_as<I>(i, j, k) : I(0);
    const T uc = mine ? u.p[idx] : T(0);
    const T fc = mine ? rhs_at(a, idx) : T(0);
    plane(k + 1);
    __syncthreads();
    if (mine) {
      const int s = int(k % 3), sm = int((k + 2) % 3), sp = int((k + 1) % 3);
      if (((i + j + k + off) & 1) == I(first)) {
        v.p[idx] = nw[s][ty + 1][tx + 1];
      } else {
        // sor_interior_in_place's gather, from the new values
        T m[3] = {nw[s][ty + 1][tx], nw[s][ty][tx + 1], nw[sm][ty + 1][tx + 1]};
        T p[3] = {nw[s][ty + 1][tx + 2], nw[s][ty + 2][tx + 1], nw[sp][ty + 1][tx + 1]};
        v.p[idx] = sor_formula(uc, jacobi_formula<3>(m, p, a.ih2, fc, a.inv_diag), a.omega);
      }
    }
    __syncthreads();
  }
}

// The faces' points, before the second colour's: the first colour's new
// values, and the second's old ones (what its sor_point starts from).
template <class T>
struct MgSweepShellA {
  LaplaceArgs<T> a;
  MgColouring c;
  FieldView<const T> u;
  FieldView<T> v;
  int first;
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k,
                             std::int64_t idx) const {
    v[idx] = mg_colour(c, i, j, k) == first ? sor_point<3>(a, u, i, j, k) : u[idx];
  }
};

struct MgAxes {
  MgAxis ax[3];
};

template <int D, class T>
struct RestrictFn {
  LaplaceArgs<T> a;
  MgAxes t;
  FieldView<const T> fine;
  FieldView<T> coarse;
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k,
                             std::int64_t idx) const {
    coarse[idx] = mg_restrict_point<D>(a, t.ax, fine, i, j, k);
  }
};

template <int D, class T>
struct ProlongFn {
  LaplaceArgs<T> a;
  MgAxes t;
  FieldView<const T> coarse;
  FieldView<T> fine;
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k,
                             std::int64_t idx) const {
    fine[idx] += mg_prolong_point<D>(a, t.ax, coarse, i, j, k);
  }
  // Point i = 1 + q of row (j, k) off the faces (never a Dirichlet point):
  // mg_prolong_point's taps and sum, the coarse values by I offsets.
  template <class I>
  __device__ void interior_row_as(std::int64_t q, std::int64_t j, std::int64_t k) const {
    const std::int64_t i = 1 + q;
    if (i >= fine.n[0] - 1) return;
    const std::int64_t pos[3] = {i, j, k};
    std::int64_t tap[3][2];
    T w[3][2];
    mg_prolong_weights<D>(t.ax, pos, tap, w);
    I at[3][2];
    for (int x = 0; x < 3; ++x)
      for (int e = 0; e < 2; ++e) at[x][e] = I(tap[x][e]) * I(coarse.stride(x));
    const T* c = coarse.p;
    const T s = mg_prolong_sum<D>(w, [&](int x, int b, int z) {
      return c[at[0][x] + at[1][b] + at[2][z]];
    });
    fine.p[fine.template index_as<I>(I(i), I(j), I(k))] += s;
  }
  __device__ void interior_row(std::int64_t q, std::int64_t j, std::int64_t k) const {
    if (small)
      interior_row_as<std::int32_t>(q, j, k);
    else
      interior_row_as<std::int64_t>(q, j, k);
  }
  bool small = false;  // both fields under 2³¹ values: 32-bit offsets
};

// The taps of fine point q along one axis (mg_prolong_taps's lo, hi, t), a
// table entry: the prolongation's interior rows look them up instead of
// working them out at every point.
template <class T>
struct MgTap {
  std::int32_t lo, hi;
  T t;
};

// The interior rows of a prolongation (D = 2 or 3, fewer than 2³¹ values in
// either field): ProlongFn::interior_row_as's taps (from the tables, the
// same values), weights and sum (mg_prolong_sum), so the same bits. A
// thread takes point i of row j along kchunk planes (3D): its x and y taps
// once, the z taps a plane. At every point, with the taps worked out there
// (64-bit, three axes), the 513³ fine level took 1.84 ms in float32 and
// float64 alike, 300 instructions a point (ncu, H100), against 0.4 ms for
// its bytes.
template <int D, class T>
__global__ void __launch_bounds__(256) mg_prolong_rows_kernel(
    const MgTap<T>* __restrict__ tx, const MgTap<T>* __restrict__ ty,
    const MgTap<T>* __restrict__ tz, const T* __restrict__ coarse, int csy, int csz,
    T* __restrict__ fine, int fsy, int fsz, int nx, int ny, int nz, int kchunk) {
  const int i = 1 + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= nx - 1 || j >= ny - 1) return;
  T w[3][2];
  int at[3][2];
  const MgTap<T> X = tx[i], Y = ty[j];
  w[0][0] = T(1) - X.t;
  w[0][1] = X.t;
  w[1][0] = T(1) - Y.t;
  w[1][1] = Y.t;
  at[0][0] = X.lo;
  at[0][1] = X.hi;
  at[1][0] = Y.lo * csy;
  at[1][1] = Y.hi * csy;
  w[2][0] = T(1);
  w[2][1] = T(0);
  at[2][0] = at[2][1] = 0;
  const int k0 = D > 2 ? 1 + int(blockIdx.z) * kchunk : 0;
  const int k1 = D > 2 ? min(k0 + kchunk, nz - 1) : 1;
  int f = i + j * fsy + k0 * fsz;
  for (int k = k0; k < k1; ++k, f += fsz) {
    if constexpr (D > 2) {
      const MgTap<T> Z = tz[k];
      w[2][0] = T(1) - Z.t;
      w[2][1] = Z.t;
      at[2][0] = Z.lo * csz;
      at[2][1] = Z.hi * csz;
    }
    const T s = mg_prolong_sum<D>(
        w, [&](int x, int b, int c) { return coarse[at[0][x] + at[1][b] + at[2][c]]; });
    fine[f] += s;
  }
}
constexpr int kMgRowPlanes = 4;

// The residual r = f − L u at the points off the faces (D = 2 or 3, fewer
// than 2³¹ values, r in u's layout): ResidualPointFn::interior's formula
// (mg_residual_formula) on the same values, so the same bits, with 32-bit
// offsets; a thread takes point i of row j along kchunk planes (3D), the
// planes below and at the point kept from the one before. One point a
// thread with 64-bit offsets took 1.03 ms at 513³ in float32 (ncu, H100:
// 206 instructions a point), against 0.55 ms for its bytes.
template <int D, class T>
__global__ void __launch_bounds__(256) mg_residual_rows_kernel(LaplaceArgs<T> a,
                                                               const T* __restrict__ u,
                                                               T* __restrict__ r, int sy, int sz,
                                                               int nx, int ny, int nz, int kchunk) {
  const int i = 1 + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= nx - 1 || j >= ny - 1) return;
  const int k0 = D > 2 ? 1 + int(blockIdx.z) * kchunk : 0;
  const int k1 = D > 2 ? min(k0 + kchunk, nz - 1) : 1;
  int idx = i + j * sy + k0 * sz;
  T zm = D > 2 ? u[idx - sz] : T(0), c = u[idx];
  for (int k = k0; k < k1; ++k, idx += sz) {
    T m[3], p[3];
    m[0] = u[idx - 1];
    p[0] = u[idx + 1];
    m[1] = u[idx - sy];
    p[1] = u[idx + sy];
    if constexpr (D > 2) {
      m[2] = zm;
      p[2] = u[idx + sz];
    }
    r[idx] = mg_residual_formula<D>(a, c, m, p, rhs_at(a, idx));
    if constexpr (D > 2) {
      zm = c;
      c = p[2];
    }
  }
}

// The slots of coarse point q along one axis (mg_restrict_taps's), a table
// entry for the restriction's interior rows.
template <class T>
struct MgRestrictTap {
  std::int32_t at[kMgTaps];
  T w[kMgTaps];
};

// The coarse points off the faces of a restriction (D = 2 or 3, fewer than
// 2³¹ values in either field): mg_restrict_point's slots (from the tables,
// the same values) and sum (mg_restrict_sum), so the same bits; no
// Dirichlet test (no such point is on a face). A thread takes point i of
// row j along kchunk planes (3D). At every point with the slots worked out
// there, the 257³ coarse level of a 513³ grid took 0.71 ms in float32
// (ncu, H100: 760 instructions a coarse point), against 0.2 ms for its bytes.
template <int D, class T>
__global__ void __launch_bounds__(256) mg_restrict_rows_kernel(
    const MgRestrictTap<T>* __restrict__ tx, const MgRestrictTap<T>* __restrict__ ty,
    const MgRestrictTap<T>* __restrict__ tz, const T* __restrict__ fine, int fsy, int fsz,
    T* __restrict__ coarse, int csy, int csz, int nx, int ny, int nz, int kchunk) {
  const int i = 1 + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= nx - 1 || j >= ny - 1) return;
  T w[3][kMgTaps] = {{T(1)}, {T(1)}, {T(1)}};
  int at_x[kMgTaps], off_y[kMgTaps], off_z[kMgTaps] = {};
  const MgRestrictTap<T>& X = tx[i];
  const MgRestrictTap<T>& Y = ty[j];
#pragma unroll
  for (int e = 0; e < kMgTaps; ++e) {
    w[0][e] = X.w[e];
    w[1][e] = Y.w[e];
    at_x[e] = X.at[e];
    off_y[e] = Y.at[e] * fsy;
  }
  const int k0 = D > 2 ? 1 + int(blockIdx.z) * kchunk : 0;
  const int k1 = D > 2 ? min(k0 + kchunk, nz - 1) : 1;
  int q = i + j * csy + k0 * csz;
  for (int k = k0; k < k1; ++k, q += csz) {
    if constexpr (D > 2) {
      const MgRestrictTap<T>& Z = tz[k];
#pragma unroll
      for (int e = 0; e < kMgTaps; ++e) {
        w[2][e] = Z.w[e];
        off_z[e] = Z.at[e] * fsz;
      }
    }
    coarse[q] =
        mg_restrict_sum<D>(w, at_x, [&](int b, int c) { return fine + off_y[b] + off_z[c]; });
  }
}

template <int D, class T>
struct UnweightFn {
  LaplaceArgs<T> a;
  T s;
  FieldView<const T> r;
  FieldView<T> z;
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) const {
    z(i, j, k) = mg_unweight_point<D>(a, s, r, i, j, k);
  }
};

// The term W·v of a point of v (reductions: TermAt, the point's coordinates given).
template <int D, class T>
struct WeightedFn {
  LaplaceArgs<T> a;
  FieldView<const T> v;
  // The reductions' walk gives (i, j, k) without a division a point.
  __device__ double at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) const {
    return double(mg_weighted_point<D>(a, v, i, j, k));
  }
};

template <class F>
void mg_by_dim(int ndim, F&& fn) {
  switch (ndim) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    default: fn(std::integral_constant<int, 3>{}); break;
  }
}

template <class T>
class MultigridCuda final : public MultigridExec<T> {
 public:
  explicit MultigridCuda(CudaBackend<T>& be) : be_(be) {}

  void smooth(const LaplaceArgs<T>& a, const MgColouring& c, Field<T>& u, int colour) override {
    mg_by_dim(a.ndim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      if (c.colours != 2) {
        launch(a.ndim, u.layout(), SmoothFn<D, T>{a, c, u.view(), colour});
        return;
      }
      const Layout& l = u.layout();
      if (mg_split<D>(l)) {  // a thread for every other interior point of a row
        split<D>(l, (l.n[0] - 1) / 2, SmoothFn<D, T>{a, c, u.view(), colour});
        return;
      }
      const std::int64_t half[3] = {(l.n[0] + 1) / 2, l.n[1], l.n[2]};
      dim3 grid, block;
      point_launch(a.ndim, half, grid, block);
      mg_red_black_kernel<D, T><<<grid, block, 0, be_.stream()>>>(a, c, u.view(), colour);
      GF_CUDA_CHECK_LAUNCH();
    });
  }
  bool sweeps_out_of_place(int ndim, const MgColouring& c, const Layout& l) const override {
    return ndim == 3 && c.colours == 2 && mg_split<3>(l) && l.size() >= kMgSweepPoints;
  }
  bool sweep_to(const LaplaceArgs<T>& a, const MgColouring& c, const Field<T>& u, Field<T>& v,
                int first) override {
    const Layout& l = u.layout();
    if (a.ndim != 3 || c.colours != 2 || !mg_split<3>(l) || !same_layout(l, v.layout()))
      return false;
    const std::int64_t count = l.shell_count(3);
    const unsigned shell_blocks = unsigned(std::min<std::int64_t>((count + 255) / 256, 65535));
    mg_shell_kernel<3><<<shell_blocks, 256, 0, be_.stream()>>>(
        MgSweepShellA<T>{a, c, u.view(), v.view(), first}, l, count);
    GF_CUDA_CHECK_LAUNCH();
    const dim3 grid(unsigned((l.n[0] - 2 + kMgFx - 1) / kMgFx),
                    unsigned((l.n[1] - 2 + kMgFy - 1) / kMgFy),
                    unsigned((l.n[2] - 2 + kMgFz - 1) / kMgFz));
    if (l.span() < (std::int64_t(1) << 31))
      mg_rb_sweep_kernel<T, std::int32_t><<<grid, dim3(kMgFx, kMgFy), 0, be_.stream()>>>(
          a, c, u.view(), v.view(), first);
    else
      mg_rb_sweep_kernel<T, std::int64_t><<<grid, dim3(kMgFx, kMgFy), 0, be_.stream()>>>(
          a, c, u.view(), v.view(), first);
    GF_CUDA_CHECK_LAUNCH();
    // the faces' points of the second colour, in place in v (SmoothFn's
    // sor_point there): their neighbours are of the first colour, new in v
    mg_shell_kernel<3><<<shell_blocks, 256, 0, be_.stream()>>>(
        SmoothFn<3, T>{a, c, v.view(), 1 - first}, l, count);
    GF_CUDA_CHECK_LAUNCH();
    return true;
  }
  void residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>& r) override {
    mg_by_dim(a.ndim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      const ResidualPointFn<D, T> fn{a, u.view(), r.view()};
      const Layout& l = u.layout();
      if constexpr (D >= 2) {
        if (mg_split<D>(l) && l.span() < (std::int64_t(1) << 31) &&
            same_layout(l, r.layout())) {  // the rows off the faces, then the faces
          mg_residual_rows_kernel<D, T><<<rows_grid<D>(l), dim3(32, 8), 0, be_.stream()>>>(
              a, u.data(), r.data(), int(l.sy), int(l.sz), int(l.n[0]), int(l.n[1]), int(l.n[2]),
              kMgRowPlanes);
          GF_CUDA_CHECK_LAUNCH();
          shell<D>(l, fn);
          return;
        }
      }
      if (mg_split<D>(l))
        split<D>(l, l.n[0] - 2, fn);
      else
        launch(a.ndim, l, fn);
    });
  }
  void restrict_to(const LaplaceArgs<T>& ca, const MgAxis* ax, const Field<T>& fine,
                   Field<T>& coarse) override {
    const MgAxes t{{ax[0], ax[1], ax[2]}};
    mg_by_dim(ca.ndim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      const RestrictFn<D, T> fn{ca, t, fine.view(), coarse.view()};
      const Layout& l = coarse.layout();
      const std::int64_t limit = std::int64_t(1) << 31;
      if constexpr (D >= 2) {
        if (l.span() < limit && fine.layout().span() < limit && mg_split<D>(l)) {
          restrict_rows<D>(t, fine, coarse);  // the coarse rows off the faces, then the faces
          shell<D>(l, fn);
          return;
        }
      }
      launch(ca.ndim, l, fn);
    });
  }
  void prolong_add(const LaplaceArgs<T>& fa, const MgAxis* ax, const Field<T>& coarse,
                   Field<T>& fine) override {
    const MgAxes t{{ax[0], ax[1], ax[2]}};
    mg_by_dim(fa.ndim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      ProlongFn<D, T> fn{fa, t, coarse.view(), fine.view()};
      const Layout& l = fine.layout();
      const std::int64_t limit = std::int64_t(1) << 31;
      fn.small = l.span() < limit && coarse.layout().span() < limit;
      if constexpr (D >= 2) {
        if (fn.small && mg_split<D>(l)) {  // the rows off the faces from tap tables, then the faces
          prolong_rows<D>(t, coarse, fine);
          shell<D>(l, fn);
          return;
        }
      }
      if (mg_split<D>(l))  // the rows off the faces by offsets, then the faces
        split<D>(l, l.n[0] - 2, fn);
      else
        launch(fa.ndim, l, fn);
    });
  }
  double weighted_sum(const LaplaceArgs<T>& a, const Field<T>& v) override {
    double s = 0;
    mg_by_dim(a.ndim, [&](auto d) {
      s = be_.reduce_points(WeightedFn<decltype(d)::value, T>{a, v.view()}, v.layout());
    });
    return s;
  }
  void unweight(const LaplaceArgs<T>& a, T s, const Field<T>& r, Field<T>& z) override {
    mg_by_dim(a.ndim, [&](auto d) {
      launch(a.ndim, r.layout(), UnweightFn<decltype(d)::value, T>{a, s, r.view(), z.view()});
    });
  }
  // Every value of the field's span, padding included (which no point reads).
  void zero(Field<T>& v) override {
    GF_CUDA_CHECK(cudaMemsetAsync(v.data(), 0, std::size_t(v.layout().span()) * sizeof(T),
                                  be_.stream()));
  }

 private:
  // The tap tables of a transfer's axes (MgTap per fine point, by
  // mg_prolong_taps), made on first use and kept with the axes they are for.
  struct TapTables {
    MgAxis ax[3];
    std::vector<MgTap<T>> host;  // prolongation: the three axes' fine points one after another
    std::vector<MgRestrictTap<T>> rhost;  // restriction: their coarse points
    DeviceBuffer dev, rdev;
    std::int64_t off[3], roff[3];
  };
  static bool same_axis(const MgAxis& x, const MgAxis& y) {
    return x.nf == y.nf && x.nc == y.nc && x.num == y.num && x.den == y.den &&
           x.periodic == y.periodic;
  }
  const TapTables& tap_tables(const MgAxes& t) {
    for (const auto& e : taps_)
      if (same_axis(e->ax[0], t.ax[0]) && same_axis(e->ax[1], t.ax[1]) &&
          same_axis(e->ax[2], t.ax[2]))
        return *e;
    auto e = std::make_unique<TapTables>();
    for (int a = 0; a < 3; ++a) {
      e->ax[a] = t.ax[a];
      e->off[a] = std::int64_t(e->host.size());
      for (std::int64_t q = 0; q < t.ax[a].nf; ++q) {
        std::int64_t lo, hi;
        T w;
        mg_prolong_taps<T>(t.ax[a], q, lo, hi, w);
        e->host.push_back(MgTap<T>{std::int32_t(lo), std::int32_t(hi), w});
      }
      e->roff[a] = std::int64_t(e->rhost.size());
      for (std::int64_t q = 0; q < t.ax[a].nc; ++q) {
        std::int64_t at[kMgTaps];
        MgRestrictTap<T> r{};
        mg_restrict_taps<T>(t.ax[a], q, at, r.w);
        for (int s = 0; s < kMgTaps; ++s) r.at[s] = std::int32_t(at[s]);
        e->rhost.push_back(r);
      }
    }
    const std::size_t bytes = e->host.size() * sizeof(MgTap<T>);
    e->dev.reset(be_.memory(), bytes, "the multigrid prolongation's tap tables");
    GF_CUDA_CHECK(cudaMemcpyAsync(e->dev.get(), e->host.data(), bytes, cudaMemcpyHostToDevice,
                                  be_.stream()));
    const std::size_t rbytes = e->rhost.size() * sizeof(MgRestrictTap<T>);
    e->rdev.reset(be_.memory(), rbytes, "the multigrid restriction's tap tables");
    GF_CUDA_CHECK(cudaMemcpyAsync(e->rdev.get(), e->rhost.data(), rbytes,
                                  cudaMemcpyHostToDevice, be_.stream()));
    taps_.push_back(std::move(e));
    return *taps_.back();
  }
  template <int D>
  void prolong_rows(const MgAxes& t, const Field<T>& coarse, Field<T>& fine) {
    const TapTables& tt = tap_tables(t);
    const MgTap<T>* tab = tt.dev.template as<MgTap<T>>();
    const Layout& l = fine.layout();
    const Layout& c = coarse.layout();
    mg_prolong_rows_kernel<D, T><<<rows_grid<D>(l), dim3(32, 8), 0, be_.stream()>>>(
        tab + tt.off[0], tab + tt.off[1], tab + tt.off[2], coarse.data(), int(c.sy), int(c.sz),
        fine.data(), int(l.sy), int(l.sz), int(l.n[0]), int(l.n[1]), int(l.n[2]),
        kMgRowPlanes);
    GF_CUDA_CHECK_LAUNCH();
  }
  template <int D>
  void restrict_rows(const MgAxes& t, const Field<T>& fine, Field<T>& coarse) {
    const TapTables& tt = tap_tables(t);
    const MgRestrictTap<T>* tab = tt.rdev.template as<MgRestrictTap<T>>();
    const Layout& l = coarse.layout();
    const Layout& f = fine.layout();
    mg_restrict_rows_kernel<D, T><<<rows_grid<D>(l), dim3(32, 8), 0, be_.stream()>>>(
        tab + tt.roff[0], tab + tt.roff[1], tab + tt.roff[2], fine.data(), int(f.sy), int(f.sz),
        coarse.data(), int(l.sy), int(l.sz), int(l.n[0]), int(l.n[1]), int(l.n[2]),
        kMgRowPlanes);
    GF_CUDA_CHECK_LAUNCH();
  }
  std::vector<std::unique_ptr<TapTables>> taps_;

  // fn over the points off the faces (threads_x a row: fn.interior_row),
  // then over the shell of face points (fn's operator()).
  template <int D, class F>
  void split(const Layout& l, std::int64_t threads_x, const F& fn) {
    const std::int64_t rows[3] = {threads_x, D > 1 ? l.n[1] - 2 : 1, D > 2 ? l.n[2] - 2 : 1};
    dim3 grid, block;
    point_launch(D, rows, grid, block);
    mg_interior_kernel<D><<<grid, block, 0, be_.stream()>>>(fn, l);
    GF_CUDA_CHECK_LAUNCH();
    shell<D>(l, fn);
  }
  // fn's operator() over the shell of face points of l.
  template <int D, class F>
  void shell(const Layout& l, const F& fn) {
    const std::int64_t count = l.shell_count(D);
    const unsigned blocks = unsigned(std::min<std::int64_t>((count + 255) / 256, 65535));
    mg_shell_kernel<D><<<blocks, 256, 0, be_.stream()>>>(fn, l, count);
    GF_CUDA_CHECK_LAUNCH();
  }
  // The grid of the rows kernels over the points off the faces of l (blocks
  // of 32 × 8 threads, kMgRowPlanes planes a thread in 3D).
  template <int D>
  static dim3 rows_grid(const Layout& l) {
    return dim3(unsigned((l.n[0] - 2 + 31) / 32), unsigned((l.n[1] - 2 + 7) / 8),
                D > 2 ? unsigned((l.n[2] - 2 + kMgRowPlanes - 1) / kMgRowPlanes) : 1u);
  }
  template <class F>
  void launch(int ndim, const Layout& l, const F& fn) {
    dim3 grid, block;
    point_launch(ndim, l.n, grid, block);
    mg_points_kernel<F><<<grid, block, 0, be_.stream()>>>(fn, l);
    GF_CUDA_CHECK_LAUNCH();
  }
  static bool same_layout(const Layout& x, const Layout& y) {
    return x.n[0] == y.n[0] && x.n[1] == y.n[1] && x.n[2] == y.n[2] && x.sy == y.sy &&
           x.sz == y.sz;
  }
  CudaBackend<T>& be_;
};

}  // namespace

template <class T>
std::unique_ptr<MultigridExec<T>> make_multigrid_cuda(Backend<T>& be) {
  return std::make_unique<MultigridCuda<T>>(cuda_core(be));
}
template std::unique_ptr<MultigridExec<float>> make_multigrid_cuda<float>(Backend<float>&);
template std::unique_ptr<MultigridExec<double>> make_multigrid_cuda<double>(Backend<double>&);

}  // namespace gf
