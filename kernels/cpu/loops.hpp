// The CPU reference executors' loops, shared by the workloads' CPU files
// (kernels/<workload>/<workload>_cpu.cpp): plain loop nests over a field's
// view that call the point formulas of kernels/ops and of each workload,
// parallel over the outer axes with OpenMP. Keep them simple enough to trust
// by reading: the GPU is validated against them.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "grid/grid.hpp"
#include "grid/view.hpp"
#include "kernels/backend.hpp"
#include "core/threads.hpp"
#include "kernels/ops/boundary.hpp"
#include "kernels/ops/time_block.hpp"

namespace gf::cpu {

// Row by row over box b of a field of layout l (the whole field for a whole
// step, the parts of a split one: backend.hpp): a row off every y and z face
// has its points 1..nx − 2 off every face, so inner(first, last) may take
// the neighbours of points first..last − 1 directly (a loop the compiler
// vectorises); a row on a Dirichlet face in y or z is held, every point
// keeping its value, as the point formulas' first rule says (heat_point_bc,
// jacobi_point); every other point goes through edge(i, j, k, idx), the
// formula with the boundary rules. The same formula with the same operands in
// the same order either way, so the same values. in and out share l.
template <int D, class T, class Edge, class Inner>
void for_rows(const Layout& l, const Box& b, const AxisBc<T>* bc, const T* in, T* out,
              Edge&& edge, Inner&& inner) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  const std::int64_t i0 = b.lo[0], i1 = b.hi[0];
  if (i0 >= i1) return;
  const int team = threads_for(b.size());
#pragma omp parallel for collapse(2) schedule(static) num_threads(team)
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j) {
      const std::int64_t row = l.index(0, j, k);
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

// The −1 and +1 neighbours of point idx, off every face, on each axis of a
// field whose rows are sy values apart and planes sz.
template <int D, class T>
inline void direct_neighbours(const T* u, std::int64_t idx, std::int64_t sy, std::int64_t sz,
                              T* m, T* p) {
  m[0] = u[idx - 1];
  p[0] = u[idx + 1];
  if constexpr (D > 1) {
    m[1] = u[idx - sy];
    p[1] = u[idx + sy];
  }
  if constexpr (D > 2) {
    m[2] = u[idx - sz];
    p[2] = u[idx + sz];
  }
}

// The inner loops of the workloads take their arrays as restrict parameters
// (out is never an input) and their per-point term (source, right-hand side)
// as a function picked once per row, a constant or a field read: with no
// possible aliasing and no branch per point, the compiler vectorises them.
//
// They are also compiled for AVX2 and picked at run time where the CPU has it:
// the loops are bound by the core's arithmetic (3D heat: 11 additions and 3
// products per point, none fused), and AVX2 does twice as much per instruction
// as the baseline SSE2. The same operations on every lane, so the same values.
// AVX2 alone, not x86-64-v3: that brings FMA, and g++ would then fuse a·b + c,
// which the point formulas must not see.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GF_ROW_LOOP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GF_ROW_LOOP_CLONES
#endif

// Dispatch on the grid dimension: fn(std::integral_constant<int, D>).
template <class F>
void by_dim(int ndim, F&& fn) {
  switch (ndim) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    default: fn(std::integral_constant<int, 3>{}); break;
  }
}

// The boxes of one part of a split step (backend.hpp): the core, or the
// boxes around it.
inline std::vector<Box> part_boxes(const std::int64_t* n, const Box& core, StepPart part) {
  if (part == StepPart::Core) return {core};
  return shell_boxes(Box::whole(n), core);
}

// Calls fn(i, j, k, idx) at every point of layout l, parallel over the outer axes.
template <class F>
void for_each_point(const Layout& l, F&& fn) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_for(l.size()))
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) fn(i, j, k, l.index(i, j, k));
}

// Σ fn(i, j, k, idx) over every point of layout l, in double.
template <class F>
double sum_points(const Layout& l, F&& fn) {
  const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
  double s = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s) \
    num_threads(threads_for(l.size()))
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) s += fn(i, j, k, l.index(i, j, k));
  return s;
}

