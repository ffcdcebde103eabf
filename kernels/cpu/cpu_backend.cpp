// CpuBackend: the reference executor. Plain loops over the grid that call the
// kernels/ops formulas, parallel over the outer axes with OpenMP. Keep it
// simple enough to trust by reading: the GPU is validated against it.
#include <fftw3.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "kernels/backend.hpp"
#include "kernels/cpu/raymarch_cpu.hpp"
#include "kernels/device.hpp"

namespace gf {
namespace {

class HostMemory final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes, const std::string& what) override {
    // 64-byte alignment for vector loads; round the size up as aligned_alloc wants.
    // Arrays of 2 MiB or more start on a 2 MiB boundary and ask for transparent
    // huge pages (only a hint; where THP is in "madvise" mode, as on Debian,
    // there are none without it): a 3D stencil walks three planes and an output
    // at once, and on 4 KiB pages large grids run markedly slower
    // (docs/performance.md). The bench's triad allocates here too.
    const std::size_t huge = std::size_t(2) << 20;
    const std::size_t align = bytes >= huge ? huge : 64;
    std::size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded ? rounded : 64);
    if (p && align == huge) madvise(p, rounded, MADV_HUGEPAGE);
    if (!p) {
      // Same words as the GPU's message and the check before the run.
      char msg[160];
      std::snprintf(msg, sizeof msg, " (%.3g GiB) on the host: %.3g GiB free",
                    double(bytes) / 1073741824.0, double(host_memory_available()) / 1073741824.0);
      throw DeviceError("out of host memory allocating " + what + msg +
                        "; use a smaller grid or float32");
    }
    count_alloc(bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    std::free(p);
    count_free(bytes);
  }
  bool host_accessible() const override { return true; }
};

class WallTimer final : public Timer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  double stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// Row by row over box b of the grid (the whole grid for a whole step, the
// parts of a split one: backend.hpp): a row off every y and z face has its
// points 1..nx − 2 off every face, so inner(first, last) may take the
// neighbours of points first..last − 1 directly (a loop the compiler
// vectorises); a row on a Dirichlet face in y or z is held, every point
// keeping its value, as the point formulas' first rule says (heat_point_bc,
// jacobi_point); every other point goes through edge(i, j, k, idx), the
// formula with the boundary rules. The same formula with the same operands in
// the same order either way, so the same values.
template <int D, class T, class Edge, class Inner>
void for_rows(const std::int64_t* n, const Box& b, const AxisBc<T>* bc, const T* in, T* out,
              Edge&& edge, Inner&& inner) {
  const std::int64_t nx = n[0], ny = n[1], nz = n[2];
  const std::int64_t i0 = b.lo[0], i1 = b.hi[0];
  if (i0 >= i1) return;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j) {
      const std::int64_t row = nx * (j + ny * k);
      const bool held =
          (D > 1 && on_dirichlet(j, ny, bc[1])) || (D > 2 && on_dirichlet(k, nz, bc[2]));
      if (held) {
        std::copy(in + row + i0, in + row + i1, out + row + i0);
        continue;
      }
      const bool off_faces =
          nx > 2 && (D < 2 || (j > 0 && j < ny - 1)) && (D < 3 || (k > 0 && k < nz - 1));
      if (!off_faces) {
        for (std::int64_t i = i0; i < i1; ++i) edge(i, j, k, row + i);
        continue;
      }
      const std::int64_t first = std::max<std::int64_t>(i0, 1), last = std::min(i1, nx - 1);
      if (i0 == 0) edge(0, j, k, row);
      if (first < last) inner(row + first, row + last);
      if (i1 == nx) edge(nx - 1, j, k, row + nx - 1);
    }
}

// The −1 and +1 neighbours of point idx, off every face, on each axis.
template <int D, class T>
inline void direct_neighbours(const T* u, std::int64_t idx, std::int64_t nx, std::int64_t plane,
                              T* m, T* p) {
  m[0] = u[idx - 1];
  p[0] = u[idx + 1];
  if constexpr (D > 1) {
    m[1] = u[idx - nx];
    p[1] = u[idx + nx];
  }
  if constexpr (D > 2) {
    m[2] = u[idx - plane];
    p[2] = u[idx + plane];
  }
}

