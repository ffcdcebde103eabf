#include "grid/halo.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/mpi.hpp"

#if defined(GRIDFORGE_HAVE_MPI)
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace gf {

bool mpi_cuda_aware() {
  if (const char* e = std::getenv("GRIDFORGE_CUDA_AWARE")) return std::string(e) == "1";
#if defined(GRIDFORGE_HAVE_MPI) && defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  // The library loaded at run time answers, not the headers built against.
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool halo_overlap_requested(bool gpu) {
  (void)gpu;  // the same default on both paths since 2026-11-23 (timed on 2 H200s)
  const char* e = std::getenv("GRIDFORGE_HALO_OVERLAP");
  const std::string v = e ? e : "";
  if (v.empty()) return true;
  if (v == "1") return true;
  if (v == "0") return false;
  throw UsageError("GRIDFORGE_HALO_OVERLAP: '" + v + "' is not 0 or 1");
}

#if defined(GRIDFORGE_HAVE_MPI)

namespace {

// How slabs travel: MPI on host memory (the CPU), MPI on device memory
// (CUDA-aware), MPI through host copies (staged), or NCCL between the GPUs.
enum class HaloMode { Host, CudaAware, Staged, Nccl };

// True when two ranks of one node run on the same GPU (NCCL refuses that):
// every rank's node and GPU, compared.
template <class T>
bool ranks_share_a_gpu(const Backend<T>& be) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::array<char, 256> key{};
  const std::string k = std::string(host, std::size_t(len)) + "|" + be.name();
  std::strncpy(key.data(), k.c_str(), key.size() - 1);
  const int n = mpi::size();
  std::vector<char> all(std::size_t(n) * key.size());
  MPI_Allgather(key.data(), int(key.size()), MPI_CHAR, all.data(), int(key.size()), MPI_CHAR,
                MPI_COMM_WORLD);
  for (int r = 0; r < n; ++r)
    if (r != mpi::rank() && std::memcmp(&all[std::size_t(r) * key.size()], key.data(), key.size()) == 0)
      return true;
  return false;
}

// How halos travel on the GPU path, chosen alike on every rank (the choice is
// collective): GRIDFORGE_HALO=auto (the default) takes NCCL when it loads on
// every rank and no two ranks share a GPU, MPI otherwise; nccl insists on
// NCCL; mpi never uses it. MPI passes device memory when the library is
// CUDA-aware and stages through pinned host memory otherwise. `how` says
// which, in words, for the log.
template <class T>
HaloMode halo_mode(Backend<T>& be, std::string& how) {
  if (!be.is_gpu()) {
    how = "MPI";
    return HaloMode::Host;
  }
  const char* e = std::getenv("GRIDFORGE_HALO");
  const std::string want = e && *e ? e : "auto";
  if (want != "auto" && want != "nccl" && want != "mpi")
    throw UsageError("GRIDFORGE_HALO: '" + want + "' is not auto, nccl or mpi");
  const bool aware = mpi_cuda_aware();
  const HaloMode by_mpi = aware ? HaloMode::CudaAware : HaloMode::Staged;
  how = aware ? "CUDA-aware MPI" : "MPI, staged through the host";
  if (want == "mpi") return by_mpi;
  std::string why = be.peer_unavailable();
  if (why.empty() && ranks_share_a_gpu(be)) why = "two ranks share a GPU";
  int ok = why.empty() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (ok) {
    how = "NCCL between the GPUs";
    return HaloMode::Nccl;
  }
  if (why.empty()) why = "another rank cannot use it";
  if (want == "nccl") throw DeviceError("GRIDFORGE_HALO=nccl: " + why);
  how += " (not NCCL: " + why + ")";
  return by_mpi;
}

// The halo exchange of the fields of one rank-local grid.
template <class T>
class HaloExchange {
 public:
  HaloExchange(const Decomp& d, Backend<T>& be) : d_(d), be_(be), g_(d.local_grid()) {
    std::int64_t most = 1;
    for (int a = 0; a < g_.ndim; ++a)
      if (d.dims[a] > 1) most = std::max(most, g_.size() / g_.n[a] * d.halo);
    Grid b;
    b.ndim = 1;
    b.n = {most, 1, 1};
    for (auto& f : bufs_) f = be.make_field(b, "a halo buffer");
    mode_ = halo_mode(be, how_);
    if (mode_ == HaloMode::Nccl) {  // one communicator over the ranks' GPUs
      unsigned char id[kPeerIdBytes] = {};
      if (d.rank == 0) be.peer_id(id);
      MPI_Bcast(id, kPeerIdBytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      be.peer_connect(id, d.nranks, d.rank);
    }
    staged_ = mode_ == HaloMode::Staged;
    if (staged_)
      for (auto& h : host_) {
        h.resize(static_cast<std::size_t>(most));
        be.pin_host(h.data(), h.size() * sizeof(T));
      }
  }
  ~HaloExchange() {
    if (staged_)
      for (auto& h : host_) be_.unpin_host(h.data());
  }
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  HaloMode mode() const { return mode_; }
  const std::string& how() const { return how_; }

  // Fills the w layers of f's halos next to the owned points (w ≤ d.halo;
  // the halo's outer layers keep what they held).
  void exchange(Field<T>& f, int w) {
    w_ = w;
    for (int a = 0; a < g_.ndim; ++a)
      if (d_.dims[a] > 1) {
        begin_axis(f, a);
        end_axis(f, a);
      }
  }
  // The same exchange in two calls, for the overlapped steps: start() sends
  // the faces along the first split axis (NCCL: queues the whole exchange),
  // finish() waits for them and exchanges along the other axes (whose slabs
  // carry the halos just received into the edges and corners).
  void start(Field<T>& f, int w) {
    w_ = w;
    first_ = 0;
    while (d_.dims[first_] == 1) ++first_;
    if (mode_ == HaloMode::Nccl) {
      exchange(f, w);
      return;
    }
    begin_axis(f, first_);
  }
  void finish(Field<T>& f) {
    if (mode_ == HaloMode::Nccl) return;
    end_axis(f, first_);
    for (int a = first_ + 1; a < g_.ndim; ++a)
      if (d_.dims[a] > 1) {
        begin_axis(f, a);
        end_axis(f, a);
      }
  }

  bool staged() const { return staged_; }

 private:
  // Slab along axis a: layers [from, from + w_) on a, everything on the others.
  void slab(int a, std::int64_t from, std::int64_t* lo, std::int64_t* count) const {
    for (int b = 0; b < 3; ++b) lo[b] = 0, count[b] = g_.n[b];
    lo[a] = from;
    count[a] = w_;
  }

  // Along axis a: the two slabs sent, the two halos received, the neighbours.
  struct AxisPlan {
    std::int64_t lo[2][3], cnt[2][3];    // [0]: toward −, [1]: toward +
    std::int64_t rlo[2][3], rcnt[2][3];  // [0]: the − halo, [1]: the + halo
    std::int64_t count;
    int peer[2];
  };
  AxisPlan plan(int a) const {
    const std::int64_t w = w_, n = g_.n[a];
    AxisPlan p;
    slab(a, g_.halo_lo[a], p.lo[0], p.cnt[0]);
    slab(a, n - g_.halo_hi[a] - w, p.lo[1], p.cnt[1]);
    slab(a, g_.halo_lo[a] - w, p.rlo[0], p.rcnt[0]);
    slab(a, n - g_.halo_hi[a], p.rlo[1], p.rcnt[1]);
    p.count = p.cnt[0][0] * p.cnt[0][1] * p.cnt[0][2];
    p.peer[0] = d_.neighbour(a, -1);
    p.peer[1] = d_.neighbour(a, +1);
    return p;
  }

  // Posts the receives of axis a's halos and sends its faces (NCCL: the
  // whole exchange of the axis, queued on the device's stream, no host wait).
  void begin_axis(Field<T>& f, int a) {
    const AxisPlan p = plan(a);
    if (mode_ == HaloMode::Nccl) {
      for (int s = 0; s < 2; ++s)
        if (p.peer[s] >= 0) be_.pack(f, p.lo[s], p.cnt[s], bufs_[s]);
      be_.peer_exchange(&bufs_[0], &bufs_[2], p.peer, p.count);
      for (int s = 0; s < 2; ++s)
        if (p.peer[s] >= 0) be_.unpack(f, p.rlo[s], p.rcnt[s], bufs_[2 + s]);
      return;
    }
    const int bytes = int(p.count * std::int64_t(sizeof(T)));
    // Tags by direction of travel: with two ranks on a periodic axis both
    // neighbours are the same rank.
    const int tag_minus = 2 * a, tag_plus = 2 * a + 1;
    nreq_ = 0;
    for (int s = 0; s < 2; ++s)
      if (p.peer[s] >= 0)
        MPI_Irecv(recv_ptr(s), bytes, MPI_BYTE, p.peer[s], s == 0 ? tag_plus : tag_minus,
                  MPI_COMM_WORLD, &req_[nreq_++]);
    for (int s = 0; s < 2; ++s)
      if (p.peer[s] >= 0) be_.pack(f, p.lo[s], p.cnt[s], bufs_[s]);
    if (staged_) {
      for (int s = 0; s < 2; ++s)
        if (p.peer[s] >= 0) download_prefix(bufs_[s], host_[s].data(), p.count);
    } else {
      be_.synchronize();  // the packed slabs are in memory before MPI reads them
    }
    for (int s = 0; s < 2; ++s)
      if (p.peer[s] >= 0)
        MPI_Isend(send_ptr(s), bytes, MPI_BYTE, p.peer[s], s == 0 ? tag_minus : tag_plus,
                  MPI_COMM_WORLD, &req_[nreq_++]);
  }

  // Waits for axis a's messages and unpacks its halos (NCCL: nothing left).
  void end_axis(Field<T>& f, int a) {
    if (mode_ == HaloMode::Nccl) return;
    const AxisPlan p = plan(a);
    MPI_Waitall(nreq_, req_, MPI_STATUSES_IGNORE);
    nreq_ = 0;
    for (int s = 0; s < 2; ++s) {
      if (p.peer[s] < 0) continue;
      if (staged_) upload_prefix(host_[2 + s].data(), bufs_[2 + s], p.count);
      be_.unpack(f, p.rlo[s], p.rcnt[s], bufs_[2 + s]);
    }
  }

  void* send_ptr(int s) { return staged_ ? (void*)host_[s].data() : (void*)bufs_[s].data(); }
  void* recv_ptr(int s) {
    return staged_ ? (void*)host_[2 + s].data() : (void*)bufs_[2 + s].data();
  }
  // download/upload move whole fields; the staging buffers are as large.
  void download_prefix(const Field<T>& buf, T* host, std::int64_t) { be_.download(buf, host); }
  void upload_prefix(const T* host, Field<T>& buf, std::int64_t) { be_.upload(host, buf); }

  const Decomp& d_;
  Backend<T>& be_;
  Grid g_;
  Field<T> bufs_[4];  // send −, send +, receive −, receive +
  std::vector<T> host_[4];
  HaloMode mode_ = HaloMode::Host;
  std::string how_;
  bool staged_ = false;
  MPI_Request req_[4];  // the messages of the axis begun
  int nreq_ = 0;
  int first_ = 0;  // the axis start() began
  int w_ = 1;      // the layers the exchange in progress moves
};

template <class T>
class DistributedBackend final : public Backend<T> {
 public:
  DistributedBackend(std::unique_ptr<Backend<T>> inner, const Decomp& d)
      : in_(std::move(inner)), d_(d), halo_(d_, *in_), core_(d.core_box()) {
    parity_ = 0;
    const Grid g = d.local_grid();
    for (int a = 0; a < 3; ++a) parity_ += int(g.offset[a] & 1);
    parity_ &= 1;
    const bool wanted = halo_overlap_requested(in_->is_gpu());
    overlap_ = wanted && d.overlap_fits();
    how_ = halo_.how() + (overlap_ ? ", overlapped with the interior update"
                          : wanted ? ", after each step (blocks under 3 halo widths thick)"
                                   : ", after each step (GRIDFORGE_HALO_OVERLAP=0)");
  }

  std::string name() const override { return in_->name(); }
  bool is_gpu() const override { return in_->is_gpu(); }
  Backend<T>& rank_backend() override { return *in_; }
  const std::string& halo_how() const { return how_; }
  MemoryResource& memory() override { return in_->memory(); }
  std::unique_ptr<Timer> make_timer() override { return in_->make_timer(); }
  void synchronize() override { in_->synchronize(); }

  void upload(const T* host, Field<T>& f) override {
    in_->upload(host, f);
    refresh(f, d_.halo);  // the whole halo: a pass of several steps reads it all
    if (d_.time_block > 1) deep_[f.data()] = d_.halo;
  }
  void download(const Field<T>& f, T* host) override { in_->download(f, host); }

  void heat_step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    one_step(
        kHeat, in, out, [&](StepPart p) { return in_->heat_step_part(a, in, out, core_, p); },
        [&] { in_->heat_step(a, in, out); });
  }
  // Temporal blocking over ranks: the inner backend's pass of k steps over
  // the padded block, then the k·radius layers of the halo next to the owned
  // points refreshed. The points the pass computes in the halo read the
  // halo's outer edge, where neighbours are missing, and are wrong only
  // within k·radius layers of it (grid/decomp.hpp), never the owned ones,
  // provided the halo of `in` held the neighbours' values k·radius deep:
  // after a single step only (k − 1)·radius layers do, and the pass first
  // refreshes `in` (its halo only; the owned points are left as they are).
  // Passes up to the halo's depth (Decomp::time_block), the same on every rank.
  int heat_time_block(const HeatArgs<T>& a, int asked) const override {
    return blocked_depth(in_->heat_time_block(pass_args(a), asked));
  }
  void heat_steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    blocked(k, in, out, [&] { in_->heat_steps(pass_args(a), k, in, out); });
  }
  int stencil_time_block(const StencilArgs<T>& a, int asked) const override {
    return blocked_depth(in_->stencil_time_block(pass_args(a), asked));
  }
  void stencil_steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    blocked(k, in, out, [&] { in_->stencil_steps(pass_args(a), k, in, out); });
  }

  void set_stencil_taps(const std::vector<StencilTap<T>>& taps) override {
    in_->set_stencil_taps(taps);
  }
  void apply_stencil(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    one_step(
        kStencil, in, out, [&](StepPart p) { return in_->stencil_part(a, in, out, core_, p); },
        [&] { in_->apply_stencil(a, in, out); });
  }

  FieldStats stats(const Field<T>& f) override {
    FieldStats s = in_->stats(f);
    double mm[2] = {s.min, -s.max};
    MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    double sc[3] = {s.sum, double(s.count), double(s.nonfinite)};
    MPI_Allreduce(MPI_IN_PLACE, sc, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    s.min = mm[0];
    s.max = -mm[1];
    s.sum = sc[0];
    s.count = std::int64_t(sc[1]);
    s.nonfinite = std::int64_t(sc[2]);
    s.mean = s.count > 0 ? s.sum / sc[1] : 0.0;
    return s;
  }

  void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    one_step(
        kJacobi, in, out, [&](StepPart p) { return in_->jacobi_sweep_part(a, in, out, core_, p); },
        [&] { in_->jacobi_sweep(a, in, out); });
  }
  int jacobi_time_block(const LaplaceArgs<T>& a, int asked) const override {
    return blocked_depth(in_->jacobi_time_block(pass_args(a), asked));
  }
  void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    blocked(k, in, out, [&] { in_->jacobi_steps(pass_args(a), k, in, out); });
  }
  // Colour by the parity of the global index: local (i+j+k) plus the offsets'.
  void sor_sweep(const LaplaceArgs<T>& a, Field<T>& u, int colour) override {
    in_->sor_sweep(a, u, colour ^ parity_);
    refresh(u);
  }
  double residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>* r) override {
    const double s = in_->residual(a, u, r);
    if (r) refresh(*r);
    return mpi::sum(s);
  }
  void set_operator(const LaplaceArgs<T>& a) override { in_->set_operator(a); }
  void spmv(const Field<T>& x, Field<T>& y) override {
    in_->spmv(x, y);
    refresh(y);
  }
  double dot(const Field<T>& x, const Field<T>& y) override { return mpi::sum(in_->dot(x, y)); }
  void axpby(T a, const Field<T>& x, T b, Field<T>& y) override { in_->axpby(a, x, b, y); }
  double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                   Field<T>& r) override {
    return mpi::sum(in_->cg_update(alpha, p, q, u, r));
  }
  void add_constant(Field<T>& u, T c) override { in_->add_constant(u, c); }
  double fft_poisson(const LaplaceArgs<T>&, const Field<T>&, Field<T>&) override {
    throw std::logic_error("fft_poisson on several ranks (decompose() refuses it)");
  }
  void prepare_fft(const LaplaceArgs<T>&) override {
    throw std::logic_error("prepare_fft on several ranks (decompose() refuses it)");
  }
  void raymarch(const RayArgs<T>&, const Field<T>&, Field<float>&) override {
    throw std::logic_error("raymarch on several ranks (decompose() refuses it)");
  }
  void download_image(const Field<float>&, float*) override {
    throw std::logic_error("download_image on several ranks (decompose() refuses it)");
  }
  void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
            Field<T>& buf) override {
    in_->pack(f, lo, count, buf);
  }
  void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
              const Field<T>& buf) override {
    in_->unpack(f, lo, count, buf);
  }
  void copy(const Field<T>& src, Field<T>& dst) override { in_->copy(src, dst); }
  void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) override {
    in_->triad(a, b, s, c);
  }

 private:
  // Fields of the rank-local grid only: 1D scratch (halo buffers) has no halo.
  // The w layers of f's halo next to the owned points (a step: the radius).
  void refresh(Field<T>& f, int w = 0) {
    if (f.grid().has_halo()) halo_.exchange(f, w > 0 ? w : d_.radius);
  }

  // The args of a blocked pass over the padded block: a shared face marked
  // periodic (decomp.hpp's local_case) whose opposite face is a wall becomes
  // a mirror (Neumann, no gradient), for the passes take an axis as periodic
  // or not as a whole (its lo face's type) and would wrap past the wall; what
  // the mirror gives is wrong only where the halo's outer edge is anyway.
  template <class Args>
  static Args pass_args(Args a) {
    for (auto& b : a.bc) {
      const bool lo = b.lo == BcType::Periodic, hi = b.hi == BcType::Periodic;
      if (lo && !hi) b.lo = BcType::Neumann, b.ghost_lo = T(0);
      if (hi && !lo) b.hi = BcType::Neumann, b.ghost_hi = T(0);
    }
    return a;
  }
  // The steps a pass may take: at most the halo's depth, and the fewest any
  // rank's backend takes (all ranks exchange after the same steps).
  int blocked_depth(int k) const {
    k = std::min(k, d_.time_block);
    int mine = k;
    MPI_Allreduce(&mine, &k, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return k;
  }

  // The layers of a field's halo that hold the neighbours' values (its
  // depth): the whole halo after an upload; after k steps (a pass, or k = 1)
  // from a field of depth v, the k·radius layers refreshed or the v − k·radius
  // layers computed from valid ones, whichever is more. Fields not seen
  // here (written by other operations) hold the radius, as every step leaves.
  int depth(const Field<T>& f) const {
    const auto it = deep_.find(f.data());
    return it == deep_.end() ? d_.radius : it->second;
  }
  void stepped(const Field<T>& in, const Field<T>& out, int k) {
    if (d_.time_block == 1) return;
    deep_[out.data()] = std::max(k * d_.radius, depth(in) - k * d_.radius);
  }
  enum Kind { kHeat, kJacobi, kStencil };
  // One step (heat, Jacobi, stencil): split for the overlap where it applies
  // (part(p) on the inner backend), else whole(), then out's halo refreshed.
  template <class Part, class Whole>
  void one_step(Kind kind, const Field<T>& in, Field<T>& out, Part&& part, Whole&& whole) {
    if (!overlapped(out, kind, part)) {
      whole();
      refresh(out);
    }
    stepped(in, out, 1);
  }
  // A pass of k steps, pass() on the inner backend (see heat_steps).
  template <class Pass>
  void blocked(int k, const Field<T>& in, Field<T>& out, Pass&& pass) {
    deepen(in, k);
    pass();
    refresh(out, k * d_.radius);
    stepped(in, out, k);
  }
  // Refreshes the halo of `in` k·radius deep before a pass of k steps that
  // reads it, when it is not (MPI writes the halo only, not the values).
  void deepen(const Field<T>& in, int k) {
    if (depth(in) >= k * d_.radius) return;
    Field<T>& f = const_cast<Field<T>&>(in);
    refresh(f, k * d_.radius);
    deep_[f.data()] = k * d_.radius;
  }

  // The overlapped step (NVIDIA's mpi_overlap): the shell (the faces the
  // neighbours need, the halo, whatever lies outside the core) first, then
  // the exchange of out's halos beside the core's update. `part(p)` runs
  // part p of the step on the inner backend; false when it does not split
  // the step (then nothing is done here either). On the GPU the shell and
  // the exchange go on the halo stream (halo_fork) and the core on the
  // compute stream, queued before the exchange, whose MPI calls may make
  // the host wait; on the CPU the core is computed in the call, so the first
  // axis's messages are sent before it and received after it.
  template <class Part>
  bool overlapped(Field<T>& out, Kind kind, Part&& part) {
    if (!overlap_ || !out.grid().has_halo()) return false;
    in_->halo_fork();
    const bool split = part(StepPart::Shell);
    note(kind, split);
    if (!split) {
      in_->halo_join();
      return false;
    }
    const bool queued = in_->is_gpu();
    if (!queued) halo_.start(out, d_.radius);
    part(StepPart::Core);
    if (queued) halo_.start(out, d_.radius);
    halo_.finish(out);
    in_->halo_join();
    return true;
  }
  // Says once per kind of step (rank 0's log) whether it overlaps.
  void note(Kind kind, bool split) {
    if (noted_[kind]) return;
    noted_[kind] = true;
    static const char* what[] = {"explicit heat steps", "Jacobi sweeps", "stencil steps"};
    if (split)
      spdlog::info("mpi: {} overlap the halo exchange with the interior update", what[kind]);
    else
      spdlog::info("mpi: {} exchange the halos after the whole step: {} does not split it here{}",
                   what[kind], in_->name(),
                   in_->is_gpu() ? " (the overlap needs the vectorised marches: 2D or 3D rows of "
                                   "whole 16-byte vectors; for stencils a radius-1 preset)"
                                 : "");
  }

  std::unique_ptr<Backend<T>> in_;
  Decomp d_;
  HaloExchange<T> halo_;
  int parity_ = 0;
  Box core_;
  bool overlap_ = false;
  bool noted_[3] = {false, false, false};
  std::unordered_map<const void*, int> deep_;  // depth(): fields by their memory
  std::string how_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_distributed_backend(std::unique_ptr<Backend<T>> inner,
                                                     const Decomp& d) {
  if (d.nranks == 1) return inner;
  return std::make_unique<DistributedBackend<T>>(std::move(inner), d);
}

template <class T>
std::string halo_transport(Backend<T>& be) {
  const auto* dist = dynamic_cast<const DistributedBackend<T>*>(&be);
  return dist ? dist->halo_how() : std::string("no exchange (one rank)");
}

#else

template <class T>
std::string halo_transport(Backend<T>&) {
  return "no exchange (one rank)";
}

template <class T>
std::unique_ptr<Backend<T>> make_distributed_backend(std::unique_ptr<Backend<T>> inner,
                                                     const Decomp& d) {
  if (d.nranks != 1) throw std::logic_error("several ranks in a build without MPI");
  return inner;
}

#endif

namespace {

// Copies box [lo, lo + cnt) between an array of dims n and a packed buffer.
[[maybe_unused]] void copy_block(unsigned char* arr, const std::array<std::int64_t, 3>& n,
                const std::array<std::int64_t, 3>& lo, const std::array<std::int64_t, 3>& cnt,
                unsigned char* buf, std::size_t elem, bool to_buf) {
  const std::size_t row = std::size_t(cnt[0]) * elem;
  for (std::int64_t k = 0; k < cnt[2]; ++k)
    for (std::int64_t j = 0; j < cnt[1]; ++j) {
      unsigned char* a = arr + std::size_t(lo[0] + n[0] * ((lo[1] + j) + n[1] * (lo[2] + k))) * elem;
      unsigned char* b = buf + std::size_t(j + cnt[1] * k) * row;
      if (to_buf)
        std::memcpy(b, a, row);
      else
        std::memcpy(a, b, row);
    }
}

}  // namespace

std::vector<unsigned char> gather_global(const Decomp& d, const std::vector<unsigned char>& local,
                                         std::size_t elem) {
  if (d.nranks == 1) return local;
#if defined(GRIDFORGE_HAVE_MPI)
  const Grid lg = d.local_grid();
  const auto cnt = d.count_of(d.rank);
  std::vector<unsigned char> mine(std::size_t(cnt[0] * cnt[1] * cnt[2]) * elem);
  copy_block(const_cast<unsigned char*>(local.data()), lg.n, lg.halo_lo, cnt, mine.data(), elem,
             true);
  // Byte counts and offsets of 64 bits: a block, and the whole field, may
  // pass 2 GiB (a 1024³ float32 field is 4 GiB), more than MPI_Gatherv's int
  // counts hold; so the blocks travel to rank 0 in messages of at most 1 GiB.
  std::vector<std::size_t> counts(std::size_t(d.nranks)), displs(std::size_t(d.nranks));
  std::size_t at = 0;
  for (int r = 0; r < d.nranks; ++r) {
    const auto c = d.count_of(r);
    counts[std::size_t(r)] = elem * std::size_t(c[0] * c[1] * c[2]);
    displs[std::size_t(r)] = at;
    at += counts[std::size_t(r)];
  }
  constexpr std::size_t kPiece = std::size_t(1) << 30;
  constexpr int kTag = 77;
  if (d.rank != 0) {
    for (std::size_t off = 0; off < mine.size(); off += kPiece)
      MPI_Send(mine.data() + off, int(std::min(kPiece, mine.size() - off)), MPI_BYTE, 0, kTag,
               MPI_COMM_WORLD);
    return {};
  }
  std::vector<unsigned char> packed(at);
  std::memcpy(packed.data(), mine.data(), mine.size());
  for (int r = 1; r < d.nranks; ++r)
    for (std::size_t off = 0; off < counts[std::size_t(r)]; off += kPiece)
      MPI_Recv(packed.data() + displs[std::size_t(r)] + off,
               int(std::min(kPiece, counts[std::size_t(r)] - off)), MPI_BYTE, r, kTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<unsigned char> global(std::size_t(d.global.size()) * elem);
  for (int r = 0; r < d.nranks; ++r)
    copy_block(global.data(), d.global.n, d.start_of(r), d.count_of(r), packed.data() + displs[r],
               elem, false);
  return global;
#else
  (void)local, (void)elem;
  throw std::logic_error("several ranks in a build without MPI");
#endif
}

std::vector<unsigned char> local_block(const Decomp& d, const std::vector<unsigned char>& global,
                                       std::size_t elem) {
  if (d.nranks == 1) return global;
  const Grid lg = d.local_grid();
  const Grid& gg = d.global;
  std::vector<unsigned char> out(std::size_t(lg.size()) * elem);
  auto wrap = [&](int a, std::int64_t i) {
    return ((i + lg.offset[a]) % gg.n[a] + gg.n[a]) % gg.n[a];
  };
  for (std::int64_t k = 0; k < lg.n[2]; ++k)
    for (std::int64_t j = 0; j < lg.n[1]; ++j)
      for (std::int64_t i = 0; i < lg.n[0]; ++i)
        std::memcpy(out.data() + std::size_t(lg.index(i, j, k)) * elem,
                    global.data() + std::size_t(gg.index(wrap(0, i), wrap(1, j), wrap(2, k))) * elem,
                    elem);
  return out;
}

template std::string halo_transport<float>(Backend<float>&);
template std::string halo_transport<double>(Backend<double>&);
template std::unique_ptr<Backend<float>> make_distributed_backend<float>(
    std::unique_ptr<Backend<float>>, const Decomp&);
template std::unique_ptr<Backend<double>> make_distributed_backend<double>(
    std::unique_ptr<Backend<double>>, const Decomp&);

}  // namespace gf
