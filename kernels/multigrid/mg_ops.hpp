// The geometric multigrid point formulas (laplace.method: multigrid), shared
// by the CPU reference loops (mg_cpu.cpp) and the CUDA kernels (mg_cuda.cu):
//
//   smoother     Gauss–Seidel by colours: sor_point of laplace_ops.hpp (ω = 1),
//                at the points of one colour of mg_colour
//   residual     rᵢ = fᵢ − (L u)ᵢ (no symmetrising weight; 0 at Dirichlet points)
//   restriction  R: a coarse point takes the fine residuals within one coarse
//                spacing of it, weighted by the hat function of the coarse
//                point (linear interpolation's transpose), normalised to sum 1:
//                full weighting (¼ ½ ¼ per axis) where the coarse grid is
//                every other fine point
//   prolongation P: (tri)linear interpolation of the coarse correction, added
//                at the points that are not Dirichlet points
//
// Coarsening (MgAxis). An axis with walls of nf points (nf − 1 intervals) gets
// nc = ⌈(nf − 1)/2⌉ + 1 points over the same extent; a periodic axis of nf
// points gets ⌈nf/2⌉. Where nf − 1 (walls) or nf (periodic) is even the
// coarse points are every other fine point (nested); otherwise the coarse
// spacing H is a little less than 2h and the coarse points fall between fine
// ones (non-nested): the hat weights and interpolation then follow the
// points' positions. This is what lets any n coarsen down to ≤ 3 points an
// axis (65×47×33, 513³, a periodic axis of odd length) with the same
// formulas. Positions are exact: fine point i sits at i·num/den coarse
// spacings (num/den = (nc − 1)/(nf − 1) with walls, nc/nf periodic), so
// every weight is a ratio of integers, alike on both executors.
//
// Colours. Red-black (parity of i + j + k) is a proper colouring when no
// periodic axis has an odd number of points; where one has, the colouring is
// c(i) + c(j) + c(k) mod 3 with c = parity on every axis except that the last
// point of an odd periodic axis takes 2: neighbours differ on one axis by 1
// or 2 in c, never by 0 mod 3, so no point of a colour reads another of its
// colour (no race on the GPU, the same values as the CPU's sweep).
#pragma once
#include <cstdint>

#include "kernels/laplace/laplace_ops.hpp"

namespace gf {

// How one axis of a level maps onto the next coarser level.
struct MgAxis {
  std::int64_t nf = 1, nc = 1;    // points on the fine and coarse axis
  std::int64_t num = 1, den = 1;  // fine point i sits at i·num/den coarse points
  bool periodic = false;
};

// The coarse axis of a fine one (nc == nf: the axis is not coarsened).
inline MgAxis mg_coarsen_axis(std::int64_t nf, bool periodic) {
  MgAxis a;
  a.nf = nf;
  a.periodic = periodic;
  a.nc = nf;
  if (nf > 3) a.nc = periodic ? (nf + 1) / 2 : nf / 2 + 1;
  a.num = periodic ? a.nc : a.nc - 1;
  a.den = periodic ? a.nf : a.nf - 1;
  if (a.num <= 0 || a.den <= 0) a.num = a.den = 1;  // one point: identity
  return a;
}

// The colouring of a level: 2 colours (red-black) or 3 (an odd periodic axis).
// Over MPI ranks a rank's block colours its points by their global indices:
// off is the block's first index (Grid::offset), n the whole grid's points.
struct MgColouring {
  int colours = 2;
  bool odd_periodic[3] = {false, false, false};
  std::int64_t n[3] = {1, 1, 1};
  std::int64_t off[3] = {0, 0, 0};
};

GF_HD int mg_colour(const MgColouring& c, std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::int64_t p[3] = {i + c.off[0], j + c.off[1], k + c.off[2]};
  if (c.colours == 2) return int((p[0] + p[1] + p[2]) & 1);
  int s = 0;
  for (int a = 0; a < 3; ++a)
    s += (c.odd_periodic[a] && p[a] == c.n[a] - 1) ? 2 : int(p[a] & 1);
  return s % 3;
}

// rᵢ = f_coef·fᵢ + lap_coef·(L u)ᵢ without the weight W (0 at Dirichlet points):
// with the args' defaults f − L u, the defect the coarse grid corrects
// (L − shift·I in place of L when the args' shift is not 0).
// The formula from the point's value c, its gathered neighbours and fᵢ.
template <int D, class T>
GF_HD T mg_residual_formula(const LaplaceArgs<T>& a, T c, const T* m, const T* p, T f) {
  T lu = neighbour_sum<D>(m, p, a.ih2) - a.diag * c;
  if (a.shift != T(0)) lu -= a.shift * c;  // (L − shift·I) u
  return a.f_coef * f + a.lap_coef * lu;
}

template <int D, class T>
GF_HD T mg_residual_point(const LaplaceArgs<T>& a, const FieldView<const T>& u, std::int64_t i,
                          std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, u.n, pos)) return T(0);
  T m[3], p[3];
  gather<D>(a, u, idx, pos, m, p);
  return mg_residual_formula<D>(a, u[idx], m, p, rhs_at(a, idx));
}

