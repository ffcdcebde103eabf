// One rank's part of a grid split over MPI ranks (grid/decomp.hpp): the
// backend that wraps a rank's CPU or CUDA backend, and the halo exchange.
//
// The invariant every executor keeps: every field's halo holds the
// neighbours' values. Operations that read neighbours refresh the halo of
// the field they write (each workload's executor wrapper, next to its
// executor: kernels/<workload>/<workload>_dist.cpp, through one_step and
// blocked below); uploads refresh it here; pointwise operations keep it by
// themselves; sums cover the owned points and are added over the ranks
// (the vector operations here).
//
// The exchange goes axis by axis (x, then y, then z): along each split axis
// a rank posts non-blocking receives for its two halo slabs, packs its two
// boundary slabs of owned points (on the backend: a kernel on the GPU) and
// sends them; the slabs span the whole padded block along the other axes,
// halos included, so that the halos received along earlier axes travel on
// and fill the edges and corners that box stencils read (the classic
// trick: 2·ndim messages instead of 26).
//
// Overlap (GRIDFORGE_HALO_OVERLAP=1, the default): a step that an executor
// can split in two (the shell of the block, then its core: Decomp::core_box)
// has its shell updated first, then its faces travel while the core is
// updated (on the GPU: the exchange on a stream of its own beside the core's
// kernels), and the step returns with the halo filled, as before, bit for
// bit. Where the blocks are thin (Decomp::overlap_fits) or the executor does
// not split a step, the exchange follows the whole step.
//
// On the GPU the slabs go from device memory straight to MPI when the MPI
// library is CUDA-aware (MPIX_Query_cuda_support at run time; the
// environment variable GRIDFORGE_CUDA_AWARE=0/1 overrides it) and through
// host buffers otherwise, or through NCCL (GRIDFORGE_HALO).
#pragma once
#include <functional>
#include <stdexcept>
#include <memory>
#include <string>

#include "grid/decomp.hpp"
#include "kernels/backend.hpp"
#include "kernels/ops/boundary.hpp"

namespace gf {

// True when the MPI library passes device pointers (see above).
bool mpi_cuda_aware();
// GRIDFORGE_HALO_OVERLAP: 1: overlap where it applies (see above); 0: the
// exchange follows each whole step; unset or empty: 1, on the CPU and the GPU
// (`gpu` is kept for a default that may differ again). A UsageError otherwise.
bool halo_overlap_requested(bool gpu);

template <class T>
class DistributedBackend final : public Backend<T> {
 public:
  DistributedBackend(std::unique_ptr<Backend<T>> inner, const Decomp& d);
  ~DistributedBackend() override;