// The inner loops below take their arrays as restrict parameters (out is
// never an input) and their per-point term (source, right-hand side) as a
// function picked once per row, a constant or a field read: with no possible
// aliasing and no branch per point, the compiler vectorises them.
//
// They are also compiled for AVX2 and picked at run time where the CPU has it:
// the loops are bound by the core's arithmetic (3D heat: 11 additions and 3
// products per point, none fused), and AVX2 does twice as much per instruction
// as the baseline SSE2. The same operations on every lane, so the same values. AVX2 alone, not x86-64-v3: that brings
// FMA, and g++ would then fuse a·b + c, which the point formulas must not see.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GF_ROW_LOOP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GF_ROW_LOOP_CLONES
#endif

// FTCS at points first..last − 1, all off every face, in the form ISO, SRC
// (heat_form); s(idx) is heat_source.
template <int D, bool ISO, bool SRC, class T, class Source>
GF_ROW_LOOP_CLONES void heat_inner(const T* __restrict in, T* __restrict out, std::int64_t first,
                                   std::int64_t last, std::int64_t nx, std::int64_t plane,
                                   const T* __restrict c, Source s) {
  for (std::int64_t idx = first; idx < last; ++idx) {
    T m[3], p[3];
    direct_neighbours<D>(in, idx, nx, plane, m, p);
    out[idx] = ftcs_point_as<D, ISO, SRC>(in[idx], m, p, c, s(idx));
  }
}

// f(iso, src) with the form as compile-time constants (std::bool_constant).
template <class F>
void with_heat_form(HeatForm form, F&& f) {
  if (form.iso) {
    if (form.src) f(std::true_type{}, std::true_type{});
    else f(std::true_type{}, std::false_type{});
  } else {
    if (form.src) f(std::false_type{}, std::true_type{});
    else f(std::false_type{}, std::false_type{});
  }
}

template <int D, class T>
void heat_step_cpu(const HeatArgs<T>& a, const Box& box, const T* in, T* out) {
  const std::int64_t nx = a.n[0], plane = a.n[0] * a.n[1];
  for_rows<D>(
      a.n, box, a.bc, in, out,
      [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        out[idx] = heat_point_bc<D>(a, in, i, j, k);
      },
      [&](std::int64_t first, std::int64_t last) {
        with_heat_form(heat_form<D>(a), [&](auto iso, auto src) {
          constexpr bool I = decltype(iso)::value, S = decltype(src)::value;
          if (a.source) {
            heat_inner<D, I, S>(in, out, first, last, nx, plane, a.c,
                                [&](std::int64_t idx) { return heat_source(a, idx); });
          } else {
            const T s = heat_source(a, first);  // a constant: the same at every point
            heat_inner<D, I, S>(in, out, first, last, nx, plane, a.c,
                                [s](std::int64_t) { return s; });
          }
        });
      });
}

// One row of a level of the temporal-blocking wavefront below, points
// first..last − 1 off every face: the row c of the plane below, its rows
// yl, yr in y (3D only) and zm, zp along the wavefront's axis (z in 3D, y
// in 2D; distinct arrays from out). The operator is a copy of the caller's,
// so that its coefficients are known not to change.
template <class Op, class T, class Source>
GF_ROW_LOOP_CLONES void tb_inner(const Op op, const T* __restrict c, const T* __restrict yl,
                                 const T* __restrict yr, const T* __restrict zm,
                                 const T* __restrict zp, T* __restrict out, std::int64_t first,
                                 std::int64_t last, Source s) {
  for (std::int64_t i = first; i < last; ++i) {
    if constexpr (Op::kDim == 2) {
      const T m[2] = {c[i - 1], zm[i]}, p[2] = {c[i + 1], zp[i]};
      out[i] = op.point(c[i], m, p, s(i));
    } else {
      const T m[3] = {c[i - 1], yl[i], zm[i]}, p[3] = {c[i + 1], yr[i], zp[i]};
      out[i] = op.point(c[i], m, p, s(i));
    }
  }
}

