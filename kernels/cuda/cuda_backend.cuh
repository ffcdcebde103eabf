// The CUDA device core (kernels/backend.hpp): device memory through the
// counting allocator, the compute stream and the halo exchange's stream,
// CUDA-event timers, pinned output snapshots, reduction scratch, and the
// recorded CUDA graphs of small steps. The workloads' CUDA executors
// (kernels/<workload>/<workload>_cuda.cu) run their kernels on it: this
// header is what they see of it.
#pragma once
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "grid/view.hpp"
#include "kernels/backend.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/halo_kernels.cuh"
#include "kernels/ops/boundary.hpp"

namespace gf {

// Blocks of 256 threads for a grid-stride loop over n values.
inline unsigned flat_blocks(std::int64_t n) {
  return unsigned(std::min<std::int64_t>((n + 255) / 256, 65535 * 8));
}

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

// ---- reductions ----

constexpr int kReduceThreads = 256;
constexpr int kMaxReduceBlocks = 2048;

// partials[b] = Σ f(idx) over the indices block b visits (grid-stride).
template <class F>
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(F f, std::int64_t n,
                                                                double* partials) {
  using BlockReduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  double acc = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * kReduceThreads;
  for (std::int64_t idx = blockIdx.x * std::int64_t(kReduceThreads) + threadIdx.x; idx < n;
       idx += stride)
    acc += f(idx);
  const double s = BlockReduce(tmp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// reduce_kernel over the points of a layout whose rows may be padded: the
// same points in the same order for every thread and block as reduce_kernel
// over a dense field of the grid, so the sums are bit for bit the same.
template <class F>
__global__ void __launch_bounds__(kReduceThreads) reduce_points_kernel(F f, Layout l,
                                                                       double* partials) {
  using BlockReduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  double acc = 0;
  const std::int64_t n = l.size();
  const std::int64_t stride = std::int64_t(gridDim.x) * kReduceThreads;
  std::int64_t q = blockIdx.x * std::int64_t(kReduceThreads) + threadIdx.x;
  if (q < n) {
    PointWalk w(l, q, stride);
    for (; q < n; q += stride, w.next()) {
      if constexpr (TermAt<F>::value)
        acc += f.at(w.i, w.j, w.k, w.index());
      else
        acc += f(w.index());
    }
  }
  const double s = BlockReduce(tmp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// Σ f.at(i, j, k, idx) over the points of layout l by tiles of 32 × 8
// points of a plane along `planes` planes, dealt to the blocks in a fixed
// order (tile t to block t mod gridDim.x): a deterministic sum, in an order
// of its own. A term that reads a point's neighbours (a residual) finds the
// plane below in L1, so each value comes from memory about once: the walk
// of reduce_points_kernel, whose threads are far apart in a field, read
// 3.3 GB for the 2.2 GB of u and f at 513³ float64 (ncu, H100).
template <class F>
__global__ void __launch_bounds__(kReduceThreads) reduce_tiles_kernel(F f, Layout l,
                                                                      std::int64_t tx,
                                                                      std::int64_t ty,
                                                                      std::int64_t tiles,
                                                                      int planes,
                                                                      double* partials) {
  static_assert(kReduceThreads == 256, "tiles of 32 x 8 threads");
  using BlockReduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  double acc = 0;
  const std::int64_t lx = threadIdx.x & 31, ly = threadIdx.x >> 5;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t bx = t % tx, r = t / tx, by = r % ty, bz = r / ty;
    const std::int64_t i = bx * 32 + lx, j = by * 8 + ly;
    if (i >= l.n[0] || j >= l.n[1]) continue;
    const std::int64_t k0 = bz * planes, k1 = min(k0 + planes, l.n[2]);
    std::int64_t idx = i + j * l.sy + k0 * l.sz;
    for (std::int64_t k = k0; k < k1; ++k, idx += l.sz) acc += f.at(i, j, k, idx);
  }
  const double s = BlockReduce(tmp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}
constexpr int kReduceTilePlanes = 8;

// ---- CUDA graphs of chunks of steps ----

// What a recorded graph was made for: the executor's kind of step (the
// address of a tag of its own), its arguments member by member (never their
// padding), the fields' layout, the two fields (in the order of the first
// step) and the number of steps. A graph is replayed only for the very
// arguments it was made with.
class GraphKey {
 public:
  explicit GraphKey(const void* kind) : kind_(kind) {}
  template <class V>
  GraphKey& add(const V& v) {
    static_assert(std::is_trivially_copyable_v<V> && std::is_scalar_v<V>, "a scalar or pointer");
    const auto* b = reinterpret_cast<const unsigned char*>(&v);
    bytes_.insert(bytes_.end(), b, b + sizeof(V));
    return *this;
  }
  template <class T>
  GraphKey& add_bc(const AxisBc<T> (&bc)[3]) {
    for (const AxisBc<T>& b : bc) add(b.lo).add(b.hi).add(b.ghost_lo).add(b.ghost_hi);
    return *this;
  }
  GraphKey& add_layout(const Layout& l) {
    for (int a = 0; a < 3; ++a) add(l.n[a]);
    return add(l.sy).add(l.sz);
  }
  bool operator==(const GraphKey& o) const { return kind_ == o.kind_ && bytes_ == o.bytes_; }

 private:
  const void* kind_;
  std::vector<unsigned char> bytes_;
};

// The launches `launches` queues on `stream`, captured (this thread's
// captures only: the writer thread may wait on its events meanwhile) and
// instantiated as a graph; nothing of them runs. Null when the capture fails
// (a CUDA error among the launches: a host wait, an allocation). An error
// that is not CUDA's ends the capture and goes on.
inline cudaGraphExec_t capture_graph(cudaStream_t stream, const std::function<void()>& launches) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  bool launched = true;
  try {
    launches();
  } catch (const DeviceError&) {
    launched = false;
  } catch (...) {
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (launched && end == cudaSuccess && graph &&
      cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
    exec = nullptr;
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();  // a failed capture is not the next call's error
  return exec;
}

// CUDA graphs of chunks of time steps or sweeps (an executor's run(n, ...))
// on grids of at most kGraphMaxPoints points, where a step's kernels run for
// a few microseconds and launching them one by one from the host costs as
// much. The first call with a key launches plainly (one-off chunks cost no
// recording, and the kernels are loaded outside a capture), the second
// records the n steps by stream capture (cudaStreamCaptureModeThreadLocal,
// so the writer thread's event waits are not affected) and instantiates the
// graph, later ones replay it; a capture that fails turns graphs off for the
// run. The graph holds the same kernels with the same arguments, so results
// are bit for bit those of launching them one by one.
class GraphCache {
 public:
  // 128³: above it a step's kernels run long enough to hide their launches.
  static constexpr std::int64_t kGraphMaxPoints = std::int64_t(1) << 21;
  // Steps in one graph at most: a Ctrl-C waits for at most one graph.
  static constexpr int kGraphSteps = 64;
  // Recorded graphs kept (a run uses two or three: its chunk length, the
  // remainder, each with the fields in either order).
  static constexpr std::size_t kMaxGraphs = 8;

  explicit GraphCache(bool on) : on_(on) {}
  bool on() const { return on_; }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;
  ~GraphCache() { drop(); }

  // Steps worth handing over in one call on grid g (Backend::steps_per_call).
  int steps_per_call(const Grid& g) const {
    return on_ && g.size() <= kGraphMaxPoints && !g.has_halo() ? kGraphSteps : 1;
  }

  // n steps u → tmp → u ... on `stream` by step(in, out) (views of the two
  // fields; u == tmp in place), recorded and replayed as described above, or
  // plain() where graphs do not apply. The result is in u (the fields are
  // swapped when n is odd, unless in place).
  template <class T, class Step, class Plain>
  void replay(cudaStream_t stream, GraphKey key, Field<T>& u, Field<T>& tmp, int n, Step&& step,
              Plain&& plain) {
    if (!on_ || n < 2 || u.grid().size() > kGraphMaxPoints || u.grid().has_halo()) {
      plain();
      return;
    }
    key.add(static_cast<const void*>(u.data())).add(static_cast<const void*>(tmp.data())).add(n);
    key.add_layout(u.layout());
    Graph* g = nullptr;
    for (Graph& c : graphs_)
      if (c.key == key) g = &c;
    if (!g) {
      if (graphs_.size() >= kMaxGraphs) {  // the least recently used goes
        auto lru = std::min_element(graphs_.begin(), graphs_.end(),
                                    [](const Graph& x, const Graph& y) { return x.used < y.used; });
        if (lru->exec) cudaGraphExecDestroy(lru->exec);
        graphs_.erase(lru);
      }
      graphs_.push_back(Graph{key, nullptr, ++clock_});
      plain();
      return;
    }
    g->used = ++clock_;
    if (!g->exec) g->exec = record(stream, n, u.data(), tmp.data(), u.layout(), step);
    if (!g->exec) {  // recording failed: plain launches from now on
      on_ = false;
      plain();
      return;
    }
    GF_CUDA_CHECK(cudaGraphLaunch(g->exec, stream));
    if (n % 2 && u.data() != tmp.data()) u.swap(tmp);
  }

  void drop() noexcept {
    for (Graph& g : graphs_)
      if (g.exec) cudaGraphExecDestroy(g.exec);
    graphs_.clear();
  }

 private:
  struct Graph {
    GraphKey key;
    cudaGraphExec_t exec = nullptr;  // null until the key is seen a second time
    std::uint64_t used = 0;
  };

  // The n steps captured from the stream (capture_graph). Null when the capture fails.
  template <class T, class Step>
  cudaGraphExec_t record(cudaStream_t stream, int n, T* u, T* tmp, const Layout& l, Step& step) {
    return capture_graph(stream, [&] {
      for (int s = 0; s < n; ++s) {
        step(FieldView<const T>(u, l), FieldView<T>(tmp, l));
        std::swap(u, tmp);  // nothing when in place (u == tmp)
      }
    });
  }

  bool on_;
  std::vector<Graph> graphs_;
  std::uint64_t clock_ = 0;
};

// ---- the device core ----

template <class T>
class CudaBackend final : public Backend<T> {
 public:
  // row_align: where its fields' rows start (Layout::aligned_rows), bytes.
  CudaBackend(int device, std::int64_t row_align);
  ~CudaBackend() override;

  std::string name() const override { return label_; }
  BackendKind kind() const override { return BackendKind::Cuda; }
  bool is_gpu() const override { return true; }
  MemoryResource& memory() override;
  std::unique_ptr<Timer> make_timer() override;
  // (xs_: the compute stream, or between halo_fork and halo_join the halo stream)
  void synchronize() override { GF_CUDA_CHECK(cudaStreamSynchronize(xs_)); }
  VectorOps<T>& vec() override { return *vec_; }

  void upload(const T* host, Field<T>& f) override;
  void download(const Field<T>& f, T* host) override;
  Field<T> make_field(const Grid& g, const std::string& what) override;
  void copy(const Field<T>& src, Field<T>& dst) override;
  std::unique_ptr<Snapshots<T>> make_snapshots(const Grid& g, int slots,
                                               std::string* why) override;
  int steps_per_call(const Grid& g) const override { return graphs_.steps_per_call(g); }
  void recorded(const typename Backend<T>::RecordKey& key,
                const std::function<void()>& launches) override;
  void forget_recorded(std::uint64_t owner) override;

  void halo_fork() override;
  void halo_join() override;
  void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
            Field<T>& buf) override;
  void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
              const Field<T>& buf) override;
  void pin_host(void* p, std::size_t bytes) override;
  void unpin_host(void* p) override;
  std::string peer_unavailable() override;
  void peer_id(unsigned char* id) override;
  void peer_connect(const unsigned char* id, int nranks, int rank) override;
  void peer_exchange(const Field<T>* send, Field<T>* recv, const int* peer,
                     std::int64_t count) override;
  void download_image(const Field<float>& img, float* host) override;
  void download_image_rgb8(const Field<float>& img, unsigned char* host) override;

  // ---- for the workloads' CUDA executors ----
  int device() const { return device_; }
  int device_index() const override { return device_; }
  // The layout make_field gives a field of grid g.
  Layout field_layout(const Grid& g) const {
    return Layout::aligned_rows(g.n.data(), std::int64_t(sizeof(T)), row_align_);
  }
  const std::string& label() const { return label_; }
  // The compute stream, where every step's kernels go.
  cudaStream_t stream() const { return stream_; }
  // The halo exchange's stream: the compute stream, or between halo_fork
  // and halo_join the halo stream (part Shell of a split step goes there).
  cudaStream_t exchange_stream() const { return xs_; }
  GraphCache& graphs() { return graphs_; }
  // Scratch memory for reductions, grown as needed and kept.
  void* scratch(std::size_t bytes);
  // Σ f(idx) over idx < n in double: per-block CUB BlockReduce into
  // partials, then cub::DeviceReduce::Sum over them (deterministic: no
  // result depends on the order blocks finish); one read-back.
  template <class F>
  double reduce(const F& f, std::int64_t n) {
    return reduce_over(n, [&](int blocks, double* partials) {
      reduce_kernel<F><<<blocks, kReduceThreads, 0, stream_>>>(f, n, partials);
    });
  }
  // Σ f(idx) over the points of layout l (not a padded row's padding), in
  // the order reduce() takes a dense field's values: the same sums. A term
  // with at(i, j, k, idx) (TermAt) is given the point's coordinates.
  template <class F>
  double reduce_points(const F& f, const Layout& l) {
    if constexpr (!TermAt<F>::value)
      if (l.is_dense()) return reduce(f, l.size());
    return reduce_over(l.size(), [&](int blocks, double* partials) {
      reduce_points_kernel<F><<<blocks, kReduceThreads, 0, stream_>>>(f, l, partials);
    });
  }
  // Σ f(idx) over the points a field of grid g and layout l owns: every
  // point of one rank's grid, the owned box of a rank's padded block
  // (f still runs at every point: its writes cover the halo too).
  template <class F>
  double reduce_field(const F& f, const Grid& g, const Layout& l) {
    if (!g.has_halo()) return reduce_points(f, l);
    return reduce_points(OwnedOnly<F>{f, OwnedMask::of(g, l)}, l);
  }
  // Σ f.at(i, j, k, idx) (TermAt) over the points a field of grid g and
  // layout l owns, by reduce_tiles_kernel: another order than
  // reduce_field's, so for sums that only decide (a residual's norm), never
  // for values a result is made of.
  template <class F>
  double reduce_field_tiles(const F& f, const Grid& g, const Layout& l) {
    if (g.has_halo()) return reduce_tiles(OwnedOnly<F>{f, OwnedMask::of(g, l)}, l);
    return reduce_tiles(f, l);
  }
  template <class F>
  double reduce_tiles(const F& f, const Layout& l) {
    static_assert(TermAt<F>::value, "a term of the point's coordinates");
    const std::int64_t tx = (l.n[0] + 31) / 32, ty = (l.n[1] + 7) / 8;
    const std::int64_t tiles = tx * ty * ((l.n[2] + kReduceTilePlanes - 1) / kReduceTilePlanes);
    return reduce_over(tiles * kReduceThreads, [&](int blocks, double* partials) {
      reduce_tiles_kernel<F><<<blocks, kReduceThreads, 0, stream_>>>(f, l, tx, ty, tiles,
                                                                    kReduceTilePlanes, partials);
    });
  }
  // The partials of `launch(blocks, partials)` over n values, summed.
  template <class L>
  double reduce_over(std::int64_t n, const L& launch) {
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
    launch(blocks, partials);
    GF_CUDA_CHECK_LAUNCH();
    GF_CUDA_CHECK(cub::DeviceReduce::Sum(base + kPartials, temp, partials, sum, blocks, stream_));
    GF_CUDA_CHECK(
        cudaMemcpyAsync(sum_host_, sum, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    GF_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return *sum_host_;
  }
  // Host memory the reductions read back through (pinned), at least 64 bytes.
  void* host_readback() { return readback_; }

 private:
  struct Impl;  // memory, NCCL, the halo stream's events: cuda_backend.cu
  std::string label_;
  int device_ = 0;
  std::int64_t row_align_ = 0;
  std::unique_ptr<Impl> impl_;
  cudaStream_t stream_{};
  cudaStream_t xs_{};
  double* sum_host_ = nullptr;
  void* readback_ = nullptr;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  GraphCache graphs_;
  std::unique_ptr<VectorOps<T>> vec_;
};

extern template class CudaBackend<float>;
extern template class CudaBackend<double>;

// The CUDA core under a backend that a workload's CUDA executor was made
// for (kernels/exec.hpp makes them for a backend of kind Cuda only).
template <class T>
CudaBackend<T>& cuda_core(Backend<T>& be) {
  return static_cast<CudaBackend<T>&>(be);
}

}  // namespace gf