// Σ fn(idx) over the points of a field of layout l on grid g that its rank
// owns, in double. A dense field on one rank (no halo): the plain loop over
// the array, as before ranks existed: same sums, same bits.
template <class F>
double sum_owned(const Grid& g, const Layout& l, F&& fn) {
  double s = 0;
  if (!g.has_halo() && l.is_dense()) {
    const std::int64_t n = l.size();
#pragma omp parallel for reduction(+ : s) schedule(static) num_threads(threads_for(n))
    for (std::int64_t i = 0; i < n; ++i) s += fn(i);
    return s;
  }
  const std::int64_t lo[3] = {g.halo_lo[0], g.halo_lo[1], g.halo_lo[2]};
  const std::int64_t hi[3] = {l.n[0] - g.halo_hi[0], l.n[1] - g.halo_hi[1], l.n[2] - g.halo_hi[2]};
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s) \
    num_threads(threads_for(g.owned_size()))
  for (std::int64_t k = lo[2]; k < hi[2]; ++k)
    for (std::int64_t j = lo[1]; j < hi[1]; ++j)
      for (std::int64_t i = lo[0]; i < hi[0]; ++i) s += fn(l.index(i, j, k));
  return s;
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
// stencil, Jacobi) in one pass, in → out, bit for bit k single steps of the
// workload's CPU executor: a wavefront along the last axis (z in 3D; y in
// 2D, where a "plane" is one row and the y axis of the code is absent).
// Level 0 is `in`; levels 1..k − 1 each live in a ring of three planes
// (which stay in the caches, laid out as a plane of the field), level k is
// `out`. When plane z of level 0 has been passed, level 1 is computed at z,
// level 2 at z − 1, ..., level k at z − k + 1 (each needs the level below at
// p − 1, p, p + 1). On a periodic wavefront axis the levels below k are
// computed k − l planes beyond either end too (wrapped), as the GPU's passes
// do. Each point goes through tb_point (ops/time_block.hpp: the point rules
// from the neighbours as held here) or, off every face, tb_inner: the same
// formula with the same operands in the same order. A plane's rows (in 2D:
// pieces of its one row) are shared among the threads, with a barrier after
// each plane of each level.
template <class Op, class T = typename Op::value_type>
void time_block_cpu(const Op& a, int k, const FieldView<const T>& in, const FieldView<T>& out) {
  constexpr int D = Op::kDim, Z = D - 1;  // Z: the wavefront's axis
  const std::int64_t nx = in.n[0], ny = D == 3 ? in.n[1] : 1, nz = in.n[Z];
  // values from a plane of the wavefront to the next (in 2D: a row's), and
  // from a row of a plane to the next (3D)
  const std::int64_t plane = in.stride(Z), row = in.sy;
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
    return l == 0 ? in.p + plane * (pz ? wrap(p, nz) : p) : ring_plane(l, p);
  };
  const auto target_plane = [&](int l, std::int64_t p) {
    return l == k ? out.p + plane * p : ring_plane(l, p);
  };
  // the planes of level l computed: [lo(l), hi(l))
  const auto lo = [&](int l) { return pz ? -std::int64_t(k - l) : std::int64_t(0); };
  const auto hi = [&](int l) { return pz ? nz + (k - l) : nz; };
  const auto x_walls = [&](std::int64_t i) { return tb_walls<T>(int(i), int(nx), px, a.bc[0]); };
  constexpr TbWalls none{false, false, false};
  // Every plane of every level ends at a barrier: the team is what one plane
  // feeds (half the usual grain, a plane being a pass's unit of work), and
  // no more threads than the plane has pieces. A small grid's pass runs on
  // one thread outside any parallel region, where the `omp for` below has no
  // barrier at all: inside one, even a team of one thread ends each plane
  // with a futex call (libgomp), and a 65² Jacobi pass of 2 sweeps spent
  // most of its time there (issue 25: 30 times the one-sweep time).
  const int team = int(std::min<std::int64_t>(threads_for(nx * ny, points_per_thread() / 2),
                                              ny * pieces));
  const auto wavefront = [&] {
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
        const T *c = cpl + row * j, *yl = cpl + row * jl, *yr = cpl + row * jr;
        const T *zm = zmp + row * j, *zp = zpp + row * j;
        T* o = dst + row * j;
        const std::int64_t base = plane * iz + row * j;  // the row's index in the field
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
  };
  if (team > 1) {
#pragma omp parallel num_threads(team)
    wavefront();
  } else {
    wavefront();
  }
}

// The steps a pass takes where the grid has passes (fits): asked when it is
// 2 to kDeepestTimeBlock, else 1; auto (0): the deepest, and the solver
// measures which pays.
constexpr int kDeepestTimeBlock = 4;
inline int passes(bool fits, int asked) {
  if (!fits) return 1;
  if (asked > 0) return asked >= 2 && asked <= kDeepestTimeBlock ? asked : 1;
  return kDeepestTimeBlock;
}
// The grids the CPU's passes run on: 2D and 3D with at least 2 planes
// along the wavefront's axis.
inline bool has_passes(int ndim, const std::int64_t* n) {
  return tb_has_dims(ndim) && n[ndim - 1] >= 2;
}

}  // namespace gf::cpu