// k explicit steps of an operator of ops/time_block.hpp (heat, a star
// stencil, Jacobi) in one pass, in → out, bit for bit k heat_step_cpu
// (stencil_cpu, jacobi_sweep_cpu) calls: a wavefront along the last axis (z
// in 3D; y in 2D, where a "plane" below is one row and the y axis of the
// code is absent). Level 0 is `in`; levels 1..k − 1 each live in a ring of
// three planes (which stay in the caches), level k is `out`. When plane z of
// level 0 has been passed, level 1 is computed at z, level 2 at z − 1, ...,
// level k at z − k + 1 (each needs the level below at p − 1, p, p + 1). On a
// periodic wavefront axis the levels below k are computed k − l planes
// beyond either end too (wrapped), as the GPU's passes do. Each point goes
// through tb_point (ops/time_block.hpp: the point rules from the neighbours
// as held here) or, off every face, tb_inner: the same formula with the same
// operands in the same order. A plane's rows (in 2D: pieces of its one row)
// are shared among the threads, with a barrier after each plane of each level.
template <class Op, class T = typename Op::value_type>
void time_block_cpu(const Op& a, int k, const T* in, T* out) {
  constexpr int D = Op::kDim, Z = D - 1;  // Z: the wavefront's axis
  const std::int64_t nx = a.n[0], ny = D == 3 ? a.n[1] : 1, nz = a.n[Z], plane = nx * ny;
  const bool px = a.bc[0].lo == BcType::Periodic, py = D == 3 && a.bc[1].lo == BcType::Periodic,
             pz = a.bc[Z].lo == BcType::Periodic;
  // the pieces of a row the threads share (2D, where a plane is one row)
  const std::int64_t pieces = D == 2 ? std::max<std::int64_t>(1, nx / 2048) : 1;
  std::vector<T> ring(std::size_t(k - 1) * 3 * std::size_t(plane));
  const auto wrap = [](std::int64_t g, std::int64_t n) { return ((g % n) + n) % n; };
  // level l's plane p in its ring (1 ≤ l < k)
  const auto ring_plane = [&](int l, std::int64_t p) {
    return ring.data() + (std::size_t(l - 1) * 3 + std::size_t(wrap(p, 3))) * std::size_t(plane);
  };
  // the planes read (level 0: in, wrapped on a periodic z) and written (level k: out)
  const auto source_plane = [&](int l, std::int64_t p) -> const T* {
    return l == 0 ? in + plane * (pz ? wrap(p, nz) : p) : ring_plane(l, p);
  };
  const auto target_plane = [&](int l, std::int64_t p) { return l == k ? out + plane * p : ring_plane(l, p); };
  // the planes of level l computed: [lo(l), hi(l))
  const auto lo = [&](int l) { return pz ? -std::int64_t(k - l) : std::int64_t(0); };
  const auto hi = [&](int l) { return pz ? nz + (k - l) : nz; };
  const auto x_walls = [&](std::int64_t i) { return tb_walls<T>(int(i), int(nx), px, a.bc[0]); };
  constexpr TbWalls none{false, false, false};
#pragma omp parallel
  for (std::int64_t z = lo(1); z < hi(1) + k - 1; ++z)
    for (int l = 1; l <= k; ++l) {
      const std::int64_t p = z - (l - 1);
      if (p < lo(l) || p >= hi(l)) continue;  // alike on every thread
      const std::int64_t iz = pz ? wrap(p, nz) : p;
      const TbWalls wz = tb_walls<T>(int(iz), int(nz), pz, a.bc[Z]);
      const T* cpl = source_plane(l - 1, p);
      // beyond a z wall the neighbour plane is not read: the plane itself stands in
      const T* zmp = (pz || p > 0) ? source_plane(l - 1, p - 1) : cpl;
      const T* zpp = (pz || p < nz - 1) ? source_plane(l - 1, p + 1) : cpl;
      T* dst = target_plane(l, p);
#pragma omp for schedule(static)
      for (std::int64_t q = 0; q < ny * pieces; ++q) {
        const std::int64_t j = q / pieces;
        const std::int64_t i0 = nx * (q % pieces) / pieces, i1 = nx * (q % pieces + 1) / pieces;
        const TbWalls wy = D == 3 ? tb_walls<T>(int(j), int(ny), py, a.bc[1]) : none;
        const std::int64_t jl = j > 0 ? j - 1 : (py ? ny - 1 : j);
        const std::int64_t jr = j < ny - 1 ? j + 1 : (py ? 0 : j);
        const T *c = cpl + nx * j, *yl = cpl + nx * jl, *yr = cpl + nx * jr;
        const T *zm = zmp + nx * j, *zp = zpp + nx * j;
        T* o = dst + nx * j;
        const std::int64_t base = nx * (j + ny * iz);  // the row's index in the grid
        const auto src = [&](std::int64_t i) { return tb_source(a, base + i); };
        const auto point = [&](std::int64_t i) {
          const T xl = i > 0 ? c[i - 1] : (px ? c[nx - 1] : c[i]);
          const T xr = i < nx - 1 ? c[i + 1] : (px ? c[0] : c[i]);
          if constexpr (D == 2)  // y is the wavefront's axis: tb_point's y, no z
            o[i] = tb_point<true>(a, x_walls(i), wz, none, src(i), c[i], xl, xr, zm[i], zp[i],
                                  T(0), T(0));
          else
            o[i] = tb_point<true>(a, x_walls(i), wy, wz, src(i), c[i], xl, xr, yl[i], yr[i],
                                  zm[i], zp[i]);
        };
        const bool plain = !(wy.held || wy.lo || wy.hi || wz.held || wz.lo || wz.hi) && nx > 2;
        if (!plain) {
          for (std::int64_t i = i0; i < i1; ++i) point(i);
          continue;
        }
        // the row's ends by the rules, the points between through tb_inner
        const std::int64_t first = std::max<std::int64_t>(i0, 1), last = std::min(i1, nx - 1);
        if (i0 == 0) point(0);
        if (first < last) {
          bool field_source = false;
          if constexpr (Op::kSource) field_source = a.source != nullptr;
          if (field_source) {
            tb_inner(a, c, yl, yr, zm, zp, o, first, last, src);
          } else {
            const T s = tb_source(a, base);  // a constant: the same at every point
            tb_inner(a, c, yl, yr, zm, zp, o, first, last, [s](std::int64_t) { return s; });
          }
        }
        if (i1 == nx) point(nx - 1);
      }
    }
}

