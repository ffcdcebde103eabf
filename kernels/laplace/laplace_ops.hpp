// The Laplace/Poisson point formulas (∇²u = f on the node-centred grid), shared
// by the CPU reference loops and the CUDA kernels:
//
//   (L u)ᵢ = Σ_a (u_{-a} + u_{+a} − 2uᵢ)/h_a²            second-order, neighbours by
//                                                         the rules of ops/boundary.hpp
//   Jacobi:  uᵢ ← (Σ_a (u_{-a} + u_{+a})/h_a² − fᵢ) / Σ_a 2/h_a²
//   SOR:     uᵢ ← uᵢ + ω·(Jacobi(u)ᵢ − uᵢ), red-black: points with (i+j+k) even, then odd
//   residual rᵢ = Wᵢ·(f_coef·fᵢ + lap_coef·(L u)ᵢ)         (0 at Dirichlet points)
//   operator (A p)ᵢ = Wᵢ·(op_scale·(−L₀ p)ᵢ + op_shift·pᵢ)   (0 at Dirichlet points)
//
// Dirichlet points are held: they are not unknowns. Wᵢ = Π over the Neumann
// faces the point lies on of 1/2: the ghost-point Neumann rows of L are not
// symmetric (the mirrored neighbour counts twice), W·L is (the trapezoid
// weights of the finite-volume form), so W·(−L₀) is symmetric positive
// (semi-)definite and CG applies. L₀ is L with homogeneous boundaries: Neumann
// ghosts without the gradient term, and p = 0 at Dirichlet points (CG's
// directions are zero there), so A acts on the unknowns only.
#pragma once
#include <cmath>

#include "kernels/ops/boundary.hpp"
#include "kernels/ops/time_block.hpp"

namespace gf {

// The operator's coefficients and boundary rules; extents and layout come
// with the fields' views (grid/view.hpp).
template <class T>
struct LaplaceArgs {
  int ndim = 1;
  T ih2[3] = {0, 0, 0};     // 1/h² per axis (0 on missing axes)
  T diag = 0;               // Σ_a 2/h_a²
  T inv_diag = 0;           // 1 / diag
  AxisBc<T> bc[3];          // ghosts 2h·g (the operator's args: 0)
  const T* f = nullptr;     // right-hand side per point (laid out as u), or nullptr: f_const
  T f_const = 0;
  T f_coef = 1, lap_coef = -1;    // residual: W·(f_coef·f + lap_coef·L u)
  T omega = 1;                    // SOR
  T op_scale = 1, op_shift = 0;   // operator: W·(op_scale·(−L₀) + op_shift·I)
  // Multigrid's smoother and defect (kernels/multigrid/mg_ops.hpp) for
  // L − shift·I (the implicit heat schemes' preconditioner); inv_diag is
  // then 1/(diag + shift). 0: the Laplacian.
  T shift = 0;
};

template <class T>
GF_HD T rhs_at(const LaplaceArgs<T>& a, std::int64_t idx) {
  return a.f ? a.f[idx] : a.f_const;
}

// True when point (pos) of a grid of n points per axis is held (on a
// Dirichlet face of some axis).
template <int D, class T>
GF_HD bool held(const LaplaceArgs<T>& a, const std::int64_t* n, const std::int64_t* pos) {
  for (int ax = 0; ax < D; ++ax)
    if (on_dirichlet(pos[ax], n[ax], a.bc[ax])) return true;
  return false;
}

// The symmetrising weight W: 1/2 per Neumann face the point lies on.
template <int D, class T>
GF_HD T bc_weight(const LaplaceArgs<T>& a, const std::int64_t* n, const std::int64_t* pos) {
  T w = 1;
  for (int ax = 0; ax < D; ++ax) {
    if (pos[ax] == 0 && a.bc[ax].lo == BcType::Neumann) w *= T(0.5);
    if (pos[ax] == n[ax] - 1 && a.bc[ax].hi == BcType::Neumann) w *= T(0.5);
  }
  return w;
}

// Σ_a (m_a + p_a)/h_a², from the neighbours at −1 (m) and +1 (p) on each axis.
template <int D, class T>
GF_HD T neighbour_sum(const T* m, const T* p, const T* ih2) {
  // the fusions written out (fma_rn): nvcc would otherwise fuse the products
  // into the sum differently in the sweep and in the blocked passes
  T s = mul_rn(ih2[0], m[0] + p[0]);
  if constexpr (D > 1) s = fma_rn(ih2[1], m[1] + p[1], s);
  if constexpr (D > 2) s = fma_rn(ih2[2], m[2] + p[2], s);
  return s;
}

// The Jacobi update from gathered neighbours: the one formula of both paths.
template <int D, class T>
GF_HD T jacobi_formula(const T* m, const T* p, const T* ih2, T f, T inv_diag) {
  return (neighbour_sum<D>(m, p, ih2) - f) * inv_diag;
}

template <class T>
GF_HD T sor_formula(T u, T jacobi, T omega) {
  return u + omega * (jacobi - u);
}

// The neighbours of point (pos), at index idx of u, by the boundary rules.
template <int D, class T>
GF_HD void gather(const LaplaceArgs<T>& a, const FieldView<const T>& u, std::int64_t idx,
                  const std::int64_t* pos, T* m, T* p) {
  for (int ax = 0; ax < D; ++ax) {
    m[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), -1, a.bc[ax]);
    p[ax] = neighbour(u.p, idx, pos[ax], u.n[ax], u.stride(ax), +1, a.bc[ax]);
  }
}