// The fine points a coarse point takes per axis: those strictly within one
// coarse spacing of it, at most 4 since H ≤ 2h.
constexpr int kMgTaps = 4;

// a / b for a ≥ 0, b > 0, in 32 bits where both fit (every grid of fewer than
// some 46000 points an axis): a GPU divides 64-bit integers in software, several
// times the instructions, and the transfers divide at every point.
GF_HD std::int64_t mg_div(std::int64_t a, std::int64_t b) {
  if (a <= 0x7fffffff && b <= 0x7fffffff) return std::int64_t(std::uint32_t(a) / std::uint32_t(b));
  return a / b;
}

GF_HD std::int64_t mg_floor_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? mg_div(a, b) : -mg_div(-a + b - 1, b);
}

// Fine index i of axis x, mirrored at a wall or wrapped on a periodic axis
// (−nf < i < 2·nf, which every tap of a coarse point is).
GF_HD std::int64_t mg_fold(const MgAxis& x, std::int64_t i) {
  if (x.periodic) return i < 0 ? i + x.nf : (i >= x.nf ? i - x.nf : i);
  if (i < 0) i = -i;
  if (i > x.nf - 1) i = 2 * (x.nf - 1) - i;
  return i;
}

// The fine points that coarse point q of axis x takes and their normalised
// hat weights, in kMgTaps slots: slot e holds fine point lo + 1 + e (mirrored
// or wrapped into at[e]) with its weight w[e], 0 where that point is not
// within reach (at[e] is then not a point to read). Fixed slots, not a
// list: a kernel keeps them in registers, where a list indexed by a count
// went to local memory (ncu at 513³: 368 bytes a thread, 2.4 ms a pass).
template <class T>
GF_HD void mg_restrict_taps(const MgAxis& x, std::int64_t q, std::int64_t* at, T* w) {
  if (x.nc == x.nf) {  // not coarsened: the point itself
    for (int e = 0; e < kMgTaps; ++e) {
      at[e] = q;
      w[e] = T(e == 0 ? 1 : 0);
    }
    return;
  }
  if (x.den == 2 * x.num) {  // nested: full weighting, hat weights num, den, num over 2·den
    at[0] = mg_fold(x, 2 * q - 1);
    at[1] = 2 * q;
    at[2] = mg_fold(x, 2 * q + 1);
    at[3] = 2 * q;
    w[0] = T(0.25);
    w[1] = T(0.5);
    w[2] = T(0.25);
    w[3] = T(0);
    return;
  }
  // Fine i lies at i·num, coarse q at q·den, one coarse spacing is den; the
  // hat of q reaches the fine i with |i·num − q·den| < den: lo < i ≤ lo + 4.
  const std::int64_t c = q * x.den;
  const std::int64_t lo = mg_floor_div(c - x.den, x.num);
  std::int64_t wt[kMgTaps];
  std::int64_t sum = 0;
  for (int e = 0; e < kMgTaps; ++e) {
    const std::int64_t i = lo + 1 + e;
    const std::int64_t d = i * x.num - c;
    const std::int64_t wi = x.den - (d < 0 ? -d : d);
    wt[e] = wi > 0 ? wi : 0;
    at[e] = wi > 0 ? mg_fold(x, i) : 0;
    sum += wt[e];
  }
  for (int e = 0; e < kMgTaps; ++e) w[e] = T(double(wt[e]) / double(sum));
}

// Σ over the slots of the weights w[axis][slot] times the fine values, in
// one order for every executor and path: row(b, c) is the fine row of y
// slot b and z slot c, x slot a its value at at_x[a] (the GPU's interior
// rows take the slots from tables, by 32-bit offsets).
template <int D, class T, class I, class Row>
GF_HD T mg_restrict_sum(const T (&w)[3][kMgTaps], const I (&at_x)[kMgTaps], const Row& row) {
  constexpr int sy = D > 1 ? kMgTaps : 1, sz = D > 2 ? kMgTaps : 1;
  T s = 0;
  for (int c = 0; c < sz; ++c) {
    if (w[2][c] == T(0)) continue;
    T sy_sum = 0;
    for (int b = 0; b < sy; ++b) {
      if (w[1][b] == T(0)) continue;
      const T* r = row(b, c);
      T sx = 0;
      for (int a = 0; a < kMgTaps; ++a)
        if (w[0][a] != T(0)) sx += w[0][a] * r[at_x[a]];
      sy_sum += w[1][b] * sx;
    }
    s += w[2][c] * sy_sum;
  }
  return s;
}

