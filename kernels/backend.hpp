// The device core: what every workload needs from the place its fields live
// (memory, transfers, streams, timers, output snapshots, the halo exchange's
// primitives), and the vector operations on that memory (kernels/vector.hpp).
// The workloads' own operations are executors of their own, one per
// workload, beside its point formulas (kernels/<workload>/): a solver makes
// its executor from the backend it runs on (make_heat_exec(backend), ...).
//
// Three implementations: CpuBackend (kernels/cpu/, the reference: plain
// loops, OpenMP), CudaBackend (kernels/cuda/: CUDA streams and events,
// pinned snapshots, CUDA graphs of small steps, NCCL) and DistributedBackend
// (kernels/dist/: one rank's block of a grid split over MPI ranks, wrapping a
// rank's CPU or CUDA backend).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "grid/field.hpp"
#include "kernels/vector.hpp"

namespace gf {

constexpr int kPeerIdBytes = 128;  // ncclUniqueId

// Times a region of device work (CUDA events on the GPU, a steady clock on the CPU).
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual double stop_ms() = 0;  // waits for the work in the region
};

// Host copies of a field taken without holding up the backend's work: the
// run driver (solvers/run.cpp) takes one at an output step and a background
// thread writes the files from it while the steps go on.
template <class T>
class Snapshots {
 public:
  virtual ~Snapshots() = default;
  virtual int slots() const = 0;
  // Starts copying f, as it stands after the work queued so far, into the
  // host buffer of slot s (not in use: its last copy waited for and read).
  // On the GPU this queues a device-to-device copy into a spare device
  // buffer on the compute stream and its download on a stream of its own,
  // and returns; on the CPU it is the copy itself.
  virtual void take(const Field<T>& f, int s) = 0;
  // Waits until slot s holds its copy. Called from the writer's thread.
  virtual void wait(int s) = 0;
  virtual const T* host(int s) const = 0;
};

// The two parts of a step split for the overlapped halo exchange
// (kernels/dist/): the points outside a core box, then the points inside it.
enum class StepPart { Shell, Core };

// Which executor family a backend belongs to: the workloads' executor
// factories (kernels/exec.hpp) pick theirs by it.
enum class BackendKind { Cpu, Cuda, Distributed };

template <class T>
class Backend;

// The plain snapshots: download() into host vectors, on the caller's thread
// (the CPU backend, and any backend without anything better).
template <class T>
class HostSnapshots final : public Snapshots<T> {
 public:
  HostSnapshots(Backend<T>& be, std::size_t values, int slots)
      : be_(be), host_(std::size_t(slots), std::vector<T>(values)) {}
  int slots() const override { return int(host_.size()); }
  void take(const Field<T>& f, int s) override;
  void wait(int) override {}
  const T* host(int s) const override { return host_[std::size_t(s)].data(); }

 private:
  Backend<T>& be_;
  std::vector<std::vector<T>> host_;
};