// Jacobi update of any point (Dirichlet points keep their value).
template <int D, class T>
GF_HD T jacobi_point(const LaplaceArgs<T>& a, const FieldView<const T>& u, std::int64_t i,
                     std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, u.n, pos)) return u[idx];
  T m[3], p[3];
  gather<D>(a, u, idx, pos, m, p);
  return jacobi_formula<D>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag);
}

// SOR update of any point, in place (the caller picks the colour).
template <int D, class T>
GF_HD T sor_point(const LaplaceArgs<T>& a, const FieldView<const T>& u, std::int64_t i,
                  std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, u.n, pos)) return u[idx];
  T m[3], p[3];
  gather<D>(a, u, idx, pos, m, p);
  return sor_formula(u[idx], jacobi_formula<D>(m, p, a.ih2, rhs_at(a, idx), a.inv_diag), a.omega);
}

// Red (0) or black (1).
GF_HD int sor_colour(std::int64_t i, std::int64_t j, std::int64_t k) {
  return int((i + j + k) & 1);
}

// rᵢ = Wᵢ·(f_coef·fᵢ + lap_coef·(L u)ᵢ) from uᵢ = c, its gathered
// neighbours, fᵢ and Wᵢ = w.
template <int D, class T>
GF_HD T residual_formula(const LaplaceArgs<T>& a, T c, const T* m, const T* p, T f, T w) {
  const T lu = neighbour_sum<D>(m, p, a.ih2) - a.diag * c;
  return w * (a.f_coef * f + a.lap_coef * lu);
}

// rᵢ = Wᵢ·(f_coef·fᵢ + lap_coef·(L u)ᵢ); 0 at Dirichlet points.
template <int D, class T>
GF_HD T residual_point(const LaplaceArgs<T>& a, const FieldView<const T>& u, std::int64_t i,
                       std::int64_t j, std::int64_t k) {
  const std::int64_t idx = u.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, u.n, pos)) return T(0);
  T m[3], p[3];
  gather<D>(a, u, idx, pos, m, p);
  return residual_formula<D>(a, u[idx], m, p, rhs_at(a, idx), bc_weight<D>(a, u.n, pos));
}

// op_scale·(−L₀ p)ᵢ + op_shift·pᵢ from pᵢ (c) and its gathered neighbours,
// without the weight: the one formula of the matrix-free operator (the CPU
// loop, the GPU's marches and point kernel). Products through mul_rn and
// the fusions written out, so that every kernel rounds alike.
template <int D, class T>
GF_HD T apply_formula(const LaplaceArgs<T>& a, T c, const T* m, const T* p) {
  const T minus_lu = mul_rn(a.diag, c) - neighbour_sum<D>(m, p, a.ih2);
  return fma_rn(a.op_scale, minus_lu, mul_rn(a.op_shift, c));
}

// (A p)ᵢ = Wᵢ·(op_scale·(−L₀ p)ᵢ + op_shift·pᵢ), matrix-free; the args carry
// zero ghosts and p is 0 at Dirichlet points. 0 at Dirichlet points.
template <int D, class T>
GF_HD T apply_point(const LaplaceArgs<T>& a, const FieldView<const T>& x, std::int64_t i,
                    std::int64_t j, std::int64_t k) {
  const std::int64_t idx = x.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, x.n, pos)) return T(0);
  T m[3], p[3];
  gather<D>(a, x, idx, pos, m, p);
  return bc_weight<D>(a, x.n, pos) * apply_formula<D>(a, x[idx], m, p);
}

constexpr int kMaxRowEntries = 7;  // centre and two neighbours per axis