// The coarse value at coarse point (i, j, k): Σ of the weighted fine values
// around it; 0 at Dirichlet points of the coarse level (the correction is 0 there).
template <int D, class T>
GF_HD T mg_restrict_point(const LaplaceArgs<T>& coarse, const MgAxis* ax,
                          const FieldView<const T>& fine, std::int64_t i, std::int64_t j,
                          std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  const std::int64_t nc[3] = {ax[0].nc, ax[1].nc, ax[2].nc};
  if (held<D>(coarse, nc, pos)) return T(0);
  // slots of the axes the level has (one point of weight 1 on the others)
  std::int64_t at[3][kMgTaps] = {};
  T w[3][kMgTaps] = {{T(1)}, {T(1)}, {T(1)}};
  for (int a = 0; a < D; ++a) mg_restrict_taps<T>(ax[a], pos[a], at[a], w[a]);
  return mg_restrict_sum<D>(w, at[0], [&](int b, int c) {
    return fine.p + fine.index(0, at[1][b], at[2][c]);
  });
}

// Where fine point q of axis x falls on the coarse axis: coarse points lo
// and lo + 1 (wrapped), and the weight t of the second (0: q sits on lo).
template <class T>
GF_HD void mg_prolong_taps(const MgAxis& x, std::int64_t q, std::int64_t& lo, std::int64_t& hi,
                           T& t) {
  if (x.nc == x.nf) {
    lo = hi = q;
    t = T(0);
    return;
  }
  if (x.den == 2 * x.num) {  // nested: on coarse point q/2, or halfway to the next
    lo = q >> 1;
    hi = (q & 1) == 0 ? lo : (lo + 1 == x.nc ? 0 : lo + 1);
    t = T((q & 1) == 0 ? 0.0 : 0.5);
    return;
  }
  const std::int64_t p = q * x.num;
  lo = mg_div(p, x.den);
  const std::int64_t rem = p - lo * x.den;
  hi = rem == 0 ? lo : (lo + 1 == x.nc ? 0 : lo + 1);
  t = T(double(rem) / double(x.den));
}

// The coarse points (at) and weights (w) of fine point pos along each axis;
// on missing axes coarse point 0 with weight 1 and none beside it.
template <int D, class T>
GF_HD void mg_prolong_weights(const MgAxis* ax, const std::int64_t* pos, std::int64_t (&at)[3][2],
                              T (&w)[3][2]) {
  for (int a = 0; a < 3; ++a) {
    at[a][0] = at[a][1] = 0;
    w[a][0] = T(1);
    w[a][1] = T(0);
  }
  for (int a = 0; a < D; ++a) {
    T t;
    mg_prolong_taps<T>(ax[a], pos[a], at[a][0], at[a][1], t);
    w[a][0] = T(1) - t;
    w[a][1] = t;
  }
}

// Σ over the taps of the weights w[axis][tap] times the coarse values
// value(x tap, y tap, z tap), in one order for every executor and path (the
// GPU's interior rows read the coarse values by 32-bit offsets instead).
template <int D, class T, class V>
GF_HD T mg_prolong_sum(const T (&w)[3][2], const V& value) {
  T s = 0;
  for (int c = 0; c < (D > 2 ? 2 : 1); ++c) {
    T sy = 0;
    for (int b = 0; b < (D > 1 ? 2 : 1); ++b) {
      T sx = w[0][0] * value(0, b, c);
      if (w[0][1] != T(0)) sx += w[0][1] * value(1, b, c);
      if (w[1][b] != T(0)) sy += w[1][b] * sx;
    }
    if (w[2][c] != T(0)) s += w[2][c] * sy;
  }
  return s;
}

// The interpolated correction at fine point (i, j, k) (0 at Dirichlet points).
template <int D, class T>
GF_HD T mg_prolong_point(const LaplaceArgs<T>& fine_args, const MgAxis* ax,
                         const FieldView<const T>& coarse, std::int64_t i, std::int64_t j,
                         std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  const std::int64_t nf[3] = {ax[0].nf, ax[1].nf, ax[2].nf};
  if (held<D>(fine_args, nf, pos)) return T(0);
  std::int64_t at[3][2];
  T w[3][2];
  mg_prolong_weights<D>(ax, pos, at, w);
  return mg_prolong_sum<D>(w, [&](int x, int b, int c) {
    return coarse(at[0][x], at[1][b], at[2][c]);
  });
}

// s·rᵢ/Wᵢ (0 at Dirichlet points): CG's residual r = W·(…) back to the
// unweighted form of the operator; s = −1 makes it multigrid's right-hand
// side for A z = r (A = W·(−L₀)), s = 1/(op_scale·diag + op_shift) the
// Jacobi preconditioner's z (r over A's diagonal).
template <int D, class T>
GF_HD T mg_unweight_point(const LaplaceArgs<T>& a, T s, const FieldView<const T>& r,
                          std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, r.n, pos)) return T(0);
  return s * r(i, j, k) / bc_weight<D>(a, r.n, pos);
}

// The symmetrising weight W of laplace_ops.hpp at a point: Σ W·v / Σ W is the
// mean that a singular level's right-hand side must lose to be solvable.
template <int D, class T>
GF_HD T mg_weighted_point(const LaplaceArgs<T>& a, const FieldView<const T>& v, std::int64_t i,
                          std::int64_t j, std::int64_t k) {
  const std::int64_t pos[3] = {i, j, k};
  return bc_weight<D>(a, v.n, pos) * v(i, j, k);
}

}  // namespace gf
