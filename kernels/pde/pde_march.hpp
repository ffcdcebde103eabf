// The GPU march of a pde stage (docs/design.md "Equations compiled at run
// time"): part of every kernel source pde_codegen.cpp makes for NVRTC, so it
// includes only headers that are too, and is device code only.
//
// The one-thread-a-point kernel (pde_point for every point) reads each of
// a point's neighbours through L1 and works out coordinates, faces and rules
// at every point: a Gray–Scott step ran at 0.57 of copy bandwidth at 512³
// (H100, float32). The march moves memory as the heat marches do
// (kernels/cuda/march_kernels.cuh): a thread owns W = 16/sizeof(T)
// consecutive points of a row, moved as one 16-byte vector, and walks
// along the last axis (z in 3D, y in 2D) over a chunk of planes (rows)
// keeping, for each array whose neighbours an input reads, the planes
// before, at and after the point in registers; the y neighbours (3D) come
// as vectors through L1, the x neighbours from the thread's own vector and
// one value left and right of it. The values go to the same formulas as on
// the CPU (pde_input_at, the generated rhs and Dirichlet values,
// pde_combine_terms: pde_combine for the run's stage terms), so the result
// is the reference's bit for bit.
//
// The march covers every x, and y (3D) and the march axis from 1 to n − 2;
// at the x faces a lane takes its outer neighbour by the axis' rule
// (neighbour(), as pde_input does) and a Dirichlet face's value. The other
// faces are pde_faces': one thread a point through pde_point, in blocks of
// the same launch (pde_march_and_faces).
#pragma once
#include "kernels/cuda/griddep.cuh"
#include "kernels/cuda/vec16.cuh"
#include "kernels/pde/pde_ops.hpp"

// GF_PDE_AHEAD 1 (pde_codegen.cpp sets it in 2D): each array's row after
// the next is loaded an iteration early, into registers, and the L2
// prefetch asks for the one after that. H100, Gray–Scott float32, fraction
// of copy bandwidth: 1025² 0.64 → 0.94, 4097² 0.91 → 0.94, 8191² 0.92 →
// 0.98, 2049² 0.84 → 0.82; float64 level or up to 0.01 ahead. In 3D it
// lost up to 0.02 in both precisions, so the 3D march loads plane k + 1 in
// its iteration.
#ifndef GF_PDE_AHEAD
#define GF_PDE_AHEAD 0
#endif

