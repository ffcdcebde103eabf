#include "solvers/multigrid.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/mpi.hpp"
#include "core/rank_errors.hpp"
#include "grid/gather.hpp"

namespace gf {
namespace {

// The axes of g onto the next coarser grid (identity on missing axes).
// Semi-coarsening, as hypre's PFMG: of the axes that can still be halved,
// those whose spacing is within √2 of the finest one's are, the others wait
// for them. The point smoother only smooths along the axes of strong
// coupling (small h), so those are the ones to coarsen; the spacings of a
// level then stay within √2 of each other wherever the grid allows (a
// 65×47×33 unit cube: 1/64, 1/46, 1/32 first coarsens x and y only).
void coarse_axes(const Grid& g, MgAxis* ax) {
  double hmin = 0;
  for (int a = 0; a < 3; ++a) {
    const std::size_t s = std::size_t(a);
    ax[a] = a < g.ndim ? mg_coarsen_axis(g.n[s], g.periodic[s]) : mg_coarsen_axis(1, false);
    if (ax[a].nc != ax[a].nf && (hmin == 0 || g.h[s] < hmin)) hmin = g.h[s];
  }
  for (int a = 0; a < g.ndim; ++a)
    if (ax[a].nc != ax[a].nf && g.h[std::size_t(a)] > 1.4143 * hmin)
      ax[a] = mg_coarsen_axis(1, false), ax[a].nf = ax[a].nc = g.n[std::size_t(a)];
}

bool coarsens(const MgAxis* ax) {
  for (int a = 0; a < 3; ++a)
    if (ax[a].nc != ax[a].nf) return true;
  return false;
}

Grid coarse_grid(const Grid& g, const MgAxis* ax) {
  Grid c = g;
  for (int a = 0; a < g.ndim; ++a) {
    const std::size_t s = std::size_t(a);
    c.n[s] = ax[a].nc;
    // the same extent: walls (n − 1)·h, periodic n·h
    c.h[s] = g.h[s] * double(ax[a].den) / double(ax[a].num);
  }
  return c;
}

MgColouring colouring(const Grid& g) {
  MgColouring c;
  for (int a = 0; a < 3; ++a) {
    const std::size_t s = std::size_t(a);
    c.n[a] = g.n[s];
    c.odd_periodic[a] = a < g.ndim && g.periodic[s] && g.n[s] % 2 != 0 && g.n[s] > 1;
    if (c.odd_periodic[a]) c.colours = 3;
  }
  return c;
}

}  // namespace

template <class T>
std::vector<Grid> Multigrid<T>::hierarchy(const Grid& g) {
  std::vector<Grid> out{g};
  for (int l = 0; l < 64; ++l) {
    MgAxis ax[3];
    coarse_axes(out.back(), ax);
    if (!coarsens(ax)) break;
    out.push_back(coarse_grid(out.back(), ax));
  }
  return out;
}

template <class T>
std::size_t Multigrid<T>::extra_values(const Grid& g, const Decomp* d) {
  if (d && d->nranks > 1) {
    const std::size_t whole =
        d->rank == 0 ? extra_values(d->global) + std::size_t(d->global.size()) : 0;
    return 2 * std::size_t(g.size()) + whole;
  }
  std::size_t v = std::size_t(g.size());  // the fine level's r
  const std::vector<Grid> h = hierarchy(g);
  for (std::size_t l = 1; l < h.size(); ++l) v += 3 * std::size_t(h[l].size());
  return v;
}

template <class T>
Multigrid<T>::Multigrid(Backend<T>& be, const Grid& g, const LaplaceArgs<T>& a, bool singular,
                        MgOptions opt, bool as_preconditioner)
    : be_(be), exec_(make_multigrid_exec(be)), singular_(singular), opt_(opt) {
  if (be.kind() == BackendKind::Distributed) {
    dist_ = static_cast<DistributedBackend<T>*>(&be);
    if (singular_)
      throw std::logic_error("singular multigrid over ranks (laplace_check_ranks refuses it)");
  }
  const Grid& whole = dist_ ? dist_->decomp().global : g;
  const std::vector<Grid> grids = hierarchy(whole);
  levels_count_ = int(grids.size());
  // Over ranks this rank builds the fine level only, on its block g.
  build(dist_ ? std::vector<Grid>{g} : grids, a, as_preconditioner, false);
  std::int64_t most = 1;
  for (int ax = 0; ax < 3; ++ax) most = std::max(most, grids.back().n[std::size_t(ax)]);
  coarse_sweeps_ = int(std::max<std::int64_t>(16, 4 * most));
  if (!dist_) return;
  Level& L = levels_[0];
  for (int ax = 0; ax < 3; ++ax) {  // the colours of the global indices
    L.colours.n[ax] = whole.n[std::size_t(ax)];
    L.colours.off[ax] = g.offset[std::size_t(ax)];
    L.colours.odd_periodic[ax] = ax < whole.ndim && whole.periodic[std::size_t(ax)] &&
                                 whole.n[std::size_t(ax)] % 2 != 0 && whole.n[std::size_t(ax)] > 1;
    if (L.colours.odd_periodic[ax]) L.colours.colours = 3;
  }
  if (levels_count_ == 1) return;  // the fine level is the coarsest: no transfers
  e_ = field_like(g, "this rank's part of the multigrid correction");
  exec_->zero(e_);
  // The whole grid's boundaries: this rank's args hold its own faces and
  // mark the faces it shares periodic; rank 0 has the real low faces, the
  // last rank (the highest coordinate on every axis) the real high ones.
  std::string hi(3, '\0');
  for (int ax = 0; ax < 3; ++ax) hi[std::size_t(ax)] = char(a.bc[ax].hi);
  hi = mpi::broadcast_from(dist_->decomp().nranks - 1, hi);
  // Rank 0 alone allocates the whole grid's levels: a failure there (its
  // device's memory) stops every rank alike instead of leaving them waiting.
  on_every_rank(true, [&] {
    if (dist_->decomp().rank != 0) return;
    LaplaceArgs<T> wa = a;
    for (int ax = 0; ax < 3; ++ax) wa.bc[ax].hi = BcType(hi[std::size_t(ax)]);
    whole_.reset(new Multigrid<T>(Whole{}, dist_->rank_backend(), whole, wa, opt_,
                                  as_preconditioner));
  });
}

template <class T>
Multigrid<T>::Multigrid(Whole, Backend<T>& be, const Grid& g, const LaplaceArgs<T>& a,
                        MgOptions opt, bool as_preconditioner)
    : be_(be), exec_(make_multigrid_exec(be)), opt_(opt) {
  const std::vector<Grid> grids = hierarchy(g);
  levels_count_ = int(grids.size());
  build(grids, a, as_preconditioner, true);
  std::int64_t most = 1;
  for (int ax = 0; ax < 3; ++ax) most = std::max(most, grids.back().n[std::size_t(ax)]);
  coarse_sweeps_ = int(std::max<std::int64_t>(16, 4 * most));
  e0_ = field_like(g, "the whole grid's multigrid correction, on rank 0");
  exec_->zero(e0_);
}

template <class T>
Field<T> Multigrid<T>::field_like(const Grid& lg, const char* what) {
  // A singular level's f loses its mean (add_constant): singular
  // hierarchies stay dense, as the solver's own fields do then
  // (LaplaceSolver), so that their sums keep the order they were measured
  // and checked in. As CG's preconditioner the
  // fine level's f (rhs0_) is read at z's indices: it takes CG's layout,
  // opt.dense with the CSR operator (a dense f beside a padded z made the
  // GPU's z zero: CG broke down at once).
  return singular_ || opt_.dense ? be_.make_dense_field(lg, what) : be_.make_field(lg, what);
}

// The levels of grids (grids[0]: the fine level, with args a). gathered:
// rank 0's whole_, whose fine level gets a gathered residual in place of an
// iterate and a right-hand side (no rhs0_).
template <class T>
void Multigrid<T>::build(const std::vector<Grid>& grids, const LaplaceArgs<T>& a,
                         bool as_preconditioner, bool gathered) {
  const auto field = [&](const Grid& lg, const char* what) { return field_like(lg, what); };
  // As a preconditioner of W·(s·(−L₀) + c·I): L − (c/s)·I on every level.
  T shift = T(0);
  if (as_preconditioner && a.op_shift != T(0)) shift = a.op_shift / a.op_scale;
  if (as_preconditioner) rhs_scale_ = T(-1) / a.op_scale;
  levels_.resize(grids.size());
  for (std::size_t l = 0; l < grids.size(); ++l) {
    Level& L = levels_[l];
    L.g = grids[l];
    L.colours = colouring(L.g);
    coarse_axes(L.g, L.down);
    if (l == 0) {
      L.a = a;  // the case's f and boundary values
      if (as_preconditioner) {
        if (!gathered) {
          rhs0_ = field(L.g, "the preconditioner's right-hand side");
          exec_->zero(rhs0_);
          L.a.f = rhs0_.data();
        }
        L.a.f_coef = T(1);
        L.a.lap_coef = T(-1);
        if (shift != T(0)) {
          L.a.shift = shift;
          L.a.inv_diag = static_cast<T>(1.0 / (double(a.diag) + double(shift)));
        }
      }
    } else {
      // the error's equation: homogeneous boundaries, the restricted residual as f
      LaplaceArgs<T> c = a;
      double diag = 0;
      for (int ax = 0; ax < 3; ++ax) {
        const double ih2 = ax < L.g.ndim ? 1.0 / (L.g.h[std::size_t(ax)] * L.g.h[std::size_t(ax)]) : 0.0;
        c.ih2[ax] = static_cast<T>(ih2);
        diag += 2 * ih2;
        c.bc[ax].ghost_lo = c.bc[ax].ghost_hi = T(0);
      }
      c.diag = static_cast<T>(diag);
      c.shift = shift;
      c.inv_diag = static_cast<T>(1.0 / (diag + double(shift)));
      c.f_coef = T(1);
      c.lap_coef = T(-1);
      L.u = field(L.g, "a multigrid level's correction");
      L.f = field(L.g, "a multigrid level's right-hand side");
      c.f = L.f.data();
      L.a = c;
      exec_->zero(L.u);
      exec_->zero(L.f);
    }
    L.a.omega = T(opt_.omega > 0 ? opt_.omega : mg_default_omega(L.g.ndim));
    if (int(l) + 1 < levels_count_) {
      L.r = field(L.g, "a multigrid level's residual");
      exec_->zero(L.r);
    }
    double w = 1;
    for (int ax = 0; ax < L.g.ndim; ++ax) {
      double n = double(L.g.n[std::size_t(ax)]);
      if (L.a.bc[ax].lo == BcType::Neumann) n -= 0.5;
      if (L.a.bc[ax].hi == BcType::Neumann) n -= 0.5;
      w *= n;
    }
    L.weight_sum = w;
  }
}

template <class T>
Multigrid<T>::~Multigrid() {
  be_.forget_recorded(id_);
}

// A cycle is some ten launches a level, most of them on coarse levels where
// a kernel runs for a few microseconds: replayed as one graph, the GPU no
// longer waits for the host to launch them (docs/performance.md).
template <class T>
void Multigrid<T>::run_recorded(int what, const void* a, const void* b,
                                const std::function<void()>& f) {
  if (dist_ || singular_) return f();
  be_.recorded({id_, what, a, b}, f);
}

template <class T>
void Multigrid<T>::cycle(Field<T>& u) {
  run_recorded(0, u.data(), nullptr, [&] { visit(0, u, opt_.cycle); });
}

template <class T>
void Multigrid<T>::cycle_from_zero(Field<T>& u) {
  run_recorded(1, u.data(), nullptr, [&] {
    exec_->zero(u);
    visit(0, u, opt_.cycle);
  });
}

template <class T>
void Multigrid<T>::precondition(const Field<T>& r, Field<T>& z) {
  run_recorded(2, r.data(), z.data(), [&] {
    exec_->unweight(levels_[0].a, rhs_scale_, r, rhs0_);
    exec_->zero(z);
    visit(0, z, MgCycle::V);
  });
}

// Sweeps in pairs out of place where the executor has them (the GPU's 3D
// levels of two colours: MultigridExec::sweep_to, one pass over memory a
// sweep instead of two), u → r → u through the level's residual field, which
// holds nothing while the level smooths (it is taken after the pre-smoothing
// and restricted before the post-smoothing); the same bits as in place. The
// rest, and every other level, in place.
template <class T>
void Multigrid<T>::smooth(std::size_t l, Field<T>& u, int sweeps, bool reverse) {
  Level& L = levels_[l];
  const int n = L.colours.colours;
  int s = 0;
  if (n == 2 && sweeps >= 2 && exec_->sweeps_out_of_place(L.g.ndim, L.colours, u.layout())) {
    const int first = reverse ? 1 : 0;
    for (; s + 2 <= sweeps; s += 2) {
      if (!exec_->sweep_to(L.a, L.colours, u, L.r, first)) break;  // r's layout is not u's
      if (!exec_->sweep_to(L.a, L.colours, L.r, u, first))
        throw std::logic_error("multigrid: a sweep back out of place was refused");
    }
  }
  for (; s < sweeps; ++s)
    for (int c = 0; c < n; ++c) exec_->smooth(L.a, L.colours, u, reverse ? n - 1 - c : c);
}

// Σ W·f = 0, or the singular level has no solution (the smoother would
// then drift along the constants).
template <class T>
void Multigrid<T>::make_solvable(Level& c) {
  const double mean = exec_->weighted_sum(c.a, c.f) / c.weight_sum;
  be_.vec().add_constant(c.f, static_cast<T>(-mean));
}

template <class T>
void Multigrid<T>::visit(std::size_t l, Field<T>& u, MgCycle kind) {
  Level& L = levels_[l];
  if (int(l) + 1 == levels_count_) {  // the coarsest: a few points an axis, smoothed to convergence
    const int n = l == 0 ? std::max(opt_.pre, opt_.post) : coarse_sweeps_ / 2;
    smooth(l, u, n);
    smooth(l, u, n, opt_.symmetric);  // forward then backward: symmetric
    return;
  }
  smooth(l, u, opt_.pre);
  exec_->residual(L.a, u, L.r);
  if (dist_)
    correct_over_ranks(u, kind);
  else
    correct(l, u, kind);
  smooth(l, u, opt_.post, opt_.symmetric);
}

template <class T>
void Multigrid<T>::correct(std::size_t l, Field<T>& u, MgCycle kind) {
  Level& L = levels_[l];
  Level& C = levels_[l + 1];
  exec_->restrict_to(C.a, L.down, L.r, C.f);
  if (singular_) make_solvable(C);
  exec_->zero(C.u);
  visit(l + 1, C.u, kind);
  if (kind == MgCycle::F) visit(l + 1, C.u, MgCycle::V);
  exec_->prolong_add(L.a, L.down, C.u, u);
}

// What one rank's cycle adds to the one-rank cycle: the fine residual's
// owned blocks to rank 0 (one fine field's values through rank 0) and every
// rank's padded block of the correction back (as many again, halos
// included), each cycle. Rank 0 restricts, runs the coarse levels and
// prolongs into e0_ = 0 exactly as one rank does into u, so that u + e is
// one rank's u + P e_c bit for bit.
template <class T>
void Multigrid<T>::correct_over_ranks(Field<T>& u, MgCycle kind) {
  const Decomp& d = dist_->decomp();
  Backend<T>& own = dist_->rank_backend();
  std::vector<unsigned char> host(levels_[0].r.points() * sizeof(T));
  own.download(levels_[0].r, reinterpret_cast<T*>(host.data()));
  host = gather_global(d, host, sizeof(T));
  if (whole_) {  // rank 0
    Multigrid<T>& w = *whole_;
    own.upload(reinterpret_cast<const T*>(host.data()), w.levels_[0].r);
    w.exec_->zero(w.e0_);
    w.correct(0, w.e0_, kind);
    own.download(w.e0_, reinterpret_cast<T*>(host.data()));
  }
  host = scatter_global(d, host, sizeof(T));
  own.upload(reinterpret_cast<const T*>(host.data()), e_);  // halo included: no exchange
  be_.vec().axpby(T(1), e_, T(1), u);
}

template class Multigrid<float>;
template class Multigrid<double>;

}  // namespace gf
