// The CUDA device core (cuda_backend.cuh) and the vector operations on its
// memory (kernels/vector.hpp): CUB reductions, the halo exchange's packing
// kernels and NCCL, pinned output snapshots.
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/rgb8.hpp"
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/cuda/halo_kernels.cuh"
#include "kernels/cuda/nccl_peer.cuh"
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/device.hpp"
#include "kernels/ops/stats.hpp"

namespace gf {
namespace {

std::string gib(std::size_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", double(b) / (1024.0 * 1024.0 * 1024.0));
  return s;
}

class DeviceMemory final : public MemoryResource {
 public:
  explicit DeviceMemory(std::string label) : label_(std::move(label)) {}
  void* allocate(std::size_t bytes, const std::string& what) override {
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
      cudaGetLastError();
      std::size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw DeviceError("out of device memory allocating " + what + " (" + gib(bytes) + ") on " +
                        label_ + ": " + gib(free_b) + " free of " + gib(total_b) +
                        "; use a smaller grid, float32, or --device cpu");
    }
    count_alloc(bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    cudaFree(p);
    count_free(bytes);
  }
  bool host_accessible() const override { return false; }

 private:
  std::string label_;  // "NVIDIA H200 (GPU 0)", for messages
};

class EventTimer final : public Timer {
 public:
  explicit EventTimer(cudaStream_t s) : stream_(s) {
    GF_CUDA_CHECK(cudaEventCreate(&a_));
    GF_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~EventTimer() override {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  void start() override { GF_CUDA_CHECK(cudaEventRecord(a_, stream_)); }
  double stop_ms() override {
    GF_CUDA_CHECK(cudaEventRecord(b_, stream_));
    GF_CUDA_CHECK(cudaEventSynchronize(b_));
    float ms = 0;
    GF_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
    return ms;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t a_{}, b_{};
};

// Copies between a field's layout and the dense one (rows sy values apart
// against n[0]; Layout::aligned_rows pads rows only, so a field is rows()
// rows at even steps): one cudaMemcpy2D, a plain copy when both are dense.
template <class T>
void copy_rows(T* dst, std::int64_t dpitch, const T* src, std::int64_t spitch, const Layout& l,
               cudaMemcpyKind kind, cudaStream_t s) {
  if (dpitch == spitch) {
    GF_CUDA_CHECK(cudaMemcpyAsync(dst, src, std::size_t(l.rows() * dpitch) * sizeof(T), kind, s));
    return;
  }
  GF_CUDA_CHECK(cudaMemcpy2DAsync(dst, std::size_t(dpitch) * sizeof(T), src,
                                  std::size_t(spitch) * sizeof(T), std::size_t(l.n[0]) * sizeof(T),
                                  std::size_t(l.rows()), kind, s));
}

// Output snapshots (backend.hpp): the field is copied into a spare device
// buffer on the compute stream (a device-to-device copy: about 0.2 ms for
// 512³ float32), then downloaded from there into pinned host memory on a
// stream of its own, so the steps that follow run while it travels. The
// spare is reused: the next snapshot's copy into it waits, on the GPU, for
// the last download out of it. The spare has the fields' layout; the host
// copies are dense (rows of a padded layout lose their padding on the way).
template <class T>
class CudaSnapshots final : public Snapshots<T> {
 public:
  CudaSnapshots(int device, MemoryResource& mem, cudaStream_t compute, const Layout& l,
                int slots)
      : device_(device), compute_(compute), layout_(l), bytes_(std::size_t(l.span()) * sizeof(T)) {
    const std::size_t bytes = std::size_t(l.size()) * sizeof(T);  // each host copy
    spare_.reset(mem, bytes_, "the spare field for overlapped outputs");
    host_.assign(std::size_t(slots), nullptr);
    done_.assign(std::size_t(slots), nullptr);
    try {
      GF_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
      GF_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
      for (int s = 0; s < slots; ++s) {
        GF_CUDA_CHECK(cudaEventCreateWithFlags(&done_[std::size_t(s)], cudaEventDisableTiming));
        GF_CUDA_CHECK(cudaMallocHost(&host_[std::size_t(s)], bytes ? bytes : 1));
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaSnapshots() override { release(); }

  int slots() const override { return int(host_.size()); }
  void take(const Field<T>& f, int s) override {
    // the grid's field in any layout that fits the spare (dense or padded rows)
    const Layout& l = f.layout();
    if (l.size() != layout_.size() || f.bytes() > bytes_)
      throw DeviceError("snapshot of a field of another grid");
    if (last_ >= 0) GF_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_[std::size_t(last_)], 0));
    GF_CUDA_CHECK(
        cudaMemcpyAsync(spare_.get(), f.data(), f.bytes(), cudaMemcpyDeviceToDevice, compute_));
    GF_CUDA_CHECK(cudaEventRecord(copied_, compute_));
    GF_CUDA_CHECK(cudaStreamWaitEvent(copy_, copied_, 0));
    copy_rows(static_cast<T*>(host_[std::size_t(s)]), l.n[0], spare_.as<const T>(), l.sy, l,
              cudaMemcpyDeviceToHost, copy_);
    GF_CUDA_CHECK(cudaEventRecord(done_[std::size_t(s)], copy_));
    last_ = s;
  }
  void wait(int s) override {
    GF_CUDA_CHECK(cudaSetDevice(device_));  // the writer's thread
    GF_CUDA_CHECK(cudaEventSynchronize(done_[std::size_t(s)]));
  }
  const T* host(int s) const override { return static_cast<const T*>(host_[std::size_t(s)]); }

 private:
  void release() noexcept {
    if (copy_) cudaStreamSynchronize(copy_);
    for (void* p : host_)
      if (p) cudaFreeHost(p);
    for (cudaEvent_t e : done_)
      if (e) cudaEventDestroy(e);
    if (copied_) cudaEventDestroy(copied_);
    if (copy_) cudaStreamDestroy(copy_);
    host_.clear();
    done_.clear();
    copied_ = nullptr;
    copy_ = nullptr;
    spare_.release();
  }

  int device_;
  cudaStream_t compute_;
  Layout layout_;
  std::size_t bytes_;  // the spare's
  DeviceBuffer spare_;
  cudaStream_t copy_ = nullptr;
  cudaEvent_t copied_ = nullptr;
  std::vector<void*> host_;
  std::vector<cudaEvent_t> done_;
  int last_ = -1;  // the slot of the last download out of the spare
};

template <class T>
__global__ void __launch_bounds__(256) axpby_kernel(T a, const T* __restrict__ x, T b,
                                                    T* __restrict__ y, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = b == T(0) ? a * x[i] : a * x[i] + b * y[i];  // y is not read when b is 0
}

// u += c at every point of a span of rows of sy values, nx of them points
// (padded rows: the padding stays zero, as every kernel leaves it).
template <class T>
__global__ void __launch_bounds__(256) add_constant_kernel(T* u, T c, std::int64_t n,
                                                           std::int64_t nx, std::int64_t sy) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += stride)
    if (sy == nx || i % sy < nx) u[i] += c;
}

template <class T>
struct DotFn {
  const T* x;
  const T* y;
  __device__ double operator()(std::int64_t i) const { return double(x[i]) * double(y[i]); }
};

template <class T>
struct CgUpdateFn {
  T alpha;
  const T* p;
  const T* q;
  T* u;
  T* r;
  __device__ double operator()(std::int64_t i) const {
    u[i] += alpha * p[i];
    const T rn = r[i] - alpha * q[i];
    r[i] = rn;
    return double(rn) * double(rn);
  }
};

// The vector operations on the GPU: grid-stride kernels and fused
// reductions (CudaBackend::reduce); on a rank-local grid the sums take the
// owned points only (OwnedOnly).
template <class T>
class CudaVector final : public VectorOps<T> {
 public:
  explicit CudaVector(CudaBackend<T>& be) : be_(be) {}

  FieldStats stats(const Field<T>& f) override {
    const OwnedMask mask = OwnedMask::of(f.grid(), f.layout());
    if (!mask.all) return owned_stats(f, mask);  // a rank's block, or padded rows
    const StatsAcc init{INFINITY, -INFINITY, 0.0, 0ull};
    std::size_t temp = 0;
    StatsAcc* out = nullptr;  // the size query touches no memory
    const cudaStream_t s = be_.stream();
    GF_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, temp, f.data(), out, f.size(),
                                                     StatsCombine{}, StatsOf{}, init, s));
    char* base = static_cast<char*>(be_.scratch(256 + temp));
    out = reinterpret_cast<StatsAcc*>(base);
    GF_CUDA_CHECK(cub::DeviceReduce::TransformReduce(base + 256, temp, f.data(), out, f.size(),
                                                     StatsCombine{}, StatsOf{}, init, s));
    auto* host = static_cast<StatsAcc*>(be_.host_readback());
    GF_CUDA_CHECK(cudaMemcpyAsync(host, out, sizeof(StatsAcc), cudaMemcpyDeviceToHost, s));
    GF_CUDA_CHECK(cudaStreamSynchronize(s));
    const StatsAcc& r = *host;
    FieldStats st;
    st.min = r.min;
    st.max = r.max;
    st.nonfinite = static_cast<std::int64_t>(r.nonfinite);
    const double finite = double(f.size()) - double(r.nonfinite);
    st.mean = finite > 0 ? r.sum / finite : 0.0;
    st.sum = r.sum;
    st.count = std::int64_t(finite);
    return st;
  }

