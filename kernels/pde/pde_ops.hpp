// The point formula of the pde workload (docs/cases.md#pde), shared by the
// CPU reference (pde_cpu.cpp, which interprets the equations' bytecode) and
// the kernel that pde_cuda.cu generates and compiles at run time (NVRTC: this
// header is part of its source, so it includes nothing but headers that are
// too, and no standard library but <cstdint>).
//
// A stage of a Runge–Kutta step in Shu–Osher form: at every point,
//   out = a0·u0 + a1·in + a2·acc + c·dt·rhs(in)
//   acc = e0·u0 + e1·in + e2·acc + d·dt·rhs(in)      (when the stage keeps acc)
// with rhs(in) each field's right-hand side from the stage's input fields:
// their values and derivatives (second-order differences, neighbours by
// kernels/ops/boundary.hpp's rules), x, y, z and the stage's time t_in. A
// point on a Dirichlet face of a field takes that face's value at t_out (the
// time the stage's output stands for); where two Dirichlet faces meet, the
// later face in x- x+ y- y+ z- z+ order, as set_initial_state fills them.
// Everything is computed in T, the fields' type (float32 cases in float, as
// their kernels would be written by hand; the stability estimate and the
// initial values stay in double), every sum in a fixed order, and terms
// whose coefficient is 0 are left out (acc is not read before a stage writes
// it), so the CPU and a kernel compiled without fused multiply-adds compute
// the same operations.
#pragma once
#include "core/pde_input.hpp"
#include "grid/view.hpp"
#include "kernels/ops/boundary.hpp"
#include "kernels/ops/hd.hpp"

// Fully unrolls the loop it precedes in device code (the generated Eq's
// counts are constants there); nothing on the host.
#if defined(__CUDA_ARCH__)
#define GF_UNROLL _Pragma("unroll")
#else
#define GF_UNROLL
#endif

namespace gf {

// A stage's coefficients (c and d times dt), in the fields' type T.
template <class T>
struct PdeStage {
  T a0 = 0, a1 = 0, a2 = 0, c_dt = 0;  // out's coefficients
  T e0 = 0, e1 = 0, e2 = 0, d_dt = 0;  // acc's
  int keep_acc = 0;                    // the stage writes acc
  T t_in = 0, t_out = 0;
};

// Everything a stage's points read: the fields' layout and where the points
// lie, the arrays, each state field's boundary rules, the stage.
template <class T>
struct PdeArgs {
  Layout l;
  int ndim = 1;
  double origin[3] = {0, 0, 0}, h[3] = {1, 1, 1};
  std::int64_t offset[3] = {0, 0, 0};
  T inv_h[3] = {1, 1, 1}, inv_2h[3] = {1, 1, 1}, inv_h2[3] = {1, 1, 1};
  // Every axis' inv_h2 the same: lap takes its factored form (pde_input_at).
  int equal_h = 0;
  const T* in[kPdeMaxFields + kPdeMaxCoefficients] = {};  // state fields, then coefficients
  const T* u0[kPdeMaxFields] = {};
  T* acc[kPdeMaxFields] = {};
  T* out[kPdeMaxFields] = {};
  AxisBc<T> bc[kPdeMaxFields][3];
  PdeStage<T> st;

