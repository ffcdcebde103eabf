// CudaBackend: the GPU executor. Kernels call the same kernels/ops formulas as
// the CPU reference; what differs is how the grid is walked (tiles, register
// marching along z) and where reductions happen (CUB).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/halo_kernels.cuh"
#include "kernels/cuda/nccl_peer.cuh"
#include "kernels/cuda/part_kernels.cuh"
#include "kernels/cuda/heat_kernels.cuh"
#include "kernels/cuda/time_block2d_kernels.cuh"
#include "kernels/cuda/time_block_kernels.cuh"
#include "kernels/cuda/laplace_kernels.cuh"
#include "kernels/cuda/raymarch_kernels.cuh"
#include "kernels/cuda/stencil_kernels.cuh"
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

// Device memory from the backend's counting allocator, freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }
  void reset(MemoryResource& mr, std::size_t bytes, const std::string& what) {
    release();
    p_ = mr.allocate(bytes, what);
    mr_ = &mr;
    bytes_ = bytes;
  }
  // Grows (never shrinks) to at least `bytes`.
  void* at_least(MemoryResource& mr, std::size_t bytes, const std::string& what) {
    if (bytes > bytes_) reset(mr, bytes, what);
    return p_;
  }
  void release() {
    if (p_) mr_->deallocate(p_, bytes_);
    p_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return p_; }
  template <class U>
  U* as() const {
    return static_cast<U*>(p_);
  }

 private:
  MemoryResource* mr_ = nullptr;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Dispatch on the grid dimension: fn(std::integral_constant<int, D>).
template <class F>
void by_dim(int ndim, F&& fn) {
  switch (ndim) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    default: fn(std::integral_constant<int, 3>{}); break;
  }
}

unsigned flat_blocks(std::int64_t n) {
  return unsigned(std::min<std::int64_t>((n + 255) / 256, 65535 * 8));
}

// Output snapshots (backend.hpp): the field is copied into a spare device
// buffer on the compute stream (a device-to-device copy: about 0.2 ms for
// 512³ float32), then downloaded from there into pinned host memory on a
// stream of its own, so the steps that follow run while it travels. The
// spare is reused: the next snapshot's copy into it waits, on the GPU, for
// the last download out of it.
template <class T>
class CudaSnapshots final : public Snapshots<T> {
 public:
  CudaSnapshots(int device, MemoryResource& mem, cudaStream_t compute, std::size_t bytes,
                int slots)
      : device_(device), compute_(compute), bytes_(bytes) {
    spare_.reset(mem, bytes, "the spare field for overlapped outputs");
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
    if (f.bytes() != bytes_) throw DeviceError("snapshot of a field of another size");
    if (last_ >= 0) GF_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_[std::size_t(last_)], 0));
    GF_CUDA_CHECK(
        cudaMemcpyAsync(spare_.get(), f.data(), bytes_, cudaMemcpyDeviceToDevice, compute_));
    GF_CUDA_CHECK(cudaEventRecord(copied_, compute_));
    GF_CUDA_CHECK(cudaStreamWaitEvent(copy_, copied_, 0));
    GF_CUDA_CHECK(cudaMemcpyAsync(host_[std::size_t(s)], spare_.get(), bytes_,
                                  cudaMemcpyDeviceToHost, copy_));
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
  std::size_t bytes_;
  DeviceBuffer spare_;
  cudaStream_t copy_ = nullptr;
  cudaEvent_t copied_ = nullptr;
  std::vector<void*> host_;
  std::vector<cudaEvent_t> done_;
  int last_ = -1;  // the slot of the last download out of the spare
};

// Kernel arguments compared member by member (never their padding): a
// recorded graph is replayed only for the very arguments it was made with.
template <class V>
bool same_bits(const V& a, const V& b) {
  return std::memcmp(&a, &b, sizeof(V)) == 0;
}
template <class T>
bool same_bc(const AxisBc<T> (&a)[3], const AxisBc<T> (&b)[3]) {
  for (int ax = 0; ax < 3; ++ax)
    if (a[ax].lo != b[ax].lo || a[ax].hi != b[ax].hi ||
        !same_bits(a[ax].ghost_lo, b[ax].ghost_lo) || !same_bits(a[ax].ghost_hi, b[ax].ghost_hi))
      return false;
  return true;
}
template <class T>
bool same_args(const HeatArgs<T>& a, const HeatArgs<T>& b) {
  for (int ax = 0; ax < 3; ++ax)
    if (a.n[ax] != b.n[ax] || !same_bits(a.c[ax], b.c[ax])) return false;
  return a.ndim == b.ndim && same_bc(a.bc, b.bc) && same_bits(a.dt, b.dt) &&
         a.source == b.source && same_bits(a.source_const, b.source_const);
}
template <class T>
bool same_args(const LaplaceArgs<T>& a, const LaplaceArgs<T>& b) {
  for (int ax = 0; ax < 3; ++ax)
    if (a.n[ax] != b.n[ax] || !same_bits(a.ih2[ax], b.ih2[ax])) return false;
  return a.ndim == b.ndim && same_bc(a.bc, b.bc) && same_bits(a.diag, b.diag) &&
         same_bits(a.inv_diag, b.inv_diag) && a.f == b.f && same_bits(a.f_const, b.f_const) &&
         same_bits(a.f_coef, b.f_coef) && same_bits(a.lap_coef, b.lap_coef) &&
         same_bits(a.omega, b.omega) && same_bits(a.op_scale, b.op_scale) &&
         same_bits(a.op_shift, b.op_shift);
}
template <class T>
bool same_args(const StencilArgs<T>& a, const StencilArgs<T>& b) {
  for (int ax = 0; ax < 3; ++ax)
    if (a.n[ax] != b.n[ax]) return false;
  return a.ndim == b.ndim && same_bc(a.bc, b.bc) && a.ntaps == b.ntaps && a.radius == b.radius &&
         a.update == b.update && same_bits(a.coeff, b.coeff);
}

