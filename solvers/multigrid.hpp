// Geometric multigrid for ∇²u = f (laplace.method: multigrid), written once
// against the multigrid executor (kernels/multigrid/): the hierarchy of
// levels and the V- and F-cycles. docs/design.md, "Multigrid", says why the
// coarsening, the transfers and the smoother are what they are.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/multigrid/mg_exec.hpp"

namespace gf {

// The smoother is red-black Gauss–Seidel over-relaxed by ω (SOR by colours),
// 2 sweeps before the coarse correction and 1 after: measured on 17³ to 65³
// and 65×47×33 with every boundary mix (docs/performance.md), ω = 1.25 in 3D
// (1.15 in 2D) gave 0.02–0.07 per V-cycle where plain Gauss–Seidel V(2,2)
// gave 0.10–0.16 for more work; ω = 1.3 and above made the factor erratic.
inline double mg_default_omega(int ndim) { return ndim >= 3 ? 1.25 : ndim == 2 ? 1.15 : 1.0; }

struct MgOptions {
  MgCycle cycle = MgCycle::V;
  int pre = 2, post = 1;  // smoothing sweeps before and after the coarse correction
  double omega = 0;       // 0: mg_default_omega of the grid's dimensions
  // A symmetric cycle (CG's preconditioner): the sweeps after the coarse
  // correction take the colours in the reverse order of those before.
  bool symmetric = false;
  // The hierarchy's fields dense (else the backend's rows): as a
  // preconditioner, the fine level's right-hand side must have the layout of
  // CG's vectors (dense with the CSR operator), which its u (z) has.
  bool dense = false;
};

template <class T>
class Multigrid {
 public:
  // The hierarchy under the fine grid g, whose operator is a (its right-hand
  // side and boundary values included; a's ω is not used: the smoother is
  // Gauss–Seidel). singular: no Dirichlet face (each coarse right-hand side
  // then loses its weighted mean, which the constants cannot carry).
  Multigrid(Backend<T>& be, const Grid& g, const LaplaceArgs<T>& a, bool singular,
            MgOptions opt = {}, bool as_preconditioner = false);
  // One cycle on u (the fine level's iterate, in place).
  void cycle(Field<T>& u);
  // One cycle from u = 0 (mixed precision's correction: L₀ e = f).
  void cycle_from_zero(Field<T>& u);
  // CG's preconditioner, z ≈ A⁻¹ r for A = W·(s·(−L₀) + c·I) (s, c: a's
  // op_scale and op_shift; the Laplacian's 1 and 0, the implicit heat
  // schemes' θ·α·dt and 1): one cycle from z = 0 on (L₀ − (c/s)·I) z =
  // −r/(s·W). The hierarchy must have been made with as_preconditioner from
  // CG's operator args (ghosts 0; its f is not used).
  void precondition(const Field<T>& r, Field<T>& z);
  int levels() const { return int(levels_.size()); }
  const Grid& level_grid(int l) const { return levels_[std::size_t(l)].g; }
  // The grids of the levels under g (g first), as the hierarchy makes them.
  static std::vector<Grid> hierarchy(const Grid& g);
  // Values the levels below g hold (u, f, r each) and the fine level's r.
  static std::size_t extra_values(const Grid& g);

 private:
  struct Level {
    Grid g;
    LaplaceArgs<T> a;
    MgColouring colours;
    MgAxis down[3];  // this level's axes onto the next coarser one
    Field<T> u, f, r;
    double weight_sum = 0;  // Σ W over the points (singular levels)
  };
  void visit(std::size_t l, Field<T>& u, MgCycle kind);
  void smooth(std::size_t l, Field<T>& u, int sweeps, bool reverse = false);
  void make_solvable(Level& c);

  Backend<T>& be_;
  std::unique_ptr<MultigridExec<T>> exec_;
  std::vector<Level> levels_;
  Field<T> rhs0_;  // the fine level's right-hand side as a preconditioner
  T rhs_scale_ = T(-1);  // −1/s: r to that right-hand side (unweight)
  bool singular_ = false;
  MgOptions opt_;
  int coarse_sweeps_ = 16;
};

}  // namespace gf