  // Grid::coord, bit for bit (ExprPoints::coord).
  GF_HD double coord(int a, std::int64_t i) const {
    return a < ndim ? origin[a] + mul_rn(double(i + offset[a]), h[a]) : 0.0;
  }
};

// The neighbour at dir (±1) along axis a of point p (index idx, of type I:
// 32 bits in kernels over fewer than 2³¹ values) of array u: read directly
// at a point off every face (DIRECT), else by the axis' rule.
template <bool DIRECT, class I, class T>
GF_HD T pde_nb(const PdeArgs<T>& A, const T* u, I idx, const std::int64_t* p, int a,
                    int dir, const AxisBc<T>& bc) {
  if constexpr (DIRECT) {
    const I s = I(A.l.stride(a));
    return u[dir > 0 ? idx + s : idx - s];
  } else {
    return neighbour(u, std::int64_t(idx), p[a], A.l.n[a], A.l.stride(a), dir, bc);
  }
}

// A coefficient's rules: its own value mirrored beyond a face, wrapped on a
// periodic axis.
template <class T>
GF_HD AxisBc<T> pde_mirror(const AxisBc<T>& bc) {
  AxisBc<T> m;
  m.lo = bc.lo == BcType::Periodic ? BcType::Periodic : BcType::Neumann;
  m.hi = bc.hi == BcType::Periodic ? BcType::Periodic : BcType::Neumann;
  return m;
}

// Input q of a right-hand side (core/pde_input.hpp) from the values about
// its point on a grid of D axes: c the field's value there, m[b] and p[b]
// its neighbours at −1 and +1 along axis b; kc, km, kp the same of DivK's
// k. Only the axes the input reads are looked at (every axis for Lap and
// DivK, q.axis for the first derivatives). The one formula of every input,
// whoever gathers the values (pde_input below, the GPU march of
// pde_march.hpp). EH: whether the axes' spacings are equal (A.equal_h), 1
// or 0 where the caller knows it at compile time (the GPU march, from its
// generated Eq), −1 to read A.equal_h. On equal spacings lap is
// (Σ (m + p) − 2D·c)·inv_h2, 8 operations in 3D instead of 14.
template <int D, int EH = -1, class T>
GF_HD T pde_input_at(const PdeArgs<T>& A, const PdeInput& q, T c, const T* m, const T* p, T kc,
                     const T* km, const T* kp) {
  const int a = q.axis;
  switch (q.kind) {
    case PdeInputKind::Lap: {
      if (EH == 1 || (EH == -1 && A.equal_h)) {
        T s = m[0] + p[0];
        GF_UNROLL
        for (int b = 1; b < D; ++b) s = s + (m[b] + p[b]);
        return (s - T(2 * D) * c) * A.inv_h2[0];
      }
      T s = 0;
      GF_UNROLL
      for (int b = 0; b < D; ++b) s = s + ((m[b] + p[b]) - (c + c)) * A.inv_h2[b];
      return s;
    }
    case PdeInputKind::D1: return (p[a] - m[a]) * A.inv_2h[a];
    case PdeInputKind::Dm: return (c - m[a]) * A.inv_h[a];
    case PdeInputKind::Dp: return (p[a] - c) * A.inv_h[a];
    case PdeInputKind::DivK: {
      T s = 0;
      GF_UNROLL
      for (int b = 0; b < D; ++b)
        s = s + (T(0.5) * (kc + kp[b]) * (p[b] - c) - T(0.5) * (km[b] + kc) * (c - m[b])) *
                    A.inv_h2[b];
      return s;
    }
    default: return c;
  }
}

// Whether input kind k reads the neighbours along axis b (of an input
// whose own axis is a).
GF_HD bool pde_reads_axis(PdeInputKind k, int a, int b) {
  return k == PdeInputKind::Lap || k == PdeInputKind::DivK ||
         (b == a && (k == PdeInputKind::D1 || k == PdeInputKind::Dm || k == PdeInputKind::Dp));
}

// Input q at point p (index idx, of type I): its values gathered from the
// arrays, neighbours by the axes' rules (a coefficient's mirrored,
// pde_mirror), then pde_input_at. DIRECT: p is off every face, its
// neighbours in the field.
template <bool DIRECT, int D, class I, class T>
GF_HD T pde_input(const PdeArgs<T>& A, const PdeInput& q, I idx, const std::int64_t* p) {
  const T* u = A.in[q.field];
  const T c = u[idx];
  if (q.kind == PdeInputKind::Value) return c;
  const AxisBc<T>* bc = A.bc[q.field];
  const bool divk = q.kind == PdeInputKind::DivK;
  const T* k = A.in[divk ? q.k : q.field];
  T m[3] = {0, 0, 0}, pl[3] = {0, 0, 0}, km[3] = {0, 0, 0}, kp[3] = {0, 0, 0};
  GF_UNROLL
  for (int b = 0; b < D; ++b) {
    if (!pde_reads_axis(q.kind, q.axis, b)) continue;
    m[b] = pde_nb<DIRECT, I>(A, u, idx, p, b, -1, bc[b]);
    pl[b] = pde_nb<DIRECT, I>(A, u, idx, p, b, 1, bc[b]);
    if (divk) {
      const AxisBc<T> kb = pde_mirror(bc[b]);
      km[b] = pde_nb<DIRECT, I>(A, k, idx, p, b, -1, kb);
      kp[b] = pde_nb<DIRECT, I>(A, k, idx, p, b, 1, kb);
    }
  }
  return pde_input_at<D>(A, q, c, m, pl, divk ? k[idx] : c, km, kp);
}

// The Dirichlet face of a field's rules that holds point p, or −1: the last
// one in x- x+ y- y+ z- z+ order where faces meet.
template <int D, class T>
GF_HD int pde_dirichlet_face(const AxisBc<T>* bc, const Layout& l, const std::int64_t* p) {
  GF_UNROLL
  for (int face = 2 * D - 1; face >= 0; --face) {
    const int a = face / 2;
    const bool hi = (face & 1) != 0;
    if ((hi ? bc[a].hi : bc[a].lo) != BcType::Dirichlet) continue;
    if (p[a] == (hi ? l.n[a] - 1 : 0)) return face;
  }
  return -1;
}

// Which of a stage's terms (PdeStage) a run's stages have: bits 0-2 out's
// a0, a1, a2, bits 3-5 acc's e0, e1, e2, and kPdeKeepAcc; `may`, a term
// some stage has (its coefficient is not 0), `always`, one every stage has,
// `one`, one whose coefficient is 1 in every stage (forward Euler's u).
// The GPU kernel is compiled for them (pde_combine_terms): a forward Euler
// step's combine is then u + dt·r, 2 operations a value instead of 14 with
// the tests of the 3 coefficients.
inline constexpr unsigned kPdeKeepAcc = 64;
struct PdeTerms {
  unsigned may = 127, always = 0, one = 0;  // (any stage: every term may, none always)
};
template <class T>
GF_HD unsigned pde_stage_terms(const PdeStage<T>& s) {
  return (s.a0 != 0 ? 1u : 0u) | (s.a1 != 0 ? 2u : 0u) | (s.a2 != 0 ? 4u : 0u) |
         (s.e0 != 0 ? 8u : 0u) | (s.e1 != 0 ? 16u : 0u) | (s.e2 != 0 ? 32u : 0u) |
         (s.keep_acc ? kPdeKeepAcc : 0u);
}
// The terms of a stage whose coefficient is 1 (bits as pde_stage_terms').
template <class T>
GF_HD unsigned pde_stage_ones(const PdeStage<T>& s) {
  return (s.a0 == 1 ? 1u : 0u) | (s.a1 == 1 ? 2u : 0u) | (s.a2 == 1 ? 4u : 0u) |
         (s.e0 == 1 ? 8u : 0u) | (s.e1 == 1 ? 16u : 0u) | (s.e2 == 1 ? 32u : 0u);
}
// Whether a stage (its terms and ones) fits what the kernel was compiled for.
inline bool pde_terms_fit(const PdeTerms& t, unsigned terms, unsigned ones) {
  return (terms & ~t.may) == 0 && (terms & t.always) == t.always && (ones & t.one) == t.one;
}

// ca·x + cb·y + cc·z + cdt·r: the terms whose coefficient is not 0, summed
// from the left (the first term is the sum's start: no 0 + before it), then
// cdt·r; compiled for terms MAY, ALWAYS and ONE (PdeTerms; B: 0 for out's
// coefficients, 3 for acc's): a term no stage has is left out, a term every
// stage has is added untested, any other is added where its coefficient is
// not 0, and a term whose coefficient is 1 in every stage is its value (1·x
// is x, to the bit). So the same value as pde_combine (every term tested)
// for every stage that fits them, bit for bit.
template <unsigned MAY, unsigned ALWAYS, unsigned ONE, int B, class T>
GF_HD T pde_combine_terms(T ca, T x, T cb, T y, T cc, T z, T cdt, T r) {
  constexpr bool m0 = (MAY >> B) & 1, m1 = (MAY >> (B + 1)) & 1, m2 = (MAY >> (B + 2)) & 1;
  constexpr bool a0 = (ALWAYS >> B) & 1, a1 = (ALWAYS >> (B + 1)) & 1, a2 = (ALWAYS >> (B + 2)) & 1;
  constexpr bool o0 = (ONE >> B) & 1, o1 = (ONE >> (B + 1)) & 1, o2 = (ONE >> (B + 2)) & 1;
  T s = 0;
  bool any = false;  // (known at compile time where an always term came first)
  if (m0 && (a0 || ca != 0)) {
    s = o0 ? x : ca * x;
    any = true;
  }
  if (m1 && (a1 || cb != 0)) {
    const T t = o1 ? y : cb * y;
    s = any ? s + t : t;
    any = true;
  }
  if (m2 && (a2 || cc != 0)) {
    const T t = o2 ? z : cc * z;
    s = any ? s + t : t;
    any = true;
  }
  const T t = cdt * r;
  return any ? s + t : t;
}

// ca·x + cb·y + cc·z + cdt·r, the terms with a 0 coefficient left out (any
// stage: every term tested).
template <class T>
GF_HD T pde_combine(T ca, T x, T cb, T y, T cc, T z, T cdt, T r) {
  return pde_combine_terms<7, 0, 0, 0>(ca, x, cb, y, cc, z, cdt, r);
}

// The stage at point (i, j, k) of every field of a grid of D axes, indices
// of type I (int where the fields hold fewer than 2³¹ values). Eq
// supplies the equations: nfields(), ninputs(), input(q), rhs(f, v) and
// dirichlet(f, face, v), v the variables (x, y, z, t, the inputs:
// core/pde_input.hpp), which v holds room for. A generated Eq's counts are
// constants, so that its loops unroll and v stays in registers.
template <int D, class I, class T, class Eq>
GF_HD void pde_point(const PdeArgs<T>& A, const Eq& eq, std::int64_t i, std::int64_t j,
                     std::int64_t k, T* v) {
  const std::int64_t p[3] = {i, j, k};
  const I idx = A.l.template index_as<I>(I(i), I(j), I(k));
  v[0] = T(A.coord(0, i));
  v[1] = T(A.coord(1, j));
  v[2] = T(A.coord(2, k));
  v[kPdeVarT] = A.st.t_in;
  bool inside = true;
  GF_UNROLL
  for (int a = 0; a < D; ++a) inside = inside && p[a] > 0 && p[a] < A.l.n[a] - 1;
  if (inside) {
    GF_UNROLL
    for (int q = 0; q < eq.ninputs(); ++q)
      v[kPdeFirstInput + q] = pde_input<true, D, I>(A, eq.input(q), idx, p);
  } else {
    GF_UNROLL
    for (int q = 0; q < eq.ninputs(); ++q)
      v[kPdeFirstInput + q] = pde_input<false, D, I>(A, eq.input(q), idx, p);
  }
  const PdeStage<T>& s = A.st;
  GF_UNROLL
  for (int f = 0; f < eq.nfields(); ++f) {
    const int face = inside ? -1 : pde_dirichlet_face<D>(A.bc[f], A.l, p);
    T o, acc;
    if (face >= 0) {
      v[kPdeVarT] = s.t_out;
      o = acc = eq.dirichlet(f, face, v);
      v[kPdeVarT] = s.t_in;
    } else {
      const T r = eq.rhs(f, v);
      const T u0 = (s.a0 != 0 || s.e0 != 0) ? A.u0[f][idx] : T(0);
      const T in = A.in[f][idx];
      const T a = (s.a2 != 0 || s.e2 != 0) ? A.acc[f][idx] : T(0);
      o = pde_combine(s.a0, u0, s.a1, in, s.a2, a, s.c_dt, r);
      acc = s.keep_acc ? pde_combine(s.e0, u0, s.e1, in, s.e2, a, s.d_dt, r) : T(0);
    }
    A.out[f][idx] = o;
    if (s.keep_acc) A.acc[f][idx] = acc;
  }
}

}  // namespace gf