// CUDA graphs of chunks of time steps or sweeps (heat_run, stencil_run,
// jacobi_run, sor_run) on grids of at most this many points, where a step's
// kernels run for a few microseconds and launching them one by one from the
// host costs as much. 128³: above it a step's kernels run long enough to hide
// their launches (to be measured: tests/gpu/perf_overlap.sh).
constexpr std::int64_t kGraphMaxPoints = std::int64_t(1) << 21;
// Steps in one graph at most: a Ctrl-C waits for at most one graph.
constexpr int kGraphSteps = 64;
// Recorded graphs kept (a run uses two or three: its chunk length, the
// remainder, each with the fields in either order).
constexpr std::size_t kMaxGraphs = 8;

template <class T>
class CudaBackend final : public Backend<T> {
 public:
  explicit CudaBackend(int device)
      : label_(label_for(device)), device_(device), mem_(label_) {
    GF_CUDA_CHECK(cudaSetDevice(device));
    GF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    xs_ = stream_;
    GF_CUDA_CHECK(cudaMallocHost(&stats_host_, sizeof(StatsAcc)));
    GF_CUDA_CHECK(cudaMallocHost(&sum_host_, sizeof(double)));
    const char* g = std::getenv("GRIDFORGE_CUDA_GRAPHS");
    graphs_on_ = !(g && std::string(g) == "0");
  }
  ~CudaBackend() override {
    drop_graphs();
    if (peer_) NcclApi::get().comm_destroy(peer_);
    release_operator();
    if (sparse_) cusparseDestroy(sparse_);
    release_fft_plans();
    cudaFreeHost(sum_host_);
    if (scratch_) mem_.deallocate(scratch_, scratch_bytes_);
    cudaFreeHost(stats_host_);
    if (side_) cudaStreamDestroy(side_);
    if (forked_) cudaEventDestroy(forked_);
    if (joined_) cudaEventDestroy(joined_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return label_; }
  bool is_gpu() const override { return true; }
  MemoryResource& memory() override { return mem_; }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<EventTimer>(stream_); }
  // (xs_: the compute stream, or between halo_fork and halo_join the halo stream)
  void synchronize() override { GF_CUDA_CHECK(cudaStreamSynchronize(xs_)); }

  void upload(const T* host, Field<T>& f) override {
    GF_CUDA_CHECK(cudaMemcpyAsync(f.data(), host, f.bytes(), cudaMemcpyHostToDevice, xs_));
    synchronize();
  }
  void download(const Field<T>& f, T* host) override {
    GF_CUDA_CHECK(cudaMemcpyAsync(host, f.data(), f.bytes(), cudaMemcpyDeviceToHost, xs_));
    synchronize();
  }