namespace gf {

template <class T>
__device__ __forceinline__ typename Vec16<T>::type pde_vload(const T* p) {
  return *reinterpret_cast<const typename Vec16<T>::type*>(p);
}
template <class T, class V>
__device__ __forceinline__ T pde_lane(const V& v, int e) {
  return reinterpret_cast<const T*>(&v)[e];
}
template <class T, class V>
__device__ __forceinline__ T& pde_lane(V& v, int e) {
  return reinterpret_cast<T*>(&v)[e];
}

// The march of one stage over a grid of D = 2 or 3 axes (launch: blocks of
// 32 × 8 threads; x over pieces of W points; 3D: y over rows 1..ny − 2 and
// blockIdx.z over chunks of `chunk` planes from plane 1; 2D: y over chunks
// of `chunk` rows from row 1, the block's group of them bm, blockIdx.y or
// its mirror: pde_march_and_faces). Eq as pde_point's, with its constants
// kFields, kArrays (state fields, then coefficients), and nb(a) (an input
// reads array a's neighbours) and val(a) (its value). Needs rows starting on
// 16-byte vectors (the layout's sy a multiple of W, aligned arrays) and
// fewer than 2³¹ values.
template <int D, int PFD, class T, class Eq>
__device__ __forceinline__ void pde_march(const PdeArgs<T>& A, const Eq& eq, int chunk, int bm) {
  using V = typename Vec16<T>::type;
  constexpr int W = Vec16<T>::n;
  constexpr int NF = Eq::kFields, NA = Eq::kArrays, NV = kPdeFirstInput + Eq::kInputs;
  const Layout& l = A.l;
  const int nx = int(l.n[0]), ny = int(l.n[1]);
  const int sy = int(l.sy), step = int(D == 3 ? l.sz : l.sy);
  const int nm = int(l.n[D - 1]);  // points along the march
  const int i0 = W * int(blockIdx.x * blockDim.x + threadIdx.x);
  int j = 0, kb;
  if constexpr (D == 3) {
    j = 1 + int(blockIdx.y * blockDim.y + threadIdx.y);
    kb = 1 + int(blockIdx.z) * chunk;
    if (i0 >= nx || j >= ny - 1) return;
  } else {
    kb = 1 + (bm * int(blockDim.y) + int(threadIdx.y)) * chunk;
    if (i0 >= nx) return;
  }
  const int ke = kb + chunk < nm - 1 ? kb + chunk : nm - 1;
  if (kb >= ke) return;
  // The piece's last point on the grid (lanes past it are row padding),
  // and whether the piece holds an x face.
  const int last = W - 1 < nx - 1 - i0 ? W - 1 : nx - 1 - i0;
  const bool xlo = i0 == 0, xhi = i0 + last == nx - 1;
  const PdeStage<T>& s = A.st;
  // (the terms no stage of the run has, by the generated Eq::kTerms, are
  // compiled out: pde_combine_terms)
  constexpr unsigned TM = Eq::kTerms.may;
  const bool read_u0 = ((TM & 1) && s.a0 != 0) || ((TM & 8) && s.e0 != 0);
  const bool read_acc = ((TM & 4) && s.a2 != 0) || ((TM & 32) && s.e2 != 0);
  const bool keep_acc = (TM & kPdeKeepAcc) && s.keep_acc;
  // whether some lane of the piece is padding or on a Dirichlet x face
  bool fixup = last < W - 1;
  GF_UNROLL
  for (int f = 0; f < NF; ++f)
    fixup = fixup || (xlo && A.bc[f][0].lo == BcType::Dirichlet) ||
            (xhi && A.bc[f][0].hi == BcType::Dirichlet);
  // A field's x neighbours of lanes 0 and last (neighbour()'s rule, worked
  // out once a thread as the heat marches' XSides): at offl and offr from
  // the piece's first point, plus the ghost value beyond a face that is not
  // periodic (ghost bits 2f and 2f + 1; kPdeMaxFields 8). (Tested every plane, the rule's
  // branches and 64-bit index sums were a third of the march's integer
  // instructions.)
  int offl[NF], offr[NF];
  unsigned ghost = 0;
  GF_UNROLL
  for (int f = 0; f < NF; ++f) {
    const AxisBc<T>& b = A.bc[f][0];
    offl[f] = !xlo ? -1 : b.lo == BcType::Periodic ? nx - 1 : 1;
    offr[f] = !xhi ? W : b.hi == BcType::Periodic ? last - (nx - 1) : last - 1;
    if (xlo && b.lo != BcType::Periodic) ghost |= 1u << (2 * f);
    if (xhi && b.hi != BcType::Periodic) ghost |= 2u << (2 * f);
    // kept in registers: NVVM would work them out again every plane
    asm volatile("" : "+r"(offl[f]), "+r"(offr[f]));
  }
  asm volatile("" : "+r"(ghost));
  // (index sums in 32 bits before the pointer's: idx + step, not u + idx + step)
  int idx = D == 3 ? l.index_as<int>(i0, j, kb) : l.index_as<int>(i0, kb, 0);
  V zm[NA], c[NA], zq[NA];
  GF_UNROLL
  for (int a = 0; a < NA; ++a)
    if (eq.nb(a)) {
      zm[a] = pde_vload(A.in[a] + (idx - step));
      c[a] = pde_vload(A.in[a] + idx);
      if constexpr (GF_PDE_AHEAD > 0) zq[a] = pde_vload(A.in[a] + (idx + step));
    }
  for (int k = kb; k < ke; ++k, idx += step) {
    V zp[NA], ym[NA], yp[NA];
    T left[NA], right[NA];  // the x neighbours of lanes 0 and last, by the array's own rule
    GF_UNROLL
    for (int a = 0; a < NA; ++a) {
      const T* u = A.in[a];
      if (eq.nb(a)) {
        constexpr int PD = PFD + (GF_PDE_AHEAD > 0 ? 1 : 0);
        if (PFD > 0 && k + PD < ke)
          asm volatile("prefetch.global.L2 [%0];" ::"l"(u + (idx + (PD + 1) * step)));
        if constexpr (GF_PDE_AHEAD > 0) {
          zp[a] = zq[a];
          if (k + 1 < ke) zq[a] = pde_vload(u + (idx + 2 * step));
        } else {
          zp[a] = pde_vload(u + (idx + step));
        }
        if constexpr (D == 3) {
          ym[a] = pde_vload(u + (idx - sy));
          yp[a] = pde_vload(u + (idx + sy));
        }
        if (a < NF) {
          const T lv = u[idx + offl[a]], rv = u[idx + offr[a]];
          left[a] = (ghost >> (2 * a)) & 1u ? lv + A.bc[a][0].ghost_lo : lv;
          right[a] = (ghost >> (2 * a)) & 2u ? rv + A.bc[a][0].ghost_hi : rv;
        }
      } else if (eq.val(a)) {
        c[a] = pde_vload(u + idx);
      }
    }
    V u0v[NF], accv[NF];
    GF_UNROLL
    for (int f = 0; f < NF; ++f) {
      if (read_u0) u0v[f] = pde_vload(A.u0[f] + idx);
      if (read_acc) accv[f] = pde_vload(A.acc[f] + idx);
    }
    // Every lane, the row's padding lanes and Dirichlet x faces too (from
    // values in registers, the neighbours by the axis rules; whatever they
    // come to, even inf or NaN, the fix-up below replaces them).
    V outv[NF], acco[NF];
    GF_UNROLL
    for (int e = 0; e < W; ++e) {
      const int i = i0 + e;
      T v[NV];
      v[0] = T(A.coord(0, i));
      v[1] = T(A.coord(1, D == 3 ? j : k));
      v[2] = T(A.coord(2, D == 3 ? k : 0));
      v[kPdeVarT] = s.t_in;
      // The values about lane e of array a: a field's own (own: left and
      // right made by its rule), or k's of a DivK, by `rule` (mirrored).
      const auto around = [&](int a, bool own, const AxisBc<T>& rule, T* m, T* p) {
        const T* u = A.in[a];
        m[0] = e > 0 ? pde_lane<T>(c[a], e - 1)
               : own ? left[a]
               : xlo ? neighbour(u, idx, 0, nx, 1, -1, rule)
                     : u[idx - 1];
        p[0] = e < W - 1 && e != last ? pde_lane<T>(c[a], e + 1)
               : own                  ? right[a]
               : xhi                  ? neighbour(u, idx + last, nx - 1, nx, 1, 1, rule)
                                      : u[idx + W];
        if constexpr (D == 3) {
          m[1] = pde_lane<T>(ym[a], e);
          p[1] = pde_lane<T>(yp[a], e);
        }
        m[D - 1] = pde_lane<T>(zm[a], e);
        p[D - 1] = pde_lane<T>(zp[a], e);
      };
      GF_UNROLL
      for (int q = 0; q < Eq::kInputs; ++q) {
        const PdeInput in = eq.input(q);
        const T cv = pde_lane<T>(c[in.field], e);
        if (in.kind == PdeInputKind::Value) {
          v[kPdeFirstInput + q] = cv;
          continue;
        }
        T m[3], p[3], km[3] = {0, 0, 0}, kp[3] = {0, 0, 0}, kc = cv;
        around(in.field, true, A.bc[in.field][0], m, p);
        if (in.kind == PdeInputKind::DivK) {
          around(in.k, false, pde_mirror(A.bc[in.field][0]), km, kp);
          kc = pde_lane<T>(c[in.k], e);
        }
        v[kPdeFirstInput + q] = pde_input_at<D, Eq::kEqualH>(A, in, cv, m, p, kc, km, kp);
      }
      GF_UNROLL
      for (int f = 0; f < NF; ++f) {
        const T r = eq.rhs(f, v);
        const T u0 = read_u0 ? pde_lane<T>(u0v[f], e) : T(0);
        const T ac = read_acc ? pde_lane<T>(accv[f], e) : T(0);
        const T cf = pde_lane<T>(c[f], e);
        pde_lane<T>(outv[f], e) =
            pde_combine_terms<Eq::kTerms.may, Eq::kTerms.always, Eq::kTerms.one, 0>(s.a0, u0, s.a1, cf, s.a2, ac, s.c_dt, r);
        pde_lane<T>(acco[f], e) =
            keep_acc ? pde_combine_terms<Eq::kTerms.may, Eq::kTerms.always, Eq::kTerms.one, 3>(s.e0, u0, s.e1, cf, s.e2, ac, s.d_dt, r)
                     : T(0);
      }
    }
    // The lanes that hold a Dirichlet x face (the later face where both
    // do, as pde_dirichlet_face) take its value; lanes past the row, zeros.
    if (__builtin_expect(fixup, 0)) {
      GF_UNROLL
      for (int e = 0; e < W; ++e) {
        T v[kPdeVarT + 1];
        v[0] = T(A.coord(0, i0 + e));
        v[1] = T(A.coord(1, D == 3 ? j : k));
        v[2] = T(A.coord(2, D == 3 ? k : 0));
        v[kPdeVarT] = s.t_out;
        GF_UNROLL
        for (int f = 0; f < NF; ++f) {
          const int face = e == last && xhi && A.bc[f][0].hi == BcType::Dirichlet ? 1
                           : e == 0 && xlo && A.bc[f][0].lo == BcType::Dirichlet ? 0
                                                                                 : -1;
          if (e > last) {
            pde_lane<T>(outv[f], e) = pde_lane<T>(acco[f], e) = T(0);
          } else if (face >= 0) {
            pde_lane<T>(outv[f], e) = pde_lane<T>(acco[f], e) = eq.dirichlet(f, face, v);
          }
        }
      }
    }
    GF_UNROLL
    for (int f = 0; f < NF; ++f) {
      *reinterpret_cast<V*>(A.out[f] + idx) = outv[f];
      if (keep_acc) *reinterpret_cast<V*>(A.acc[f] + idx) = acco[f];
    }
    GF_UNROLL
    for (int a = 0; a < NA; ++a)
      if (eq.nb(a)) {
        zm[a] = c[a];
        c[a] = zp[a];
      }
  }
}

// The points the march leaves out, one thread each (thread t of the
// launch), through pde_point: 3D, the y faces (j = 0 and ny − 1, every z)
// and then the z faces (interior y); 2D, rows 0 and ny − 1. Consecutive t
// run along x, so rows are read whole.
template <int D, class T, class Eq>
__device__ __forceinline__ void pde_faces(const PdeArgs<T>& A, const Eq& eq, long t) {
  const long nx = A.l.n[0], ny = A.l.n[1], nz = D == 3 ? A.l.n[2] : 1;
  const long i = t % nx;
  long r = t / nx;  // the row: (face, z) for y faces, then (face, y) for z faces
  long j, k = 0;
  if (r < 2 * nz) {
    j = (r % 2) ? ny - 1 : 0;
    k = r / 2;
  } else if (D == 3 && (r -= 2 * nz) < 2 * (ny - 2)) {
    k = (r % 2) ? nz - 1 : 0;
    j = 1 + r / 2;
  } else {
    return;
  }
  T v[kPdeFirstInput + Eq::kInputs];
  pde_point<D, int>(A, eq, i, j, k, v);
}

// One launch a stage: the march's blocks, then the faces' (those whose last
// grid index, z in 3D and y in 2D, is mb or more), which run in the march's
// tail (a kernel of their own after it cost a launch and its gap). In 2D,
// `down` takes the march's blocks along y in the mirror order (the last
// rows first: march_block in march_kernels.cuh, whose formula this repeats
// (that header is no part of the NVRTC source), march_down in
// kernels/device.hpp; H100, Gray–Scott by forward Euler, every other stage
// so: float32 2049² 0.82 → 0.92 of copy bandwidth, 3001 × 2999 0.90 →
// 0.96; float64 2049² 0.90 → 0.95). A 3D
// march always goes up: going down (planes in a chunk too) gained 0.02-0.08
// on grids under 40 MiB a field in float32 but cost 8 registers and left
// float64 at 513³ behind CuPy (1.708 ms a step against 1.674). With
// GF_PDE_PDL 1 (pde_codegen.cpp: dependent launches on) it is launched as a
// dependent launch scheduled early (pdl.cuh): it waits for the stage before
// first. (Scheduled late at the end of each block, as the small fields'
// heat marches are, it ran as fast on small grids, but the trigger held a
// register through the march: the float64 Gray–Scott march then spilled at
// the 80 registers of 3 blocks an SM, fell back to 1 (109 registers) and
// ran 15 % slower at 512³ and 513³, H100.)
#ifndef GF_PDE_PDL
#define GF_PDE_PDL 0
#endif
template <int D, int PFD, class T, class Eq>
__device__ __forceinline__ void pde_march_and_faces(const PdeArgs<T>& A, const Eq& eq, int chunk,
                                                    long nfaces, int mb, int down) {
#if GF_PDE_PDL
  pdl_begin(false);
#endif
  const int b = int(D == 3 ? blockIdx.z : blockIdx.y);
  if (b < mb) {
    pde_march<D, PFD>(A, eq, chunk, D == 2 && down ? mb - 1 - b : b);
    return;
  }
  const long fb = D == 3 ? (long(b - mb) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x
                         : long(b - mb) * gridDim.x + blockIdx.x;
  const long t = fb * long(blockDim.x * blockDim.y) + long(threadIdx.y * blockDim.x + threadIdx.x);
  if (t < nfaces) pde_faces<D>(A, eq, t);
}

}  // namespace gf
