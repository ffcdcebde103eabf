// Geometric multigrid for ∇²u = f (laplace.method: multigrid), written once
// against the multigrid executor (kernels/multigrid/): the hierarchy of
// levels and the V- and F-cycles. docs/design.md, "Multigrid", says why the
// coarsening, the transfers and the smoother are what they are.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/dist/dist_backend.hpp"
#include "kernels/multigrid/mg_exec.hpp"

namespace gf {

// The smoother is red-black Gauss–Seidel over-relaxed by ω (SOR by colours),
// three sweeps a cycle (MgOptions: 1 before the coarse correction, 2 after).
// ω measured with V(2,1) on 17³ to 65³ and 65×47×33 with every boundary mix
// (docs/performance.md), ω = 1.25 in 3D
// (1.15 in 2D) gave 0.02–0.07 per V-cycle where plain Gauss–Seidel V(2,2)
// gave 0.10–0.16 for more work; ω = 1.3 and above made the factor erratic.
inline double mg_default_omega(int ndim) { return ndim >= 3 ? 1.25 : ndim == 2 ? 1.15 : 1.0; }

struct MgOptions {
  MgCycle cycle = MgCycle::V;
  // Smoothing sweeps before and after the coarse correction: 1 and 2 (a
  // V(1,2) cycle). On an H100 to 1e-10 (docs/performance.md) it took 8
  // cycles where V(2,1) took 9 at 385³ and 513³ (10 against 11 at
  // 509×263×391), the same sweeps a cycle: 9-11 % less time there, level
  // at 129³, 257³ and 449³; V(2,2) (a fourth sweep), V(1,1) and V(0,2)
  // were slower overall.
  int pre = 1, post = 2;
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
  ~Multigrid();
  Multigrid(const Multigrid&) = delete;
  Multigrid& operator=(const Multigrid&) = delete;
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
  // The levels of the hierarchy (over ranks, of the whole grid's) and a
  // level's grid (over ranks, level 0 only: this rank's padded block).
  int levels() const { return levels_count_; }
  const Grid& level_grid(int l) const { return levels_[std::size_t(l)].g; }
  // The grids of the levels under g (g first), as the hierarchy makes them.
  static std::vector<Grid> hierarchy(const Grid& g);
  // Values the levels below g hold (u, f, r each) and the fine level's r.
  // Over ranks (d, g this rank's block): the block's r and correction, and
  // on rank 0 the whole grid's levels and its correction besides.
  static std::size_t extra_values(const Grid& g, const Decomp* d = nullptr);

 private:
  struct Level {
    Grid g;
    LaplaceArgs<T> a;
    MgColouring colours;
    MgAxis down[3];  // this level's axes onto the next coarser one
    Field<T> u, f, r;
    double weight_sum = 0;  // Σ W over the points (singular levels)
  };
  // Rank 0's hierarchy over the whole grid (see whole_ below).
  struct Whole {};
  Multigrid(Whole, Backend<T>& be, const Grid& g, const LaplaceArgs<T>& a, MgOptions opt,
            bool as_preconditioner);
  void visit(std::size_t l, Field<T>& u, MgCycle kind);
  // u += P (the coarse solve of R r), r: level l's residual.
  void correct(std::size_t l, Field<T>& u, MgCycle kind);
  // The same over ranks: the fine residual gathered onto rank 0, whose
  // whole_ corrects, and the correction scattered back and added.
  void correct_over_ranks(Field<T>& u, MgCycle kind);
  void smooth(std::size_t l, Field<T>& u, int sweeps, bool reverse = false);
  void make_solvable(Level& c);
  // Runs a cycle's launches recorded (Backend::recorded) under key (what,
  // a, b) where its launches are fixed: one rank, not singular (the coarse
  // levels' means are reduced on the host).
  void run_recorded(int what, const void* a, const void* b, const std::function<void()>& f);
  Field<T> field_like(const Grid& lg, const char* what);
  void build(const std::vector<Grid>& grids, const LaplaceArgs<T>& a, bool as_preconditioner,
             bool gathered);

  Backend<T>& be_;
  std::unique_ptr<MultigridExec<T>> exec_;
  std::vector<Level> levels_;
  Field<T> rhs0_;  // the fine level's right-hand side as a preconditioner
  T rhs_scale_ = T(-1);  // −1/s: r to that right-hand side (unweight)
  bool singular_ = false;
  MgOptions opt_;
  int coarse_sweeps_ = 16;
  int levels_count_ = 1;
  // Over MPI ranks (a DistributedBackend, docs/design.md "Multigrid"):
  // levels_ holds the fine level alone, this rank's block of it, smoothed
  // and its residual taken on the ranks; the levels below live on rank 0 in
  // whole_, a one-rank hierarchy over the whole grid on rank 0's own backend
  // (null on the other ranks and on one rank), whose level 0 has r (the
  // gathered residual) and e0_ (the correction over the whole grid).
  DistributedBackend<T>* dist_ = nullptr;
  std::unique_ptr<Multigrid<T>> whole_;
  Field<T> e_;   // this rank's block of the fine correction (over ranks)
  Field<T> e0_;  // in whole_: the fine correction over the whole grid
  // this hierarchy's recordings' owner (Backend::recorded)
  std::uint64_t id_ = Backend<T>::new_record_owner();
};

}  // namespace gf