template <class T>
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu (16 threads)" or e.g. "NVIDIA H200 (GPU 0)"
  virtual BackendKind kind() const = 0;
  virtual bool is_gpu() const = 0;  // the fields live on a GPU (also under a wrapper)
  // The index of the GPU a CUDA backend runs on (−1 elsewhere): a second
  // backend on the same device (mixed precision's float32 one) is made with it.
  virtual int device_index() const { return -1; }
  virtual MemoryResource& memory() = 0;
  virtual std::unique_ptr<Timer> make_timer() = 0;
  virtual void synchronize() = 0;

  // The vector operations and reductions on this backend's memory.
  virtual VectorOps<T>& vec() = 0;

  // A field of grid g in this backend's memory, in the layout the backend
  // gives its fields: dense on the CPU; on the GPU rows padded to whole
  // 16-byte vectors and cache lines (Layout::aligned_rows), the padding zero.
  virtual Field<T> make_field(const Grid& g, const std::string& what) {
    return Field<T>(g, memory(), what);
  }
  // A field of grid g in the dense layout on every backend: for libraries
  // that take dense arrays (cuFFT's plans in the fft solve).
  Field<T> make_dense_field(const Grid& g, const std::string& what) {
    return Field<T>(g, memory(), what);
  }
  // The values of f to and from a host array of its grid's points in the
  // dense layout (x fastest, rows n[0] apart: Grid::layout()), whatever the
  // field's own layout; a padded row's padding is neither read nor written.
  virtual void upload(const T* host, Field<T>& f) = 0;
  virtual void download(const Field<T>& f, T* host) = 0;
  // dst = src, same size: a device-to-device copy on the GPU, a parallel
  // loop on the CPU. Moves 2 × bytes (read + write): bench's copy ceiling.
  virtual void copy(const Field<T>& src, Field<T>& dst) = 0;
  // `slots` snapshot buffers for fields of grid g, or null with the reason
  // in *why when the backend cannot spare the memory (the GPU keeps a spare
  // device field for them): the caller then downloads and writes in turn.
  virtual std::unique_ptr<Snapshots<T>> make_snapshots(const Grid& g, int slots,
                                                       std::string* why) {
    (void)why;
    return std::make_unique<HostSnapshots<T>>(*this, std::size_t(g.layout().span()), slots);
  }

  // The backend of this rank's own device under any wrapper (the one a
  // distributed backend wraps): for work on one rank's memory alone, such
  // as rank 0 rendering a gathered volume.
  virtual Backend<T>& rank_backend() { return *this; }

  // How many time steps or sweeps are worth handing over in one call on
  // grid g (an executor's run(n, ...)): more than 1 where the backend
  // replays a recorded chunk of them (a CUDA graph on small grids, where
  // launching the kernels one by one costs more than running them); 1 where
  // it gains nothing (the caller then steps one at a time and can stop
  // between any two).
  virtual int steps_per_call(const Grid& g) const {
    (void)g;
    return 1;
  }

  // ---- Recorded launches (a multigrid cycle: solvers/multigrid.cpp) ----
  // Runs `launches`: work queued on this backend's stream alone, with no
  // wait on the host and no allocation. Where the backend can (the GPU,
  // unless GRIDFORGE_CUDA_GRAPHS=0), a call after the first few with the
  // same key records them as one CUDA graph and later calls replay it, so
  // that a sequence of many short kernels costs one launch; elsewhere, the
  // first few times, and where a recording fails, they run as they are. The same key
  // must mean the same launches with the same arguments (the owner's id,
  // what it runs, the fields it runs on): a replay gives their results bit
  // for bit. forget_recorded(owner) drops an owner's recordings (before the
  // fields they name go).
  struct RecordKey {
    std::uint64_t owner = 0;
    int what = 0;
    const void* a = nullptr;
    const void* b = nullptr;
    bool operator<(const RecordKey& o) const {
      if (owner != o.owner) return owner < o.owner;
      if (what != o.what) return what < o.what;
      if (a != o.a) return a < o.a;
      return b < o.b;
    }
  };
  virtual void recorded(const RecordKey& key, const std::function<void()>& launches) {
    (void)key;
    launches();
  }
  virtual void forget_recorded(std::uint64_t owner) { (void)owner; }
  // A new owner of recordings (unique in the process).
  static std::uint64_t new_record_owner() {
    static std::atomic<std::uint64_t> next{0};
    return ++next;
  }

  // ---- Streams of the overlapped halo exchange (kernels/dist/) ----
  // Between halo_fork() and halo_join() the exchange's work (pack, unpack,
  // peer_exchange, upload, download, synchronize) and part Shell of a split
  // step go on a stream of its own that starts after the work queued so far,
  // so that kernels queued meanwhile on the compute stream (part Core) run
  // beside them; halo_join() makes the work queued after it wait for them.
  // Nothing on the CPU, whose calls return when done.
  virtual void halo_fork() {}
  virtual void halo_join() {}

  // ---- Halo exchange primitives (kernels/dist/) ----
  // buf[...] = f over the box [lo, lo + count) (x fastest), and back. buf is
  // a one-dimensional field of this backend of at least the box's size.
  virtual void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
                    Field<T>& buf) = 0;
  virtual void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
                      const Field<T>& buf) = 0;
  // Page-locks host memory that upload/download use again and again (the
  // staged halo buffers), so that the copies run at full speed; best effort
  // (nothing on the CPU, nothing when the driver refuses).
  virtual void pin_host(void* p, std::size_t bytes) { (void)p, (void)bytes; }
  virtual void unpin_host(void* p) { (void)p; }
  // Whether the backend can exchange slabs with the other ranks' devices
  // itself (the GPU, when libnccl.so.2 loads); "" when it can, else why not.
  virtual std::string peer_unavailable() { return "not a GPU"; }
  // A communicator over every rank's device: rank 0 makes the id
  // (kPeerIdBytes bytes), every rank connects with it (collective).
  virtual void peer_id(unsigned char* id) { (void)id; }
  virtual void peer_connect(const unsigned char* id, int nranks, int rank) {
    (void)id, (void)nranks, (void)rank;
  }
  // One group, ordered on the backend's stream (no host synchronisation):
  // count values of send[s] to peer[s] and of recv[s] from peer[s], s = 0, 1
  // (peer −1: none). Messages between two ranks match in the order posted:
  // sends go toward peer[1] first, receives come from peer[0] first.
  virtual void peer_exchange(const Field<T>* send, Field<T>* recv, const int* peer,
                             std::int64_t count) {
    (void)send, (void)recv, (void)peer, (void)count;
  }

  // ---- Images (the raymarch executor renders into them) ----
  // An image of width × height RGBA floats (row 0 the top), in this backend's memory.
  Field<float> make_image(int width, int height) {
    Grid g;
    g.ndim = 2;
    g.n = {4 * std::int64_t(width), std::int64_t(height), 1};
    return Field<float>(g, memory(), "the image");
  }
  virtual void download_image(const Field<float>& img, float* host) = 0;
  // The image as its PNG stores it: width·height·3 bytes of 8-bit RGB
  // (rgb8_level of each channel, core/rgb8.hpp), quantised where the image
  // lives: a GPU sends a fifth of the float image's bytes.
  virtual void download_image_rgb8(const Field<float>& img, unsigned char* host) = 0;
};

template <class T>
void HostSnapshots<T>::take(const Field<T>& f, int s) {
  be_.download(f, host_[std::size_t(s)].data());
}

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend();

}  // namespace gf