// Jacobi at points first..last − 1, all off every face; f(idx) is rhs_at.
template <int D, class T, class Rhs>
GF_ROW_LOOP_CLONES void jacobi_inner(const T* __restrict u, T* __restrict v, std::int64_t first,
                                     std::int64_t last, std::int64_t nx, std::int64_t plane,
                                     const T* __restrict ih2, T inv_diag, Rhs f) {
  for (std::int64_t idx = first; idx < last; ++idx) {
    T m[3], p[3];
    direct_neighbours<D>(u, idx, nx, plane, m, p);
    v[idx] = jacobi_formula<D>(m, p, ih2, f(idx), inv_diag);
  }
}

template <int D, class T>
void jacobi_sweep_cpu(const LaplaceArgs<T>& a, const Box& box, const T* u, T* v) {
  const std::int64_t nx = a.n[0], plane = a.n[0] * a.n[1];
  for_rows<D>(
      a.n, box, a.bc, u, v,
      [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        v[idx] = jacobi_point<D>(a, u, i, j, k);
      },
      [&](std::int64_t first, std::int64_t last) {
        if (a.f) {
          jacobi_inner<D>(u, v, first, last, nx, plane, a.ih2, a.inv_diag,
                          [&](std::int64_t idx) { return rhs_at(a, idx); });
        } else {
          const T f = rhs_at(a, first);  // a constant: the same at every point
          jacobi_inner<D>(u, v, first, last, nx, plane, a.ih2, a.inv_diag,
                          [f](std::int64_t) { return f; });
        }
      });
}