  double dot(const Field<T>& x, const Field<T>& y) override {
    same_layout(x, y);
    return be_.reduce_field(DotFn<T>{x.data(), y.data()}, x.grid(), x.layout());
  }

  void axpby(T a, const Field<T>& x, T b, Field<T>& y) override {
    same_layout(x, y);
    const std::int64_t n = std::int64_t(x.size());
    axpby_kernel<T><<<flat_blocks(n), 256, 0, be_.stream()>>>(a, x.data(), b, y.data(), n);
    GF_CUDA_CHECK_LAUNCH();
  }

  double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                   Field<T>& r) override {
    same_layout(p, q), same_layout(p, u), same_layout(p, r);
    return be_.reduce_field(CgUpdateFn<T>{alpha, p.data(), q.data(), u.data(), r.data()},
                            p.grid(), p.layout());
  }

  void add_constant(Field<T>& u, T c) override {
    const std::int64_t n = std::int64_t(u.size());
    const Layout& l = u.layout();
    add_constant_kernel<T><<<flat_blocks(n), 256, 0, be_.stream()>>>(u.data(), c, n, l.n[0], l.sy);
    GF_CUDA_CHECK_LAUNCH();
  }

  void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) override {
    same_layout(a, b), same_layout(a, c);
    const std::int64_t n = std::int64_t(a.size());
    triad_kernel<T><<<flat_blocks(n), 256, 0, be_.stream()>>>(a.data(), b.data(), s, c.data(), n);
    GF_CUDA_CHECK_LAUNCH();
  }

