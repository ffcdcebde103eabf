// The distributed backend and the halo exchange (dist_backend.hpp).
#include "kernels/dist/dist_backend.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <set>
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

// Sums over the owned points, added over the ranks; the rest as the rank's own.
template <class T>
class DistributedVector final : public VectorOps<T> {
 public:
  explicit DistributedVector(VectorOps<T>& in) : in_(in) {}
  FieldStats stats(const Field<T>& f) override {
    FieldStats s = in_.stats(f);
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
  double dot(const Field<T>& x, const Field<T>& y) override { return mpi::sum(in_.dot(x, y)); }
  void axpby(T a, const Field<T>& x, T b, Field<T>& y) override { in_.axpby(a, x, b, y); }
  double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                   Field<T>& r) override {
    return mpi::sum(in_.cg_update(alpha, p, q, u, r));
  }
  void add_constant(Field<T>& u, T c) override { in_.add_constant(u, c); }
  void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) override {
    in_.triad(a, b, s, c);
  }

 private:
  VectorOps<T>& in_;
};

}  // namespace

// The exchange and what the backend keeps about it: whether steps overlap
// it, which kinds of step have said so in the log, and how deep each
// field's halo holds the neighbours' values.
template <class T>
struct DistributedBackend<T>::Exchange {
  Exchange(const Decomp& d, Backend<T>& be) : halo(d, be) {}
  HaloExchange<T> halo;
  bool overlap = false;
  std::set<std::string> noted;
  // The layers of a field's halo that hold the neighbours' values (its
  // depth), by the field's memory: the whole halo after an upload; after k
  // steps (a pass, or k = 1) from a field of depth v, the k·radius layers
  // refreshed or the v − k·radius layers computed from valid ones, whichever
  // is more. Fields not seen here (written by other operations) hold the
  // radius, as every step leaves.
  std::unordered_map<const void*, int> deep;
  int depth(const Field<T>& f, int radius) const {
    const auto it = deep.find(f.data());
    return it == deep.end() ? radius : it->second;
  }
};

template <class T>
DistributedBackend<T>::DistributedBackend(std::unique_ptr<Backend<T>> inner, const Decomp& d)
    : in_(std::move(inner)), d_(d), core_(d.core_box()) {
  x_ = std::make_unique<Exchange>(d_, *in_);
  vec_ = std::make_unique<DistributedVector<T>>(in_->vec());
  const Grid g = d.local_grid();
  for (int a = 0; a < 3; ++a) parity_ += int(g.offset[a] & 1);
  parity_ &= 1;
  const bool wanted = halo_overlap_requested(in_->is_gpu());
  x_->overlap = wanted && d.overlap_fits();
  how_ = x_->halo.how() + (x_->overlap ? ", overlapped with the interior update"
                           : wanted    ? ", after each step (blocks under 3 halo widths thick)"
                                       : ", after each step (GRIDFORGE_HALO_OVERLAP=0)");
}

template <class T>
DistributedBackend<T>::~DistributedBackend() = default;

template <class T>
void DistributedBackend<T>::upload(const T* host, Field<T>& f) {
  in_->upload(host, f);
  refresh_whole(f);
}

template <class T>
void DistributedBackend<T>::refresh_whole(Field<T>& f) {
  refresh(f, d_.halo);
  if (d_.time_block > 1) x_->deep[f.data()] = d_.halo;
}

template <class T>
void DistributedBackend<T>::refresh(Field<T>& f, int w) {
  if (f.grid().has_halo()) x_->halo.exchange(f, w > 0 ? w : d_.radius);
}