template <int D, class T>
void stencil_cpu(const StencilArgs<T>& a, const Box& b, const StencilTap<T>* taps, const T* in,
                 T* out) {
  const std::int64_t nx = a.n[0], ny = a.n[1];
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
        out[i + nx * (j + ny * k)] = stencil_point_bc<D>(a, taps, in, i, j, k);
}

// The boxes of one part of a split step (backend.hpp): the core, or the
// boxes around it.
inline std::vector<Box> part_boxes(const std::int64_t* n, const Box& core, StepPart part) {
  if (part == StepPart::Core) return {core};
  return shell_boxes(Box::whole(n), core);
}

// Calls fn(i, j, k, idx) at every point, parallel over the outer axes.
template <class F>
void for_each_point(const std::int64_t* n, F&& fn) {
  const std::int64_t nx = n[0], ny = n[1], nz = n[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) fn(i, j, k, i + nx * (j + ny * k));
}

// Σ fn(i, j, k, idx) over every point, in double.
template <class F>
double sum_points(const std::int64_t* n, F&& fn) {
  const std::int64_t nx = n[0], ny = n[1], nz = n[2];
  double s = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s)
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) s += fn(i, j, k, i + nx * (j + ny * k));
  return s;
}

// The box of points a field's rank owns (the whole array on one rank).
struct OwnedBox {
  std::int64_t lo[3], hi[3], nx, ny;
  explicit OwnedBox(const Grid& g)
      : lo{g.halo_lo[0], g.halo_lo[1], g.halo_lo[2]},
        hi{g.n[0] - g.halo_hi[0], g.n[1] - g.halo_hi[1], g.n[2] - g.halo_hi[2]},
        nx(g.n[0]), ny(g.n[1]) {}
};

// Σ fn(idx) over the owned points of g, in double. On one rank (no halo) the
// plain loop over the array, as before ranks existed: same sums, same bits.
template <class F>
double sum_owned(const Grid& g, F&& fn) {
  double s = 0;
  if (!g.has_halo()) {
    const std::int64_t n = g.size();
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) s += fn(i);
    return s;
  }
  const OwnedBox b(g);
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s)
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) s += fn(i + b.nx * (j + b.ny * k));
  return s;
}

// Copies between a box of a grid array and a packed buffer (x fastest).
template <class T, bool ToBuf>
void copy_box(const Grid& g, T* u, const std::int64_t* lo, const std::int64_t* c, T* buf) {
  const std::int64_t nx = g.n[0], ny = g.n[1];
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = 0; k < c[2]; ++k)
    for (std::int64_t j = 0; j < c[1]; ++j) {
      T* row = u + lo[0] + nx * ((lo[1] + j) + ny * (lo[2] + k));
      T* b = buf + c[0] * (j + c[1] * k);
      if constexpr (ToBuf)
        std::memcpy(b, row, std::size_t(c[0]) * sizeof(T));
      else
        std::memcpy(row, b, std::size_t(c[0]) * sizeof(T));
    }
}

// Dispatch on the grid dimension: fn(std::integral_constant<int, D>).
template <class F>
void by_dim(int ndim, F&& fn) {
  switch (ndim) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    default: fn(std::integral_constant<int, 3>{}); break;
  }
}