 private:
  // The vector operations take one index for every field: one layout.
  static void same_layout(const Field<T>& a, const Field<T>& b) {
    if (!a.layout().same_as(b.layout()))
      throw std::logic_error("vector operation on fields of two layouts (dense and padded rows)");
  }

  // Block partials over the owned points (the points of a field with padded
  // rows, the owned box of a rank's block), combined here.
  FieldStats owned_stats(const Field<T>& f, const OwnedMask& mask) {
    const std::int64_t n = f.layout().size();
    const int blocks = int(std::max<std::int64_t>(1, std::min<std::int64_t>((n + 255) / 256, 1024)));
    auto* partials = static_cast<StatsAcc*>(be_.scratch(sizeof(StatsAcc) * std::size_t(blocks)));
    const cudaStream_t s = be_.stream();
    owned_stats_kernel<T><<<blocks, 256, 0, s>>>(f.data(), mask, f.grid().has_halo(), partials);
    GF_CUDA_CHECK_LAUNCH();
    std::vector<StatsAcc> host(static_cast<std::size_t>(blocks));
    GF_CUDA_CHECK(cudaMemcpyAsync(host.data(), partials, sizeof(StatsAcc) * host.size(),
                                  cudaMemcpyDeviceToHost, s));
    GF_CUDA_CHECK(cudaStreamSynchronize(s));
    StatsAcc r{INFINITY, -INFINITY, 0.0, 0ull};
    for (const StatsAcc& p : host) r = StatsCombine{}(r, p);
    FieldStats st;
    st.min = r.min;
    st.max = r.max;
    st.nonfinite = static_cast<std::int64_t>(r.nonfinite);
    st.count = f.grid().owned_size() - st.nonfinite;
    st.sum = r.sum;
    st.mean = st.count > 0 ? r.sum / double(st.count) : 0.0;
    return st;
  }

  CudaBackend<T>& be_;
};

std::string label_for(int device) {
  cudaDeviceProp p{};
  GF_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return std::string(p.name) + " (GPU " + std::to_string(device) + ")";
}