  void heat_step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch_heat_step(a, in.data(), out.data(), stream_);
    GF_CUDA_CHECK_LAUNCH();
  }

  std::unique_ptr<Snapshots<T>> make_snapshots(const Grid& g, int slots,
                                               std::string* why) override {
    const std::size_t bytes = std::size_t(g.size()) * sizeof(T);
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
      return std::make_unique<CudaSnapshots<T>>(device_, mem_, stream_, bytes, slots);
    } catch (const DeviceError& e) {
      cudaGetLastError();
      if (why) *why = e.what();
      return nullptr;
    }
  }

  int steps_per_call(const Grid& g) const override {
    return graphs_on_ && g.size() <= kGraphMaxPoints && !g.has_halo() ? kGraphSteps : 1;
  }
  void heat_run(const HeatArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) override {
    GraphKey k;
    k.heat = a;
    k.u = u.data();
    k.tmp = tmp.data();
    k.n = n;
    replay(k, u, tmp, [&](const T* in, T* out) {
      launch_heat_step(a, in, out, stream_);
      GF_CUDA_CHECK_LAUNCH();
    }, [&] { Backend<T>::heat_run(a, n, u, tmp); });
  }
  void stencil_run(const StencilArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) override {
    GraphKey k;
    k.kind = 1;
    k.stencil = a;
    k.tile_radius = tile_radius_;
    k.u = u.data();
    k.tmp = tmp.data();
    k.n = n;
    replay(k, u, tmp, [&](const T* in, T* out) { stencil_step(a, in, out); },
           [&] { Backend<T>::stencil_run(a, n, u, tmp); });
  }
  // 2D and 3D grids of fewer than 2³¹ points (the kernels' indices are 32-bit).
  int heat_time_block(const HeatArgs<T>& a, int asked) const override {
    return passes(fits_passes(a.ndim, a.n), asked);
  }
  // The steps a pass takes where the grid has passes (fits): asked when the
  // kernels have that depth, else 1; auto (0): the deepest, and the solver
  // measures which pays.
  static int passes(bool fits, int asked) {
    if (!fits) return 1;
    if (asked > 0) return time_block_supported(asked) ? asked : 1;
    return time_block_deepest();
  }
  static bool fits_passes(int ndim, const std::int64_t* n) {
    return tb_has_dims(ndim) && n[0] * n[1] * n[2] < (std::int64_t(1) << 31);
  }
  // One pass of an operator of ops/time_block.hpp: the 2D or the 3D kernels.
  template <class Op>
  void launch_passes(const Op& op, int k, const Field<T>& in, Field<T>& out) {
    if constexpr (Op::kDim == 2) launch_time_block2d(op, k, in.data(), out.data(), stream_);
    else launch_time_block(op, k, in.data(), out.data(), stream_);
    GF_CUDA_CHECK_LAUNCH();
  }
  void heat_steps(const HeatArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (heat_time_block(a, k) != k || k < 2)
      throw DeviceError(label_ + ": no temporally blocked heat pass of " + std::to_string(k) +
                        " steps here");
    with_tb_heat(a, [&](const auto& op) { launch_passes(op, k, in, out); });
  }
  // Jacobi on 2D and 3D grids of fewer than 2³¹ points: the same passes as heat.
  int jacobi_time_block(const LaplaceArgs<T>& a, int asked) const override {
    return passes(fits_passes(a.ndim, a.n), asked);
  }
  void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (jacobi_time_block(a, k) != k || k < 2)
      throw DeviceError(label_ + ": no temporally blocked Jacobi pass of " + std::to_string(k) +
                        " sweeps here");
    with_tb_dim(a.ndim, [&](auto d) { launch_passes(TbJacobi<T, decltype(d)::value>(a), k, in, out); });
  }
  // A star of radius 1 in the presets' order (fixed_stencil's Star: star5 in
  // 2D, star7 in 3D), on a grid of fewer than 2³¹ points: the same passes as heat.
  int stencil_time_block(const StencilArgs<T>& a, int asked) const override {
    return passes(fixed_.shape == FixedShape::Star && fixed_.ndim == a.ndim && fits_passes(a.ndim, a.n),
                  asked);
  }
  void stencil_steps(const StencilArgs<T>& a, int k, const Field<T>& in, Field<T>& out) override {
    if (stencil_time_block(a, k) != k || k < 2)
      throw DeviceError(label_ + ": no temporally blocked stencil pass of " + std::to_string(k) +
                        " steps here");
    with_tb_dim(a.ndim, [&](auto d) { launch_passes(TbStar<T, decltype(d)::value>(a, fixed_), k, in, out); });
  }

  void set_stencil_taps(const std::vector<StencilTap<T>>& taps) override {
    drop_graphs();  // recorded for the old taps' tile radius
    tile_radius_ = upload_stencil_taps(taps, stream_);
    fixed_ = fixed_stencil(taps);
  }
  void apply_stencil(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    stencil_step(a, in.data(), out.data());
  }
  // A fixed-shape stencil through the marches where the grid allows, any
  // other through the generic kernels.
  void stencil_step(const StencilArgs<T>& a, const T* in, T* out) {
    if (launch_fixed_stencil(a, fixed_, in, out, stream_)) return;
    launch_stencil(a, tile_radius_, in, out, stream_);
    GF_CUDA_CHECK_LAUNCH();
  }

  FieldStats stats(const Field<T>& f) override {
    if (f.grid().has_halo()) return owned_stats(f);
    const StatsAcc init{INFINITY, -INFINITY, 0.0, 0ull};
    std::size_t temp = 0;
    StatsAcc* out = nullptr;  // the size query touches no memory
    GF_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, temp, f.data(), out, f.size(),
                                                     StatsCombine{}, StatsOf{}, init, stream_));
    char* base = static_cast<char*>(scratch(256 + temp));
    out = reinterpret_cast<StatsAcc*>(base);
    GF_CUDA_CHECK(cub::DeviceReduce::TransformReduce(base + 256, temp, f.data(), out, f.size(),
                                                     StatsCombine{}, StatsOf{}, init, stream_));
    GF_CUDA_CHECK(cudaMemcpyAsync(stats_host_, out, sizeof(StatsAcc), cudaMemcpyDeviceToHost,
                                  stream_));
    synchronize();
    const StatsAcc& r = *stats_host_;
    FieldStats s;
    s.min = r.min;
    s.max = r.max;
    s.nonfinite = static_cast<std::int64_t>(r.nonfinite);
    const double finite = double(f.size()) - double(r.nonfinite);
    s.mean = finite > 0 ? r.sum / finite : 0.0;
    s.sum = r.sum;
    s.count = std::int64_t(finite);
    return s;
  }

  // On a rank-local grid: block partials over the owned points, combined here.
  FieldStats owned_stats(const Field<T>& f) {
    const std::int64_t n = std::int64_t(f.size());
    const int blocks = int(std::max<std::int64_t>(1, std::min<std::int64_t>((n + 255) / 256, 1024)));
    auto* partials = static_cast<StatsAcc*>(scratch(sizeof(StatsAcc) * std::size_t(blocks)));
    owned_stats_kernel<T><<<blocks, 256, 0, stream_>>>(f.data(), OwnedMask::of(f.grid()), n,
                                                       partials);
    GF_CUDA_CHECK_LAUNCH();
    std::vector<StatsAcc> host(static_cast<std::size_t>(blocks));
    GF_CUDA_CHECK(cudaMemcpyAsync(host.data(), partials, sizeof(StatsAcc) * host.size(),
                                  cudaMemcpyDeviceToHost, stream_));
    synchronize();
    StatsAcc r{INFINITY, -INFINITY, 0.0, 0ull};
    for (const StatsAcc& p : host) r = StatsCombine{}(r, p);
    FieldStats s;
    s.min = r.min;
    s.max = r.max;
    s.nonfinite = static_cast<std::int64_t>(r.nonfinite);
    s.count = f.grid().owned_size() - s.nonfinite;
    s.sum = r.sum;
    s.mean = s.count > 0 ? r.sum / double(s.count) : 0.0;
    return s;
  }

  // ---- halo exchange ----
  void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* c,
            Field<T>& buf) override {
    box_copy<true>(const_cast<T*>(f.data()), f.grid(), lo, c, buf.data());
  }
  void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* c,
              const Field<T>& buf) override {
    box_copy<false>(f.data(), f.grid(), lo, c, const_cast<T*>(buf.data()));
  }
  void pin_host(void* p, std::size_t bytes) override {
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess)
      cudaGetLastError();  // pageable copies still work, only slower
  }
  void unpin_host(void* p) override {
    if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
  }

  std::string peer_unavailable() override { return NcclApi::get().why(); }
  void peer_id(unsigned char* id) override {
    static_assert(sizeof(ncclUniqueId) == kPeerIdBytes);
    ncclUniqueId u;
    NcclApi::get().check(NcclApi::get().get_unique_id(&u), "ncclGetUniqueId");
    std::memcpy(id, &u, sizeof u);
  }
  void peer_connect(const unsigned char* id, int nranks, int rank) override {
    const NcclApi& nc = NcclApi::get();
    if (!nc.why().empty()) throw DeviceError("GRIDFORGE_HALO=nccl: " + nc.why());
    ncclUniqueId u;
    std::memcpy(&u, id, sizeof u);
    nc.check(nc.comm_init_rank(&peer_, nranks, u, rank), "ncclCommInitRank");
  }
  void peer_exchange(const Field<T>* send, Field<T>* recv, const int* peer,
                     std::int64_t count) override {
    const NcclApi& nc = NcclApi::get();
    const ncclDataType_t type = sizeof(T) == 4 ? ncclFloat32 : ncclFloat64;
    nc.check(nc.group_start(), "ncclGroupStart");
    for (int s = 1; s >= 0; --s)  // toward peer[1] first (see backend.hpp)
      if (peer[s] >= 0)
        nc.check(nc.send(send[s].data(), std::size_t(count), type, peer[s], peer_, xs_),
                 "ncclSend");
    for (int s = 0; s < 2; ++s)
      if (peer[s] >= 0)
        nc.check(nc.recv(recv[s].data(), std::size_t(count), type, peer[s], peer_, xs_),
                 "ncclRecv");
    nc.check(nc.group_end(), "ncclGroupEnd");
  }

  template <bool ToBuf>
  void box_copy(T* u, const Grid& g, const std::int64_t* lo, const std::int64_t* c, T* buf) {
    const std::int64_t total = c[0] * c[1] * c[2];
    if (total == 0) return;
    box_copy_kernel<T, ToBuf><<<flat_blocks(total), 256, 0, xs_>>>(
        u, g.n[0], g.n[1], lo[0], lo[1], lo[2], c[0], c[1], total, buf);
    GF_CUDA_CHECK_LAUNCH();
  }

  // ---- steps split for the overlapped halo exchange (part_kernels.cuh) ----
  // The exchange's work goes on a stream of its own, of the highest priority
  // (its few small kernels get SMs as soon as the core's blocks free them).
  void halo_fork() override {
    if (!side_) {
      int least = 0, greatest = 0;
      GF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      GF_CUDA_CHECK(cudaStreamCreateWithPriority(&side_, cudaStreamNonBlocking, greatest));
      GF_CUDA_CHECK(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming));
      GF_CUDA_CHECK(cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming));
    }
    GF_CUDA_CHECK(cudaEventRecord(forked_, stream_));
    GF_CUDA_CHECK(cudaStreamWaitEvent(side_, forked_, 0));
    xs_ = side_;
  }
  void halo_join() override {
    if (xs_ == stream_) return;
    GF_CUDA_CHECK(cudaEventRecord(joined_, side_));
    GF_CUDA_CHECK(cudaStreamWaitEvent(stream_, joined_, 0));
    xs_ = stream_;
  }
  bool heat_step_part(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                      StepPart part) override {
    return split<false>(a.ndim, a.n, in, out, core, part,
                        [&](auto d) { return HeatOp<T, decltype(d)::value>{a}; });
  }
  bool jacobi_sweep_part(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out,
                         const Box& core, StepPart part) override {
    return split<false>(a.ndim, a.n, in, out, core, part,
                        [&](auto d) { return JacobiOp<T, decltype(d)::value>{a}; });
  }
  // The radius-1 presets (the marches' stencils) only.
  bool stencil_part(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out, const Box& core,
                    StepPart part) override {
    if (fixed_.shape == FixedShape::None || fixed_.ndim != a.ndim) return false;
    if (fixed_.shape == FixedShape::Box)
      return split<true>(a.ndim, a.n, in, out, core, part, [&](auto d) {
        return fixed_op<BoxStencilOp<T, decltype(d)::value>>(a, fixed_);
      });
    return split<false>(a.ndim, a.n, in, out, core, part, [&](auto d) {
      return fixed_op<StarStencilOp<T, decltype(d)::value>>(a, fixed_);
    });
  }
  // The shell on the halo stream (ahead of the exchange that sends it: the
  // compute stream outside halo_fork/halo_join), the core on the compute
  // stream beside it.
  template <bool BOX, class Make>
  bool split(int ndim, const std::int64_t* n, const Field<T>& in, Field<T>& out, const Box& core,
             StepPart part, Make&& make) {
    cudaStream_t s = part == StepPart::Shell ? xs_ : stream_;
    if (!launch_split<BOX>(ndim, n, in.data(), out.data(), core, part, s, make)) return false;
    GF_CUDA_CHECK_LAUNCH();
    return true;
  }

  // ---- Laplace / Poisson ----

  void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch_jacobi(a, in.data(), out.data());
  }
  void launch_jacobi(const LaplaceArgs<T>& a, const T* in, T* out) {
    if (a.ndim == 2 && march2d_fits(a.n, in, out)) {
      launch_march2d<false>(JacobiOp<T, 2>{a}, in, out, stream_);
      GF_CUDA_CHECK_LAUNCH();
      return;
    }
    if (a.ndim == 3 && march3d_fits(a.n, in, out)) {
      launch_march3d<false>(JacobiOp<T, 3>{a}, in, out, stream_);
      GF_CUDA_CHECK_LAUNCH();
      return;
    }
    dim3 grid, block;
    point_launch(a.ndim, a.n, grid, block);
    by_dim(a.ndim, [&](auto d) {
      jacobi_kernel<decltype(d)::value, T><<<grid, block, 0, stream_>>>(a, in, out);
    });
    GF_CUDA_CHECK_LAUNCH();
  }

  void sor_sweep(const LaplaceArgs<T>& a, Field<T>& u, int colour) override {
    launch_sor(a, u.data(), colour);
  }
  void launch_sor(const LaplaceArgs<T>& a, T* u, int colour) {
    dim3 grid, block;
    point_launch(a.ndim, a.n, grid, block);
    by_dim(a.ndim, [&](auto d) {
      sor_kernel<decltype(d)::value, T><<<grid, block, 0, stream_>>>(a, u, colour);
    });
    GF_CUDA_CHECK_LAUNCH();
  }
  void jacobi_run(const LaplaceArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) override {
    GraphKey k;
    k.kind = 2;
    k.laplace = a;
    k.u = u.data();
    k.tmp = tmp.data();
    k.n = n;
    replay(k, u, tmp, [&](const T* in, T* out) { launch_jacobi(a, in, out); },
           [&] { Backend<T>::jacobi_run(a, n, u, tmp); });
  }
  // In place: the graph's "two fields" are u twice, and nothing is swapped.
  void sor_run(const LaplaceArgs<T>& a, int n, Field<T>& u) override {
    GraphKey k;
    k.kind = 3;
    k.laplace = a;
    k.u = k.tmp = u.data();
    k.n = n;
    replay(k, u, u, [&](const T*, T* v) {
      launch_sor(a, v, 0);
      launch_sor(a, v, 1);
    }, [&] { Backend<T>::sor_run(a, n, u); });
  }

  double residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>* r) override {
    double s = 0;
    by_dim(a.ndim, [&](auto d) {
      const ResidualFn<decltype(d)::value, T> fn{a, u.data(), r ? r->data() : nullptr};
      s = u.grid().has_halo() ? reduce(OwnedOnly<decltype(fn)>{fn, OwnedMask::of(u.grid())},
                                       std::int64_t(u.size()))
                              : reduce(fn, std::int64_t(u.size()));
    });
    return s;
  }

  // The operator as a CSR matrix, built on the device from laplace_row (the
  // formula the CPU's apply_point is tested against): count the entries of
  // every row, scan them into row pointers (CUB), fill. 32-bit indices.
  void set_operator(const LaplaceArgs<T>& a) override {
    release_operator();
    const std::int64_t n = a.n[0] * a.n[1] * a.n[2];
    if (n * kMaxRowEntries >= (std::int64_t(1) << 31))
      throw DeviceError("cg on the GPU: the CSR matrix of " + std::to_string(n) +
                        " points would need 64-bit indices, which this version does not build; "
                        "use a grid of fewer than 306 million points, or --device cpu");
    if (!sparse_) {
      GF_CUSPARSE_CHECK(cusparseCreate(&sparse_));
      GF_CUSPARSE_CHECK(cusparseSetStream(sparse_, stream_));
    }
    rowptr_.reset(mem_, std::size_t(n + 1) * sizeof(int), "the CSR row pointers");
    DeviceBuffer counts;
    counts.reset(mem_, std::size_t(n + 1) * sizeof(int), "the CSR row counts");
    GF_CUDA_CHECK(cudaMemsetAsync(counts.as<int>() + n, 0, sizeof(int), stream_));
    by_dim(a.ndim, [&](auto d) {
      csr_count_kernel<decltype(d)::value, T>
          <<<flat_blocks(n), 256, 0, stream_>>>(a, counts.as<int>(), n);
    });
    GF_CUDA_CHECK_LAUNCH();
    std::size_t temp = 0;
    GF_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp, counts.as<int>(),
                                                rowptr_.as<int>(), int(n + 1), stream_));
    void* tmp = scratch(temp);
    GF_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(tmp, temp, counts.as<int>(), rowptr_.as<int>(),
                                                int(n + 1), stream_));
    int nnz = 0;
    GF_CUDA_CHECK(cudaMemcpyAsync(&nnz, rowptr_.as<int>() + n, sizeof(int),
                                  cudaMemcpyDeviceToHost, stream_));
    synchronize();
    colind_.reset(mem_, std::size_t(std::max(nnz, 1)) * sizeof(int), "the CSR column indices");
    values_.reset(mem_, std::size_t(std::max(nnz, 1)) * sizeof(T), "the CSR values");
    by_dim(a.ndim, [&](auto d) {
      csr_fill_kernel<decltype(d)::value, T><<<flat_blocks(n), 256, 0, stream_>>>(
          a, rowptr_.as<int>(), colind_.as<int>(), values_.as<T>(), n);
    });
    GF_CUDA_CHECK_LAUNCH();
    GF_CUSPARSE_CHECK(cusparseCreateCsr(&matrix_, n, n, nnz, rowptr_.get(), colind_.get(),
                                        values_.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, data_type()));
    rows_ = n;
  }

  // y = A x by cuSPARSE's generic SpMV, CSR algorithm 2 (deterministic).
  void spmv(const Field<T>& x, Field<T>& y) override {
    if (!matrix_) throw DeviceError("spmv before set_operator");
    if (std::int64_t(x.size()) != rows_ || std::int64_t(y.size()) != rows_)
      throw DeviceError("spmv: the vectors do not match the operator");
    if (!vec_x_) {
      GF_CUSPARSE_CHECK(
          cusparseCreateDnVec(&vec_x_, rows_, const_cast<T*>(x.data()), data_type()));
      GF_CUSPARSE_CHECK(cusparseCreateDnVec(&vec_y_, rows_, y.data(), data_type()));
    } else {
      GF_CUSPARSE_CHECK(cusparseDnVecSetValues(vec_x_, const_cast<T*>(x.data())));
      GF_CUSPARSE_CHECK(cusparseDnVecSetValues(vec_y_, y.data()));
    }
    const T one = 1, zero = 0;
    if (!spmv_ready_) {
      std::size_t bytes = 0;
      GF_CUSPARSE_CHECK(cusparseSpMV_bufferSize(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                matrix_, vec_x_, &zero, vec_y_, data_type(),
                                                CUSPARSE_SPMV_CSR_ALG2, &bytes));
      spmv_buffer_.at_least(mem_, std::max<std::size_t>(bytes, 16), "the cuSPARSE SpMV buffer");
      spmv_ready_ = true;
    }
    GF_CUSPARSE_CHECK(cusparseSpMV(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_,
                                   vec_x_, &zero, vec_y_, data_type(), CUSPARSE_SPMV_CSR_ALG2,
                                   spmv_buffer_.get()));
  }

  double dot(const Field<T>& x, const Field<T>& y) override {
    const DotFn<T> fn{x.data(), y.data()};
    if (x.grid().has_halo())
      return reduce(OwnedOnly<DotFn<T>>{fn, OwnedMask::of(x.grid())}, std::int64_t(x.size()));
    return reduce(fn, std::int64_t(x.size()));
  }

  void axpby(T a, const Field<T>& x, T b, Field<T>& y) override {
    const std::int64_t n = std::int64_t(x.size());
    axpby_kernel<T><<<flat_blocks(n), 256, 0, stream_>>>(a, x.data(), b, y.data(), n);
    GF_CUDA_CHECK_LAUNCH();
  }

  double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                   Field<T>& r) override {
    const CgUpdateFn<T> fn{alpha, p.data(), q.data(), u.data(), r.data()};
    if (p.grid().has_halo())
      return reduce(OwnedOnly<CgUpdateFn<T>>{fn, OwnedMask::of(p.grid())}, std::int64_t(p.size()));
    return reduce(fn, std::int64_t(p.size()));
  }

  void add_constant(Field<T>& u, T c) override {
    const std::int64_t n = std::int64_t(u.size());
    add_constant_kernel<T><<<flat_blocks(n), 256, 0, stream_>>>(u.data(), c, n);
    GF_CUDA_CHECK_LAUNCH();
  }

  void copy(const Field<T>& src, Field<T>& dst) override {
    GF_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice,
                                  stream_));
  }

  void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) override {
    const std::int64_t n = std::int64_t(a.size());
    triad_kernel<T><<<flat_blocks(n), 256, 0, stream_>>>(a.data(), b.data(), s, c.data(), n);
    GF_CUDA_CHECK_LAUNCH();
  }

  void raymarch(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img) override {
    launch_raymarch(a, volume.data(), img.data(), stream_);
  }
  void download_image(const Field<float>& img, float* host) override {
    GF_CUDA_CHECK(cudaMemcpyAsync(host, img.data(), img.bytes(), cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }

  // cuFFT: f̂ = FFT(f); û = spectral_factor·f̂; u = IFFT(û); then FFT(u) for
  // the residual. Plans are made once per grid and kept.
  void prepare_fft(const LaplaceArgs<T>& a) override {
    using C = FftComplex<T>;
    const std::int64_t nhalf = (a.n[0] / 2 + 1) * a.n[1] * a.n[2];
    make_fft_plans(a);
    fft_f_.at_least(mem_, std::size_t(nhalf) * sizeof(C), "the spectrum of f");
    fft_u_.at_least(mem_, std::size_t(nhalf) * sizeof(C), "the spectrum of u");
  }
  double fft_poisson(const LaplaceArgs<T>& a, const Field<T>& f, Field<T>& u) override {
    using C = FftComplex<T>;
    const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
    const std::int64_t nhalf = (nx / 2 + 1) * ny * nz;
    make_fft_plans(a);  // kept from prepare_fft when the grid is the same
    C* F = static_cast<C*>(fft_f_.at_least(mem_, std::size_t(nhalf) * sizeof(C), "the spectrum of f"));
    C* U = static_cast<C*>(fft_u_.at_least(mem_, std::size_t(nhalf) * sizeof(C), "the spectrum of u"));
    exec_r2c(const_cast<T*>(f.data()), F);
    spectral_scale_kernel<T><<<flat_blocks(nhalf), 256, 0, stream_>>>(a, F, U, nhalf,
                                                                      double(nx * ny * nz));
    GF_CUDA_CHECK_LAUNCH();
    exec_c2r(U, u.data());  // overwrites U
    exec_r2c(u.data(), U);
    GF_CUDA_CHECK(cudaMemsetAsync(F, 0, sizeof(C), stream_));  // the mean is not part of it
    const double res = reduce(SpectralResidualFn<T>{a, F, U}, nhalf);
    const double base = reduce(SpectralResidualFn<T>{a, F, nullptr}, nhalf);
    return base > 0 ? std::sqrt(res / base) : 0.0;
  }

 private:
  static std::string label_for(int device) {
    cudaDeviceProp p{};
    GF_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    return std::string(p.name) + " (GPU " + std::to_string(device) + ")";
  }
  static cudaDataType data_type() { return sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F; }

  // Σ f(idx) over idx < n in double: per-block CUB BlockReduce into partials,
  // then cub::DeviceReduce::Sum over them; one read-back.
  template <class F>
  double reduce(const F& f, std::int64_t n) {
    const int blocks = int(std::max<std::int64_t>(
        1, std::min<std::int64_t>((n + kReduceThreads - 1) / kReduceThreads, kMaxReduceBlocks)));
    std::size_t temp = 0;
    GF_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp, static_cast<const double*>(nullptr),
                                         static_cast<double*>(nullptr), blocks, stream_));
    // [sum: 256 bytes][partials: kMaxReduceBlocks doubles][CUB temp]
    constexpr std::size_t kPartials = 256 + kMaxReduceBlocks * sizeof(double);
    char* base = static_cast<char*>(scratch(kPartials + temp));
    double* sum = reinterpret_cast<double*>(base);
    double* partials = reinterpret_cast<double*>(base + 256);
    reduce_kernel<F><<<blocks, kReduceThreads, 0, stream_>>>(f, n, partials);
    GF_CUDA_CHECK_LAUNCH();
    GF_CUDA_CHECK(cub::DeviceReduce::Sum(base + kPartials, temp, partials, sum, blocks, stream_));
    GF_CUDA_CHECK(
        cudaMemcpyAsync(sum_host_, sum, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    synchronize();
    return *sum_host_;
  }

  void release_operator() {
    if (vec_x_) cusparseDestroyDnVec(vec_x_);
    if (vec_y_) cusparseDestroyDnVec(vec_y_);
    if (matrix_) cusparseDestroySpMat(matrix_);
    vec_x_ = vec_y_ = nullptr;
    matrix_ = nullptr;
    spmv_ready_ = false;
    rows_ = 0;
  }

  void make_fft_plans(const LaplaceArgs<T>& a) {
    const bool same = fft_plans_ && fft_dims_[0] == a.n[0] && fft_dims_[1] == a.n[1] &&
                      fft_dims_[2] == a.n[2];
    if (same) return;
    release_fft_plans();
    long long dims[3];  // slowest axis first
    for (int ax = 0; ax < a.ndim; ++ax) dims[ax] = a.n[a.ndim - 1 - ax];
    const bool f32 = sizeof(T) == 4;
    std::size_t work = 0;
    GF_CUFFT_CHECK(cufftCreate(&plan_r2c_));
    GF_CUFFT_CHECK(cufftCreate(&plan_c2r_));
    fft_plans_ = true;
    GF_CUFFT_CHECK(cufftSetStream(plan_r2c_, stream_));
    GF_CUFFT_CHECK(cufftSetStream(plan_c2r_, stream_));
    GF_CUFFT_CHECK(cufftMakePlanMany64(plan_r2c_, a.ndim, dims, nullptr, 1, 0, nullptr, 1, 0,
                                       f32 ? CUFFT_R2C : CUFFT_D2Z, 1, &work));
    GF_CUFFT_CHECK(cufftMakePlanMany64(plan_c2r_, a.ndim, dims, nullptr, 1, 0, nullptr, 1, 0,
                                       f32 ? CUFFT_C2R : CUFFT_Z2D, 1, &work));
    for (int ax = 0; ax < 3; ++ax) fft_dims_[ax] = a.n[ax];
  }
  void release_fft_plans() {
    if (!fft_plans_) return;
    cufftDestroy(plan_r2c_);
    cufftDestroy(plan_c2r_);
    fft_plans_ = false;
  }
  void exec_r2c(T* in, FftComplex<T>* out) {
    if constexpr (sizeof(T) == 4)
      GF_CUFFT_CHECK(cufftExecR2C(plan_r2c_, in, out));
    else
      GF_CUFFT_CHECK(cufftExecD2Z(plan_r2c_, in, out));
  }
  void exec_c2r(FftComplex<T>* in, T* out) {
    if constexpr (sizeof(T) == 4)
      GF_CUFFT_CHECK(cufftExecC2R(plan_c2r_, in, out));
    else
      GF_CUFFT_CHECK(cufftExecZ2D(plan_c2r_, in, out));
  }

  // ---- CUDA graphs of chunks of steps ----
  // What a recorded graph was made for: the step's kind and arguments, the
  // two fields (in the order of the first step) and the number of steps.
  struct GraphKey {
    int kind = 0;  // 0 heat, 1 stencil, 2 jacobi, 3 sor
    HeatArgs<T> heat;
    StencilArgs<T> stencil;
    LaplaceArgs<T> laplace;
    int tile_radius = 0;
    const T* u = nullptr;
    const T* tmp = nullptr;
    int n = 0;
    bool matches(const GraphKey& o) const {
      return kind == o.kind && u == o.u && tmp == o.tmp && n == o.n &&
             tile_radius == o.tile_radius &&
             (kind == 0   ? same_args(heat, o.heat)
              : kind == 1 ? same_args(stencil, o.stencil)
                          : same_args(laplace, o.laplace));
    }
  };
  struct Graph {
    GraphKey key;
    cudaGraphExec_t exec = nullptr;  // null until the key is seen a second time
    std::uint64_t used = 0;
  };

  // n steps u → tmp → u ... by `step(in, out)`: launched one by one (`plain`)
  // the first time a key is seen (so that one-off chunks cost no recording,
  // and the kernels are loaded outside a capture), recorded into a graph the
  // second time and replayed from then on.
  template <class Step, class Plain>
  void replay(const GraphKey& k, Field<T>& u, Field<T>& tmp, Step&& step, Plain&& plain) {
    if (!graphs_on_ || k.n < 2 || u.grid().size() > kGraphMaxPoints || u.grid().has_halo()) {
      plain();
      return;
    }
    Graph* g = nullptr;
    for (Graph& c : graphs_)
      if (c.key.matches(k)) g = &c;
    if (!g) {
      if (graphs_.size() >= kMaxGraphs) {  // the least recently used goes
        auto lru = std::min_element(graphs_.begin(), graphs_.end(),
                                    [](const Graph& x, const Graph& y) { return x.used < y.used; });
        if (lru->exec) cudaGraphExecDestroy(lru->exec);
        graphs_.erase(lru);
      }
      graphs_.push_back(Graph{k, nullptr, ++graph_clock_});
      plain();
      return;
    }
    g->used = ++graph_clock_;
    if (!g->exec) g->exec = record(k.n, u.data(), tmp.data(), step);
    if (!g->exec) {  // recording failed: plain launches from now on
      graphs_on_ = false;
      plain();
      return;
    }
    GF_CUDA_CHECK(cudaGraphLaunch(g->exec, stream_));
    if (k.n % 2 && k.u != k.tmp) u.swap(tmp);
  }

  // The n steps captured from the compute stream (this thread's captures
  // only: the writer thread may wait on its events meanwhile). Null when the
  // capture fails.
  template <class Step>
  cudaGraphExec_t record(int n, T* u, T* tmp, Step& step) {
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    bool launched = true;
    try {
      for (int s = 0; s < n; ++s) {
        step(u, tmp);
        std::swap(u, tmp);  // nothing when in place (u == tmp)
      }
    } catch (const DeviceError&) {
      launched = false;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
    cudaGraphExec_t exec = nullptr;
    if (launched && end == cudaSuccess && graph &&
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
      exec = nullptr;
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // a failed capture is not the next call's error
    return exec;
  }

  void drop_graphs() noexcept {
    for (Graph& g : graphs_)
      if (g.exec) cudaGraphExecDestroy(g.exec);
    graphs_.clear();
  }

  // Scratch memory for reductions, grown as needed and kept.
  void* scratch(std::size_t bytes) {
    if (bytes > scratch_bytes_) {
      if (scratch_) mem_.deallocate(scratch_, scratch_bytes_);
      scratch_ = nullptr;
      scratch_ = mem_.allocate(bytes, "reduction scratch");
      scratch_bytes_ = bytes;
    }
    return scratch_;
  }

  std::string label_;
  int device_ = 0;
  DeviceMemory mem_;
  cudaStream_t stream_{};
  StatsAcc* stats_host_ = nullptr;
  double* sum_host_ = nullptr;
  ncclComm_t peer_ = nullptr;  // NCCL over the ranks' GPUs (GRIDFORGE_HALO=nccl)
  // The halo exchange's stream: stream_, or side_ between halo_fork and halo_join.
  cudaStream_t xs_{}, side_ = nullptr;
  cudaEvent_t forked_ = nullptr, joined_ = nullptr;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  FixedStencil<T> fixed_;  // the taps' shape, when the marches can run them
  int tile_radius_ = 1;  // the radius the stencil kernels' tile offsets were made for
  // The operator of spmv (cuSPARSE CSR) and its vectors.
  cusparseHandle_t sparse_ = nullptr;
  cusparseSpMatDescr_t matrix_ = nullptr;
  cusparseDnVecDescr_t vec_x_ = nullptr, vec_y_ = nullptr;
  std::int64_t rows_ = 0;
  bool spmv_ready_ = false;
  DeviceBuffer rowptr_, colind_, values_, spmv_buffer_;
  // cuFFT plans and the two half spectra of the FFT solve.
  cufftHandle plan_r2c_{}, plan_c2r_{};
  bool fft_plans_ = false;
  std::int64_t fft_dims_[3] = {0, 0, 0};
  DeviceBuffer fft_f_, fft_u_;
  // Recorded chunks of steps (GRIDFORGE_CUDA_GRAPHS=0: none).
  bool graphs_on_ = true;
  std::vector<Graph> graphs_;
  std::uint64_t graph_clock_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int device) {
  const CudaStatus& st = cuda_status();
  if (!st.why_unusable.empty()) throw DeviceError(st.why_unusable);
  if (device < 0 || device >= static_cast<int>(st.gpus.size()))
    throw DeviceError("no CUDA device " + std::to_string(device) + " (this machine has " +
                      std::to_string(st.gpus.size()) + ")");
  return std::make_unique<CudaBackend<T>>(device);
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int);

}  // namespace gf