// FFTW in the backend's precision (fftwf_ for float).
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
template <class T>
double fft_poisson_cpu(const LaplaceArgs<T>& a, const T* f, T* u) {
  using W = Fftw<T>;
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::int64_t hx = nx / 2 + 1, nhalf = hx * ny * nz;
  int dims[3];  // FFTW wants the slowest axis first
  for (int ax = 0; ax < a.ndim; ++ax) dims[ax] = int(a.n[a.ndim - 1 - ax]);
  std::vector<std::complex<T>> fh(static_cast<std::size_t>(nhalf)), uh(fh.size());
  auto* F = reinterpret_cast<typename W::complex*>(fh.data());
  auto* U = reinterpret_cast<typename W::complex*>(uh.data());
  const double npts = double(nx * ny * nz);
  auto plan_f = W::r2c(a.ndim, dims, const_cast<T*>(f), F);
  auto plan_b = W::c2r(a.ndim, dims, U, u);
  auto plan_u = W::r2c(a.ndim, dims, u, U);
  if (!plan_f || !plan_b || !plan_u) throw DeviceError("FFTW could not plan the transforms");
  W::execute(plan_f);
  const std::int64_t n[3] = {hx, ny, nz};
  for_each_point(n, [&](std::int64_t mx, std::int64_t my, std::int64_t mz, std::int64_t m) {
    const double s = spectral_factor(a, mx, my, mz, npts);
    uh[m] = std::complex<T>(T(s * double(fh[m].real())), T(s * double(fh[m].imag())));
  });
  W::execute(plan_b);  // destroys uh
  W::execute(plan_u);  // uh = FFT(u)
  fh[0] = 0;           // the mean is not part of the problem
  const double res = sum_points(n, [&](std::int64_t mx, std::int64_t my, std::int64_t mz,
                                       std::int64_t m) {
    return spectral_residual2(spectral_k2(a, mx, my, mz), half_spectrum_weight(mx, nx),
                              fh[m].real(), fh[m].imag(), uh[m].real(), uh[m].imag());
  });
  const double base = sum_points(n, [&](std::int64_t mx, std::int64_t, std::int64_t,
                                        std::int64_t m) {
    return spectral_residual2(0.0, half_spectrum_weight(mx, nx), fh[m].real(), fh[m].imag(), 0.0,
                              0.0);
  });
  W::destroy(plan_f);
  W::destroy(plan_b);
  W::destroy(plan_u);
  return base > 0 ? std::sqrt(res / base) : 0.0;
}