bool graphs_wanted() {
  const char* g = std::getenv("GRIDFORGE_CUDA_GRAPHS");
  return !(g && std::string(g) == "0");
}

}  // namespace

// What the header keeps out of sight: the allocator, NCCL, the halo stream.
template <class T>
struct CudaBackend<T>::Impl {
  explicit Impl(const std::string& label) : mem(label) {}
  DeviceMemory mem;
  ncclComm_t peer = nullptr;  // NCCL over the ranks' GPUs (GRIDFORGE_HALO=nccl)
  cudaStream_t side = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  // recorded(): each key's calls so far, and its graph (null until it is
  // recorded; failed: launched plainly from then on)
  struct Recording {
    int calls = 0;
    bool failed = false;
    cudaGraphExec_t exec = nullptr;
  };
  std::map<typename Backend<T>::RecordKey, Recording> recordings;
  void drop_recordings(std::uint64_t owner, bool all) {
    for (auto it = recordings.begin(); it != recordings.end();) {
      if (all || it->first.owner == owner) {
        if (it->second.exec) cudaGraphExecDestroy(it->second.exec);
        it = recordings.erase(it);
      } else {
        ++it;
      }
    }
  }
};

template <class T>
CudaBackend<T>::CudaBackend(int device, std::int64_t row_align)
    : label_(label_for(device)), device_(device), row_align_(row_align), impl_(std::make_unique<Impl>(label_)),
      graphs_(graphs_wanted()) {
  GF_CUDA_CHECK(cudaSetDevice(device));
  GF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  xs_ = stream_;
  GF_CUDA_CHECK(cudaMallocHost(&readback_, 256));
  GF_CUDA_CHECK(cudaMallocHost(&sum_host_, sizeof(double)));
  vec_ = std::make_unique<CudaVector<T>>(*this);
}

template <class T>
CudaBackend<T>::~CudaBackend() {
  graphs_.drop();
  impl_->drop_recordings(0, true);
  if (impl_->peer) NcclApi::get().comm_destroy(impl_->peer);
  cudaFreeHost(sum_host_);
  if (scratch_) impl_->mem.deallocate(scratch_, scratch_bytes_);
  cudaFreeHost(readback_);
  if (impl_->side) cudaStreamDestroy(impl_->side);
  if (impl_->forked) cudaEventDestroy(impl_->forked);
  if (impl_->joined) cudaEventDestroy(impl_->joined);
  cudaStreamDestroy(stream_);
}

template <class T>
MemoryResource& CudaBackend<T>::memory() {
  return impl_->mem;
}

template <class T>
std::unique_ptr<Timer> CudaBackend<T>::make_timer() {
  return std::make_unique<EventTimer>(stream_);
}

template <class T>
Field<T> CudaBackend<T>::make_field(const Grid& g, const std::string& what) {
  Field<T> f(g, field_layout(g), impl_->mem, what);
  if (!f.layout().is_dense())  // the padding is zero, so no reduction or copy sees garbage
    GF_CUDA_CHECK(cudaMemsetAsync(f.data(), 0, f.bytes(), stream_));
  return f;
}

template <class T>
void CudaBackend<T>::upload(const T* host, Field<T>& f) {
  const Layout& l = f.layout();
  if (!l.is_dense() && xs_ != stream_)  // make_field's memset went on the compute stream
    GF_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_rows(f.data(), l.sy, host, l.n[0], l, cudaMemcpyHostToDevice, xs_);
  synchronize();
}

template <class T>
void CudaBackend<T>::download(const Field<T>& f, T* host) {
  const Layout& l = f.layout();
  copy_rows(host, l.n[0], f.data(), l.sy, l, cudaMemcpyDeviceToHost, xs_);
  synchronize();
}

template <class T>
void CudaBackend<T>::copy(const Field<T>& src, Field<T>& dst) {
  if (!src.layout().same_as(dst.layout())) throw DeviceError("copy between fields of two layouts");
  GF_CUDA_CHECK(
      cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, stream_));
}