// Row (i, j, k) of the operator A of apply_point on fields of layout l, as
// sparse entries (columns: indices in l), sorted by column: what the GPU's
// CSR matrix holds (cuSPARSE). Neighbours that are
// Dirichlet points are dropped (they are not unknowns), a Neumann mirror adds
// to the neighbour it mirrors, a periodic axis wraps. Returns the number of
// entries (0 for a Dirichlet point).
template <int D, class T>
GF_HD int laplace_row(const LaplaceArgs<T>& a, const Layout& l, std::int64_t i, std::int64_t j,
                      std::int64_t k, std::int64_t* cols, T* vals) {
  const std::int64_t idx = l.index(i, j, k);
  const std::int64_t pos[3] = {i, j, k};
  if (held<D>(a, l.n, pos)) return 0;
  const T w = bc_weight<D>(a, l.n, pos);
  int cnt = 0;
  cols[cnt] = idx;
  vals[cnt++] = w * (a.op_scale * a.diag + a.op_shift);
  for (int ax = 0; ax < D; ++ax) {
    const std::int64_t q = pos[ax], nn = l.n[ax];
    for (int dir = -1; dir <= 1; dir += 2) {
      std::int64_t t = q + dir;  // the neighbour's position on this axis
      if (t < 0 || t >= nn) {
        const BcType b = t < 0 ? a.bc[ax].lo : a.bc[ax].hi;
        t = b == BcType::Periodic ? (t < 0 ? nn - 1 : 0) : q - dir;  // wrap or mirror
      }
      if (on_dirichlet(t, nn, a.bc[ax])) continue;  // held: not an unknown
      const std::int64_t col = idx + (t - q) * l.stride(ax);
      const T v = -w * a.op_scale * a.ih2[ax];
      int e = 0;
      while (e < cnt && cols[e] != col) ++e;
      if (e < cnt) {
        vals[e] += v;
      } else {
        cols[cnt] = col;
        vals[cnt++] = v;
      }
    }
  }
  for (int e = 1; e < cnt; ++e)  // insertion sort by column
    for (int f = e; f > 0 && cols[f - 1] > cols[f]; --f) {
      const std::int64_t c = cols[f];
      cols[f] = cols[f - 1];
      cols[f - 1] = c;
      const T v = vals[f];
      vals[f] = vals[f - 1];
      vals[f - 1] = v;
    }
  return cnt;
}

// ---- spectral (FFT) Poisson on a grid periodic on every axis ----

// The signed wavenumber index of mode m on an axis of n points.
GF_HD std::int64_t signed_mode(std::int64_t m, std::int64_t n) { return 2 * m <= n ? m : m - n; }

// |k|² of mode (mx, my, mz) of a grid of n points per axis:
// Σ_a (2π m'_a / (n_a h_a))², i.e. (2π m'_a / n_a)²/h_a².
template <class T>
GF_HD double spectral_k2(const LaplaceArgs<T>& a, const std::int64_t* n, std::int64_t mx,
                         std::int64_t my, std::int64_t mz) {
  const double two_pi = 6.283185307179586476925286766559;
  const std::int64_t m[3] = {mx, my, mz};
  double k2 = 0;
  for (int ax = 0; ax < a.ndim; ++ax) {
    const double t = two_pi * double(signed_mode(m[ax], n[ax])) / double(n[ax]);
    k2 += t * t * double(a.ih2[ax]);
  }
  return k2;
}

// The factor that turns mode F of f̂ into mode U of û for ∇²u = f, with the
// 1/N of the unnormalised inverse transform folded in: −1/(|k|²·N); 0 for the
// mean (k = 0), which a periodic u cannot carry.
template <class T>
GF_HD double spectral_factor(const LaplaceArgs<T>& a, const std::int64_t* n, std::int64_t mx,
                             std::int64_t my, std::int64_t mz, double npoints) {
  const double k2 = spectral_k2(a, n, mx, my, mz);
  return k2 > 0 ? -1.0 / (k2 * npoints) : 0.0;
}

// The residual of one mode, |F + |k|²·G|² where G = FFT(u), times its weight.
GF_HD double spectral_residual2(double k2, double w, double fr, double fi, double gr, double gi) {
  const double rr = fr + k2 * gr, ri = fi + k2 * gi;
  return w * (rr * rr + ri * ri);
}

// Multiplicity of an x mode of the half spectrum a real FFT stores (r2c):
// modes 0 < mx < nx/2 stand for their conjugate partner too.
GF_HD double half_spectrum_weight(std::int64_t mx, std::int64_t nx) {
  return (mx == 0 || 2 * mx == nx) ? 1.0 : 2.0;
}

// A Jacobi sweep of ∇²u = f (jacobi_point's formula): the right-hand side f
// is its source term, taken as it is. SRC false: f is 0 everywhere (no field,
// f_const 0), known at compile time, so that the passes load nothing for it
// (Laplace's equation, bench's rows); (Σ − 0)·inv_diag rounds as Σ·inv_diag.
template <class T, int D = 3, bool SRC = true>
struct TbJacobi : LaplaceArgs<T> {
  using value_type = T;
  static constexpr int kDim = D;
  static constexpr bool kSource = SRC;
  const T* source = nullptr;  // f, or nullptr: source_const
  T source_const = 0;
  TbJacobi() = default;
  explicit TbJacobi(const LaplaceArgs<T>& a) : LaplaceArgs<T>(a), source(a.f), source_const(a.f_const) {}
  GF_HD T point(T, const T* m, const T* p, T s) const {
    return jacobi_formula<D>(m, p, this->ih2, s, this->inv_diag);
  }
  GF_HD T source_term(T raw) const { return raw; }
};

// The passes of Jacobi sweeps: f(op) with the TbJacobi that fits the args.
template <class T, class F>
void with_tb_jacobi(const LaplaceArgs<T>& a, F&& f) {
  with_tb_dim(a.ndim, [&](auto d) {
    constexpr int D = decltype(d)::value;
    if (!a.f && a.f_const == T(0) && !std::signbit(a.f_const)) f(TbJacobi<T, D, false>(a));
    else f(TbJacobi<T, D, true>(a));
  });
}

}  // namespace gf