template <class T>
class CpuBackend final : public Backend<T> {
 public:
  std::string name() const override {
    return "cpu (" + std::to_string(omp_get_max_threads()) + " threads)";
  }
  bool is_gpu() const override { return false; }
  MemoryResource& memory() override { return mem_; }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<WallTimer>(); }
  void synchronize() override {}

  void upload(const T* host, Field<T>& f) override {
    std::memcpy(f.data(), host, f.bytes());
  }
  void download(const Field<T>& f, T* host) override {
    std::memcpy(host, f.data(), f.bytes());
  }

  void raymarch(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img) override {
    raymarch_cpu(a, volume.data(), img.data());
  }
  void download_image(const Field<float>& img, float* host) override {
    std::memcpy(host, img.data(), img.bytes());
  }

  void heat_step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    heat_box(a, Box::whole(a.n), in, out);
  }
  bool heat_step_part(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                      StepPart part) override {
    for (const Box& b : part_boxes(a.n, core, part)) heat_box(a, b, in, out);
    return true;
  }
  // 2D and 3D grids: k = 2 to 4 steps a pass (a wavefront along the last
  // axis, time_block_cpu).
  int heat_time_block(const HeatArgs<T>& a, int asked) const override {
    return passes(has_passes(a.ndim, a.n), asked);
  }
  static bool has_passes(int ndim, const std::int64_t* n) {
    return tb_has_dims(ndim) && n[ndim - 1] >= 2;
  }
  // The steps a pass takes where the grid has passes (fits): asked when it
  // is 2 to kDeepestTimeBlock, else 1; auto (0): the deepest, and the solver
  // measures which pays.
  static int passes(bool fits, int asked) {
    if (!fits) return 1;
    if (asked > 0) return asked >= 2 && asked <= kDeepestTimeBlock ? asked : 1;
    return kDeepestTimeBlock;
  }
  void heat_steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (heat_time_block(a, k) != k || k < 2)
      throw DeviceError("cpu: no temporally blocked heat pass of " + std::to_string(k) + " steps here");
    with_tb_heat(a, [&](const auto& op) { time_block_cpu(op, k, in.data(), out.data()); });
  }
  static constexpr int kDeepestTimeBlock = 4;
  void heat_box(const HeatArgs<T>& a, const Box& b, const Field<T>& in, Field<T>& out) {
    by_dim(a.ndim, [&](auto d) { heat_step_cpu<decltype(d)::value>(a, b, in.data(), out.data()); });
  }

  int jacobi_time_block(const LaplaceArgs<T>& a, int asked) const override {
    return passes(has_passes(a.ndim, a.n), asked);
  }
  void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (jacobi_time_block(a, k) != k || k < 2)
      throw DeviceError("cpu: no temporally blocked Jacobi pass of " + std::to_string(k) + " sweeps here");
    with_tb_dim(a.ndim, [&](auto d) {
      time_block_cpu(TbJacobi<T, decltype(d)::value>(a), k, in.data(), out.data());
    });
  }

  void set_stencil_taps(const std::vector<StencilTap<T>>& taps) override {
    taps_ = taps;
    fixed_ = fixed_stencil(taps);
  }
  // A star of radius 1 in the presets' order (star5 in 2D, star7 in 3D):
  // the heat passes' wavefront.
  int stencil_time_block(const StencilArgs<T>& a, int asked) const override {
    return passes(has_passes(a.ndim, a.n) && fixed_.shape == FixedShape::Star && fixed_.ndim == a.ndim,
                  asked);
  }
  void stencil_steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (stencil_time_block(a, k) != k || k < 2)
      throw DeviceError("cpu: no temporally blocked stencil pass of " + std::to_string(k) + " steps here");
    with_tb_dim(a.ndim, [&](auto d) {
      time_block_cpu(TbStar<T, decltype(d)::value>(a, fixed_), k, in.data(), out.data());
    });
  }
  void apply_stencil(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    stencil_box(a, Box::whole(a.n), in, out);
  }
  bool stencil_part(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                    StepPart part) override {
    for (const Box& b : part_boxes(a.n, core, part)) stencil_box(a, b, in, out);
    return true;
  }
  void stencil_box(const StencilArgs<T>& a, const Box& b, const Field<T>& in, Field<T>& out) {
    by_dim(a.ndim, [&](auto d) {
      stencil_cpu<decltype(d)::value>(a, b, taps_.data(), in.data(), out.data());
    });
  }

  FieldStats stats(const Field<T>& f) override {
    const T* u = f.data();
    const Grid& g = f.grid();
    const bool whole = !g.has_halo();
    const std::int64_t n = whole ? static_cast<std::int64_t>(f.size()) : g.owned_size();
    const OwnedBox b(g);
    const std::int64_t ox = g.owned(0), oy = g.owned(1);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    std::int64_t bad = 0;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : sum, bad)
    for (std::int64_t q = 0; q < n; ++q) {
      // On a rank-local grid, q runs over the owned box only.
      const std::int64_t i =
          whole ? q
                : (b.lo[0] + q % ox) + b.nx * ((b.lo[1] + (q / ox) % oy) + b.ny * (b.lo[2] + q / (ox * oy)));
      const double v = u[i];
      if (!std::isfinite(v)) {
        ++bad;
        continue;
      }
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += v;
    }
    FieldStats s;
    s.nonfinite = bad;
    s.min = lo;
    s.max = hi;
    s.mean = n > bad ? sum / double(n - bad) : 0.0;
    s.sum = sum;
    s.count = n - bad;
    return s;
  }

  void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    jacobi_box(a, Box::whole(a.n), in, out);
  }
  bool jacobi_sweep_part(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out,
                         const Box& core, StepPart part) override {
    for (const Box& b : part_boxes(a.n, core, part)) jacobi_box(a, b, in, out);
    return true;
  }
  void jacobi_box(const LaplaceArgs<T>& a, const Box& b, const Field<T>& in, Field<T>& out) {
    by_dim(a.ndim,
           [&](auto d) { jacobi_sweep_cpu<decltype(d)::value>(a, b, in.data(), out.data()); });
  }

  // Points of one colour read only points of the other: the order does not matter.
  void sor_sweep(const LaplaceArgs<T>& a, Field<T>& f, int colour) override {
    T* u = f.data();
    by_dim(a.ndim, [&](auto d) {
      for_each_point(a.n, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        if (sor_colour(i, j, k) == colour) u[idx] = sor_point<decltype(d)::value>(a, u, i, j, k);
      });
    });
  }

  double residual(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>* r) override {
    const T* u = in.data();
    T* out = r ? r->data() : nullptr;
    double s = 0;
    const Grid& g = in.grid();
    if (g.has_halo()) {  // r everywhere, Σ r² over the owned points
      by_dim(a.ndim, [&](auto d) {
        if (out) {
          for_each_point(a.n, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
            out[idx] = residual_point<decltype(d)::value>(a, u, i, j, k);
          });
          s = sum_owned(g, [&](std::int64_t idx) { return double(out[idx]) * double(out[idx]); });
          return;
        }
        const std::int64_t nx = a.n[0], ny = a.n[1];
        s = sum_owned(g, [&](std::int64_t idx) {
          const T v = residual_point<decltype(d)::value>(a, u, idx % nx, (idx / nx) % ny,
                                                         idx / (nx * ny));
          return double(v) * double(v);
        });
      });
      return s;
    }
    by_dim(a.ndim, [&](auto d) {
      s = sum_points(a.n, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        const T v = residual_point<decltype(d)::value>(a, u, i, j, k);
        if (out) out[idx] = v;
        return double(v) * double(v);
      });
    });
    return s;
  }

  void set_operator(const LaplaceArgs<T>& a) override { op_ = a; }
  void spmv(const Field<T>& x, Field<T>& y) override {
    const T* p = x.data();
    T* q = y.data();
    by_dim(op_.ndim, [&](auto d) {
      for_each_point(op_.n, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        q[idx] = apply_point<decltype(d)::value>(op_, p, i, j, k);
      });
    });
  }

  double dot(const Field<T>& x, const Field<T>& y) override {
    const T* a = x.data();
    const T* b = y.data();
    return sum_owned(x.grid(), [&](std::int64_t i) { return double(a[i]) * double(b[i]); });
  }

  void axpby(T a, const Field<T>& x, T b, Field<T>& y) override {
    const T* xs = x.data();
    T* ys = y.data();
    const std::int64_t n = static_cast<std::int64_t>(x.size());
    if (b == T(0)) {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) ys[i] = a * xs[i];
    } else {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) ys[i] = a * xs[i] + b * ys[i];
    }
  }

  double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                   Field<T>& r) override {
    const T* ps = p.data();
    const T* qs = q.data();
    T* us = u.data();
    T* rs = r.data();
    const std::int64_t n = static_cast<std::int64_t>(p.size());
    double s = 0;
    if (p.grid().has_halo()) {  // update everywhere, Σ r² over the owned points
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) {
        us[i] += alpha * ps[i];
        rs[i] -= alpha * qs[i];
      }
      return sum_owned(p.grid(), [&](std::int64_t i) { return double(rs[i]) * double(rs[i]); });
    }
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      us[i] += alpha * ps[i];
      rs[i] -= alpha * qs[i];
      s += double(rs[i]) * double(rs[i]);
    }
    return s;
  }

  void add_constant(Field<T>& u, T c) override {
    T* us = u.data();
    const std::int64_t n = static_cast<std::int64_t>(u.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) us[i] += c;
  }

  double fft_poisson(const LaplaceArgs<T>& a, const Field<T>& f, Field<T>& u) override {
    return fft_poisson_cpu(a, f.data(), u.data());
  }

  void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
            Field<T>& buf) override {
    copy_box<T, true>(f.grid(), const_cast<T*>(f.data()), lo, count, buf.data());
  }
  void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
              const Field<T>& buf) override {
    copy_box<T, false>(f.grid(), f.data(), lo, count, const_cast<T*>(buf.data()));
  }

  void copy(const Field<T>& src, Field<T>& dst) override {
    const T* s = src.data();
    T* d = dst.data();
    const std::int64_t n = static_cast<std::int64_t>(src.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) d[i] = s[i];
  }

  void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) override {
    T* as = a.data();
    const T* bs = b.data();
    const T* cs = c.data();
    const std::int64_t n = static_cast<std::int64_t>(a.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) as[i] = triad_point(bs[i], s, cs[i]);
  }

 private:
  HostMemory mem_;
  std::vector<StencilTap<T>> taps_;
  FixedStencil<T> fixed_;  // the taps' shape, when a blocked pass can run them
  LaplaceArgs<T> op_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
  return std::make_unique<CpuBackend<T>>();
}
template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace gf