template <class T>
std::unique_ptr<Snapshots<T>> CudaBackend<T>::make_snapshots(const Grid& g, int slots,
                                                              std::string* why) {
  const Layout l = field_layout(g);
  const std::size_t bytes = std::size_t(l.span()) * sizeof(T);
  std::size_t free_b = 0, total_b = 0;
  GF_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Headroom for what a run allocates later (reduction scratch, cuSPARSE's
  // buffer, cuFFT's work area): the snapshots are a convenience, never
  // worth an out-of-memory error.
  const std::size_t keep = std::max<std::size_t>(std::size_t(256) << 20, total_b / 20);
  if (bytes + keep > free_b) {
    if (why)
      *why = "a spare field of " + gib(bytes) + " on " + label_ + " would leave less than " +
             gib(keep) + " of the " + gib(free_b) + " free";
    return nullptr;
  }
  try {
    return std::make_unique<CudaSnapshots<T>>(device_, impl_->mem, stream_, l, slots);
  } catch (const DeviceError& e) {
    cudaGetLastError();
    if (why) *why = e.what();
    return nullptr;
  }
}

// The first kRecordAfter calls launch plainly (kernels load and tables are
// uploaded at the first; and a recording costs about as much as ten replays
// save: rent or buy, so that a multigrid solve of a few cycles is never
// recorded, while CG's preconditioner over an implicit heat run's steps is;
// docs/performance.md), the next records (capture_graph) and replays,
// later calls replay. A capture that fails (a host wait or an allocation
// among the launches) leaves the key to plain launches.
template <class T>
void CudaBackend<T>::recorded(const typename Backend<T>::RecordKey& key,
                              const std::function<void()>& launches) {
  constexpr int kRecordAfter = 10;
  if (!graphs_.on()) return launches();
  typename Impl::Recording& r = impl_->recordings[key];
  if (r.failed) return launches();
  if (r.calls < kRecordAfter) {
    ++r.calls;
    return launches();
  }
  if (!r.exec) {
    try {
      r.exec = capture_graph(stream_, launches);
    } catch (...) {  // not a CUDA error: the key launches plainly from now on
      r.failed = true;
      throw;
    }
    if (!r.exec) {  // nothing ran: run it plainly, now and from now on
      r.failed = true;
      return launches();
    }
  }
  GF_CUDA_CHECK(cudaGraphLaunch(r.exec, stream_));
}

template <class T>
void CudaBackend<T>::forget_recorded(std::uint64_t owner) {
  impl_->drop_recordings(owner, false);
}

// The exchange's work goes on a stream of its own, of the highest priority
// (its few small kernels get SMs as soon as the core's blocks free them).
template <class T>
void CudaBackend<T>::halo_fork() {
  Impl& m = *impl_;
  if (!m.side) {
    int least = 0, greatest = 0;
    GF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    GF_CUDA_CHECK(cudaStreamCreateWithPriority(&m.side, cudaStreamNonBlocking, greatest));
    GF_CUDA_CHECK(cudaEventCreateWithFlags(&m.forked, cudaEventDisableTiming));
    GF_CUDA_CHECK(cudaEventCreateWithFlags(&m.joined, cudaEventDisableTiming));
  }
  GF_CUDA_CHECK(cudaEventRecord(m.forked, stream_));
  GF_CUDA_CHECK(cudaStreamWaitEvent(m.side, m.forked, 0));
  xs_ = m.side;
}

template <class T>
void CudaBackend<T>::halo_join() {
  if (xs_ == stream_) return;
  GF_CUDA_CHECK(cudaEventRecord(impl_->joined, impl_->side));
  GF_CUDA_CHECK(cudaStreamWaitEvent(stream_, impl_->joined, 0));
  xs_ = stream_;
}

template <class T>
void CudaBackend<T>::pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* c,
                          Field<T>& buf) {
  const FieldView<T> box = const_cast<Field<T>&>(f).view().box(lo, c);
  if (box.size() == 0) return;
  box_copy_kernel<T, true><<<flat_blocks(box.size()), 256, 0, xs_>>>(box, buf.data());
  GF_CUDA_CHECK_LAUNCH();
}

template <class T>
void CudaBackend<T>::unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* c,
                            const Field<T>& buf) {
  const FieldView<T> box = f.view().box(lo, c);
  if (box.size() == 0) return;
  box_copy_kernel<T, false><<<flat_blocks(box.size()), 256, 0, xs_>>>(
      box, const_cast<T*>(buf.data()));
  GF_CUDA_CHECK_LAUNCH();
}

template <class T>
void CudaBackend<T>::pin_host(void* p, std::size_t bytes) {
  if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess)
    cudaGetLastError();  // pageable copies still work, only slower
}

template <class T>
void CudaBackend<T>::unpin_host(void* p) {
  if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
}

template <class T>
std::string CudaBackend<T>::peer_unavailable() {
  return NcclApi::get().why();
}