  std::string name() const override { return in_->name(); }
  BackendKind kind() const override { return BackendKind::Distributed; }
  bool is_gpu() const override { return in_->is_gpu(); }
  MemoryResource& memory() override { return in_->memory(); }
  Field<T> make_field(const Grid& g, const std::string& what) override {
    return in_->make_field(g, what);
  }
  std::unique_ptr<Timer> make_timer() override { return in_->make_timer(); }
  void synchronize() override { in_->synchronize(); }
  VectorOps<T>& vec() override { return *vec_; }
  Backend<T>& rank_backend() override { return *in_; }
  // The whole halo refreshed: a pass of several steps reads it all.
  void upload(const T* host, Field<T>& f) override;
  void download(const Field<T>& f, T* host) override { in_->download(f, host); }
  void copy(const Field<T>& src, Field<T>& dst) override { in_->copy(src, dst); }
  void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
            Field<T>& buf) override {
    in_->pack(f, lo, count, buf);
  }
  void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
              const Field<T>& buf) override {
    in_->unpack(f, lo, count, buf);
  }
  void download_image(const Field<float>&, float*) override {
    throw std::logic_error("images over several ranks are drawn on rank 0's own backend");
  }
  void download_image_rgb8(const Field<float>&, unsigned char*) override {
    throw std::logic_error("images over several ranks are drawn on rank 0's own backend");
  }

  // ---- for the workload executors' wrappers ----
  Backend<T>& inner() { return *in_; }
  const Decomp& decomp() const { return d_; }
  // The parity of this block's first point's global index (i + j + k): SOR
  // colours by global parity.
  int parity() const { return parity_; }
  // The overlapped exchange's core box (Decomp::core_box).
  const Box& core() const { return core_; }
  // How the halos travel, in words, for the log.
  const std::string& halo_how() const { return how_; }
  // The w layers of f's halo next to the owned points refreshed (w = 0: one
  // step's, the stencil radius). Fields of other grids (1D scratch) have no halo.
  void refresh(Field<T>& f, int w = 0);
  // The whole halo of f refreshed, as after an upload: for fields written
  // in place by the inner backend's executors (the expressions', kernels/expr/).
  void refresh_whole(Field<T>& f);
  // One step that reads neighbours, from `in` into `out` (`what` names it in
  // the log, e.g. "explicit heat steps"): split for the overlap where it
  // applies and part(p) runs part p on the inner executor (false: it does
  // not split this step, nothing done), else whole() then out's halo refreshed.
  void one_step(const char* what, const Field<T>& in, Field<T>& out,
                const std::function<bool(StepPart)>& part, const std::function<void()>& whole);
  // Temporal blocking over ranks: pass() (the inner executor's pass of k
  // steps over the padded block), then the k·radius layers of the halo next
  // to the owned points refreshed. The points the pass computes in the halo
  // read the halo's outer edge, where neighbours are missing, and are wrong
  // only within k·radius layers of it, never the owned ones, provided the
  // halo of `in` held the neighbours' values k·radius deep: after a single
  // step only (k − 1)·radius layers do, and the pass first refreshes `in`
  // (its halo only; the owned points are left as they are).
  void blocked(int k, const Field<T>& in, Field<T>& out, const std::function<void()>& pass);
  // The steps a pass may take: at most the halo's depth, and the fewest any
  // rank's executor takes (all ranks exchange after the same steps).
  int blocked_depth(int k) const;
  // The args of a blocked pass over the padded block: a shared face marked
  // periodic (the rank-local case) whose opposite face is a wall becomes a
  // mirror (Neumann, no gradient), for the passes take an axis as periodic
  // or not as a whole (its lo face's type) and would wrap past the wall;
  // what the mirror gives is wrong only where the halo's outer edge is anyway.
  template <class Args>
  static Args pass_args(Args a) {
    for (auto& b : a.bc) {
      const bool lo = b.lo == BcType::Periodic, hi = b.hi == BcType::Periodic;
      if (lo && !hi) b.lo = BcType::Neumann, b.ghost_lo = T(0);
      if (hi && !lo) b.hi = BcType::Neumann, b.ghost_hi = T(0);
    }
    return a;
  }

 private:
  struct Exchange;  // the halo exchange (MPI, NCCL): dist_backend.cpp
  std::unique_ptr<Backend<T>> in_;
  Decomp d_;
  std::unique_ptr<Exchange> x_;
  std::unique_ptr<VectorOps<T>> vec_;
  int parity_ = 0;
  Box core_;
  std::string how_;
};

// Wraps the backend of one rank (see above); with d.nranks == 1 returns
// `inner` itself.
template <class T>
std::unique_ptr<Backend<T>> make_distributed_backend(std::unique_ptr<Backend<T>> inner,
                                                     const Decomp& d);

// How the halos of `be` travel, in words, for the log (then whether they
// overlap the interior update, and why not): "MPI" on the CPU; on the GPU
// "NCCL between the GPUs" (the default when libnccl.so.2 loads at run time
// on every rank and no two ranks share a GPU: one group of ncclSend/ncclRecv
// on the compute stream per axis, no host synchronisation), else "CUDA-aware
// MPI" or "MPI, staged through the host", with why NCCL was not taken.
// GRIDFORGE_HALO=auto|nccl|mpi chooses (usage.md).
template <class T>
std::string halo_transport(Backend<T>& be);

}  // namespace gf