template <class T>
int DistributedBackend<T>::blocked_depth(int k) const {
  k = std::min(k, d_.time_block);
  int mine = k;
  MPI_Allreduce(&mine, &k, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return k;
}

template <class T>
void DistributedBackend<T>::blocked(int k, const Field<T>& in, Field<T>& out,
                                    const std::function<void()>& pass) {
  const int r = d_.radius;
  if (x_->depth(in, r) < k * r) {  // MPI writes the halo only, not the values
    Field<T>& f = const_cast<Field<T>&>(in);
    refresh(f, k * r);
    x_->deep[f.data()] = k * r;
  }
  pass();
  refresh(out, k * r);
  if (d_.time_block > 1) x_->deep[out.data()] = std::max(k * r, x_->depth(in, r) - k * r);
}

// The overlapped step (NVIDIA's mpi_overlap): the shell (the faces the
// neighbours need, the halo, whatever lies outside the core) first, then the
// exchange of out's halos beside the core's update. On the GPU the shell
// and the exchange go on the halo stream (halo_fork) and the core on the
// compute stream, queued before the exchange, whose MPI calls may make the
// host wait; on the CPU the core is computed in the call, so the first
// axis's messages are sent before it and received after it.
template <class T>
void DistributedBackend<T>::one_step(const char* what, const Field<T>& in, Field<T>& out,
                                     const std::function<bool(StepPart)>& part,
                                     const std::function<void()>& whole) {
  bool overlapped = false;
  if (x_->overlap && out.grid().has_halo()) {
    in_->halo_fork();
    const bool split = part(StepPart::Shell);
    if (x_->noted.insert(what).second) {  // said once per kind of step (rank 0's log)
      if (split)
        spdlog::info("mpi: {} overlap the halo exchange with the interior update", what);
      else
        spdlog::info("mpi: {} exchange the halos after the whole step: {} does not split it "
                     "here{}",
                     what, in_->name(),
                     in_->is_gpu() ? " (the overlap needs the vectorised marches: 2D or 3D rows "
                                     "of whole 16-byte vectors; for stencils a radius-1 preset)"
                                   : "");
    }
    if (split) {
      const bool queued = in_->is_gpu();
      if (!queued) x_->halo.start(out, d_.radius);
      part(StepPart::Core);
      if (queued) x_->halo.start(out, d_.radius);
      x_->halo.finish(out);
      overlapped = true;
    }
    in_->halo_join();
  }
  if (!overlapped) {
    whole();
    refresh(out);
  }
  if (d_.time_block > 1)
    x_->deep[out.data()] = std::max(d_.radius, x_->depth(in, d_.radius) - d_.radius);
}

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

#else  // no MPI: one rank only; the class is never made

template <class T>
struct DistributedBackend<T>::Exchange {};

template <class T>
DistributedBackend<T>::DistributedBackend(std::unique_ptr<Backend<T>>, const Decomp&) {
  throw std::logic_error("several ranks in a build without MPI");
}
template <class T>
DistributedBackend<T>::~DistributedBackend() = default;
template <class T>
void DistributedBackend<T>::upload(const T*, Field<T>&) {}
template <class T>
void DistributedBackend<T>::refresh_whole(Field<T>&) {}
template <class T>
void DistributedBackend<T>::refresh(Field<T>&, int) {}
template <class T>
int DistributedBackend<T>::blocked_depth(int k) const {
  return k;
}
template <class T>
void DistributedBackend<T>::blocked(int, const Field<T>&, Field<T>&,
                                    const std::function<void()>&) {}
template <class T>
void DistributedBackend<T>::one_step(const char*, const Field<T>&, Field<T>&,
                                     const std::function<bool(StepPart)>&,
                                     const std::function<void()>&) {}

template <class T>
std::unique_ptr<Backend<T>> make_distributed_backend(std::unique_ptr<Backend<T>> inner,
                                                     const Decomp& d) {
  if (d.nranks != 1) throw std::logic_error("several ranks in a build without MPI");
  return inner;
}

template <class T>
std::string halo_transport(Backend<T>&) {
  return "no exchange (one rank)";
}

#endif

template class DistributedBackend<float>;
template class DistributedBackend<double>;
template std::string halo_transport<float>(Backend<float>&);
template std::string halo_transport<double>(Backend<double>&);
template std::unique_ptr<Backend<float>> make_distributed_backend<float>(
    std::unique_ptr<Backend<float>>, const Decomp&);
template std::unique_ptr<Backend<double>> make_distributed_backend<double>(
    std::unique_ptr<Backend<double>>, const Decomp&);

}  // namespace gf