template <class T>
void CudaBackend<T>::peer_id(unsigned char* id) {
  static_assert(sizeof(ncclUniqueId) == kPeerIdBytes);
  ncclUniqueId u;
  NcclApi::get().check(NcclApi::get().get_unique_id(&u), "ncclGetUniqueId");
  std::memcpy(id, &u, sizeof u);
}

template <class T>
void CudaBackend<T>::peer_connect(const unsigned char* id, int nranks, int rank) {
  const NcclApi& nc = NcclApi::get();
  if (!nc.why().empty()) throw DeviceError("GRIDFORGE_HALO=nccl: " + nc.why());
  ncclUniqueId u;
  std::memcpy(&u, id, sizeof u);
  nc.check(nc.comm_init_rank(&impl_->peer, nranks, u, rank), "ncclCommInitRank");
}

template <class T>
void CudaBackend<T>::peer_exchange(const Field<T>* send, Field<T>* recv, const int* peer,
                                   std::int64_t count) {
  const NcclApi& nc = NcclApi::get();
  const ncclDataType_t type = sizeof(T) == 4 ? ncclFloat32 : ncclFloat64;
  nc.check(nc.group_start(), "ncclGroupStart");
  for (int s = 1; s >= 0; --s)  // toward peer[1] first (see backend.hpp)
    if (peer[s] >= 0)
      nc.check(nc.send(send[s].data(), std::size_t(count), type, peer[s], impl_->peer, xs_),
               "ncclSend");
  for (int s = 0; s < 2; ++s)
    if (peer[s] >= 0)
      nc.check(nc.recv(recv[s].data(), std::size_t(count), type, peer[s], impl_->peer, xs_),
               "ncclRecv");
  nc.check(nc.group_end(), "ncclGroupEnd");
}

template <class T>
void CudaBackend<T>::download_image(const Field<float>& img, float* host) {
  GF_CUDA_CHECK(cudaMemcpyAsync(host, img.data(), img.bytes(), cudaMemcpyDeviceToHost, stream_));
  GF_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Each pixel's RGB as its PNG stores it (rgb8_level), from RGBA floats.
__global__ void image_rgb8_kernel(const float4* rgba, unsigned char* rgb, std::int64_t pixels) {
  for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels;
       p += std::int64_t(gridDim.x) * blockDim.x) {
    const float4 v = rgba[p];
    rgb[3 * p + 0] = rgb8_level(v.x);
    rgb[3 * p + 1] = rgb8_level(v.y);
    rgb[3 * p + 2] = rgb8_level(v.z);
  }
}

template <class T>
void CudaBackend<T>::download_image_rgb8(const Field<float>& img, unsigned char* host) {
  const std::int64_t pixels = std::int64_t(img.size() / 4);
  if (pixels == 0) return;
  auto* rgb = static_cast<unsigned char*>(scratch(std::size_t(pixels) * 3));
  image_rgb8_kernel<<<flat_blocks(pixels), 256, 0, stream_>>>(
      reinterpret_cast<const float4*>(img.data()), rgb, pixels);
  GF_CUDA_CHECK_LAUNCH();
  GF_CUDA_CHECK(cudaMemcpyAsync(host, rgb, std::size_t(pixels) * 3, cudaMemcpyDeviceToHost, stream_));
  GF_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
void* CudaBackend<T>::scratch(std::size_t bytes) {
  if (bytes > scratch_bytes_) {
    if (scratch_) impl_->mem.deallocate(scratch_, scratch_bytes_);
    scratch_ = nullptr;
    scratch_bytes_ = 0;  // none, should the allocation throw
    scratch_ = impl_->mem.allocate(bytes, "scratch (reductions, the 8-bit image)");
    scratch_bytes_ = bytes;
  }
  return scratch_;
}

template class CudaBackend<float>;
template class CudaBackend<double>;

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int device, std::int64_t row_align) {
  const CudaStatus& st = cuda_status();
  if (!st.why_unusable.empty()) throw DeviceError(st.why_unusable);
  if (device < 0 || device >= static_cast<int>(st.gpus.size()))
    throw DeviceError("no CUDA device " + std::to_string(device) + " (this machine has " +
                      std::to_string(st.gpus.size()) + ")");
  return std::make_unique<CudaBackend<T>>(device,
                                          row_align < 0 ? gpu_row_align_bytes() : row_align);
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int, std::int64_t);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int, std::int64_t);

}  // namespace gf
