// The coarse operations a solver calls, one call per step or sweep. A solver
// is written once against Backend<T>; CpuBackend (reference loops, OpenMP)
// and CudaBackend (kernels) implement it with the formulas of kernels/ops.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "grid/field.hpp"
#include "kernels/ops/heat.hpp"
#include "kernels/ops/laplace.hpp"
#include "kernels/ops/raymarch.hpp"
#include "kernels/ops/stencil.hpp"
#include "kernels/ops/time_block.hpp"
#include "kernels/ops/stream.hpp"

namespace gf {

constexpr int kPeerIdBytes = 128;  // ncclUniqueId

// Over the points the field's rank owns (all of them on one rank: the halo
// of a rank-local grid, grid.hpp, is never counted).
struct FieldStats {
  double min = 0, max = 0, mean = 0;
  std::int64_t nonfinite = 0;  // NaN and ±Inf values
  double sum = 0;              // of the finite values (ranks add these up)
  std::int64_t count = 0;      // finite values
};

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
// (grid/halo.hpp): the points outside a core box, then the points inside it.
enum class StepPart { Shell, Core };

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
  virtual std::string name() const = 0;   // "cpu" or e.g. "NVIDIA H200 (GPU 0)"
  virtual bool is_gpu() const = 0;
  virtual MemoryResource& memory() = 0;
  virtual std::unique_ptr<Timer> make_timer() = 0;
  virtual void synchronize() = 0;

  Field<T> make_field(const Grid& g, const std::string& what) { return Field<T>(g, memory(), what); }
  virtual void upload(const T* host, Field<T>& f) = 0;
  virtual void download(const Field<T>& f, T* host) = 0;
  // `slots` snapshot buffers for fields of grid g, or null with the reason
  // in *why when the backend cannot spare the memory (the GPU keeps a spare
  // device field for them): the caller then downloads and writes in turn.
  virtual std::unique_ptr<Snapshots<T>> make_snapshots(const Grid& g, int slots,
                                                       std::string* why) {
    (void)why;
    return std::make_unique<HostSnapshots<T>>(*this, std::size_t(g.size()), slots);
  }

  // The backend of this rank's own device under any wrapper (the one a
  // distributed backend wraps, grid/halo.hpp): for work on one rank's memory
  // alone, such as rank 0 rendering a gathered volume.
  virtual Backend<T>& rank_backend() { return *this; }

  // One explicit heat step: out = FTCS(in) at every point (Dirichlet points copied).
  virtual void heat_step(const HeatArgs<T>& args, const Field<T>& in, Field<T>& out) = 0;
  // Temporal blocking: how many explicit heat steps this backend takes in
  // one pass over memory for these args. asked = k forces k where the
  // backend has such a pass, else 1; asked = 0 (auto) returns the deepest
  // pass it has for these args (1: none), and the solver times the depths up
  // to it and keeps the fastest. The CPU and CUDA executors have passes for
  // 3D grids (k = 2 to 4); the default here, and over several ranks, is 1.
  virtual int heat_time_block(const HeatArgs<T>& args, int asked) const {
    (void)args;
    (void)asked;
    return 1;
  }
  // k = heat_time_block(args, ·) > 1 steps in one pass, in → out: bit for bit
  // the result of k heat_step calls.
  virtual void heat_steps(const HeatArgs<T>& args, int k, const Field<T>& in, Field<T>& out) {
    (void)args;
    (void)k;
    (void)in;
    (void)out;
    throw DeviceError(name() + " has no temporally blocked heat pass");
  }
  // How many time steps (heat_run, stencil_run) or sweeps (jacobi_run,
  // sor_run) are worth handing over in one call on grid g: more than 1 where
  // the backend replays a recorded chunk of them (a CUDA graph on small
  // grids, where launching the kernels one by one costs more than running
  // them); 1 where it gains nothing (the caller then steps one at a time and
  // can stop between any two).
  virtual int steps_per_call(const Grid& g) const {
    (void)g;
    return 1;
  }
  // n explicit heat steps with the same args, u → tmp → u ...: the result is
  // in u (the fields are swapped when n is odd), tmp is overwritten. Bit for
  // bit n heat_step calls.
  virtual void heat_run(const HeatArgs<T>& args, int n, Field<T>& u, Field<T>& tmp) {
    for (int s = 0; s < n; ++s) {
      heat_step(args, u, tmp);
      u.swap(tmp);
    }
  }
  // Temporal blocking of the stencil, as heat_time_block and heat_steps: for
  // a 3D star of radius 1 with its taps in the presets' order (ops/time_block.hpp,
  // whatever the weights, update or replace) the CPU and CUDA executors have
  // passes of k = 2 to 4; 1 for any other stencil. Asked after set_stencil_taps.
  virtual int stencil_time_block(const StencilArgs<T>& args, int asked) const {
    (void)args;
    (void)asked;
    return 1;
  }
  virtual void stencil_steps(const StencilArgs<T>& args, int k, const Field<T>& in,
                             Field<T>& out) {
    (void)args;
    (void)k;
    (void)in;
    (void)out;
    throw DeviceError(name() + " has no temporally blocked stencil pass");
  }
  // The stencil's taps (at most kMaxStencilTaps), kept by the backend (in
  // constant memory on the GPU) for the apply_stencil calls that follow.
  virtual void set_stencil_taps(const std::vector<StencilTap<T>>& taps) = 0;
  // One stencil step: out = stencil(in) at every point (Dirichlet points copied).
  virtual void apply_stencil(const StencilArgs<T>& args, const Field<T>& in, Field<T>& out) = 0;
  // n stencil steps as heat_run takes heat steps.
  virtual void stencil_run(const StencilArgs<T>& args, int n, Field<T>& u, Field<T>& tmp) {
    for (int s = 0; s < n; ++s) {
      apply_stencil(args, u, tmp);
      u.swap(tmp);
    }
  }

  // min, max, mean and count of non-finite values, in one pass. Like every
  // sum below (residual, dot, cg_update), over the points the field's rank
  // owns: the halo of a rank-local grid is not counted.
  virtual FieldStats stats(const Field<T>& f) = 0;

  // ---- Laplace / Poisson and the implicit heat solves (ops/laplace.hpp) ----
  // One Jacobi sweep: out = Jacobi(in) at every point (Dirichlet points copied).
  virtual void jacobi_sweep(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out) = 0;
  // One half of a red-black SOR sweep, in place: the points of one colour (0 red, 1 black).
  virtual void sor_sweep(const LaplaceArgs<T>& a, Field<T>& u, int colour) = 0;
  // Temporal blocking of Jacobi, as heat_time_block and heat_steps: k sweeps
  // in one pass, bit for bit k jacobi_sweep calls. The CPU and CUDA executors
  // have passes of k = 2 to 4 for 3D grids; 1 elsewhere.
  virtual int jacobi_time_block(const LaplaceArgs<T>& a, int asked) const {
    (void)a;
    (void)asked;
    return 1;
  }
  virtual void jacobi_steps(const LaplaceArgs<T>& a, int k, const Field<T>& in, Field<T>& out) {
    (void)a;
    (void)k;
    (void)in;
    (void)out;
    throw DeviceError(name() + " has no temporally blocked Jacobi pass");
  }
  // n Jacobi sweeps u → tmp → u ... (result in u, as heat_run), and n whole
  // red-black SOR sweeps (red then black) in place: bit for bit the single calls.
  virtual void jacobi_run(const LaplaceArgs<T>& a, int n, Field<T>& u, Field<T>& tmp) {
    for (int s = 0; s < n; ++s) {
      jacobi_sweep(a, u, tmp);
      u.swap(tmp);
    }
  }
  virtual void sor_run(const LaplaceArgs<T>& a, int n, Field<T>& u) {
    for (int s = 0; s < n; ++s) {
      sor_sweep(a, u, 0);
      sor_sweep(a, u, 1);
    }
  }
  // r = W·(f_coef·f + lap_coef·L u) at every point (0 at Dirichlet points),
  // stored in *r when r is given; returns Σ r² (accumulated in double).
  virtual double residual(const LaplaceArgs<T>& a, const Field<T>& u, Field<T>* r) = 0;
  // The operator A of apply_point that spmv applies, kept by the backend (a
  // CSR matrix on the GPU, for cuSPARSE; the args themselves on the CPU).
  virtual void set_operator(const LaplaceArgs<T>& a) = 0;
  virtual void spmv(const Field<T>& x, Field<T>& y) = 0;  // y = A x
  virtual double dot(const Field<T>& x, const Field<T>& y) = 0;  // in double
  // y = a·x + b·y (y is not read when b is 0).
  virtual void axpby(T a, const Field<T>& x, T b, Field<T>& y) = 0;
  // CG's update: u += α·p, r −= α·q; returns Σ r² of the new r (in double).
  virtual double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                           Field<T>& r) = 0;
  virtual void add_constant(Field<T>& u, T c) = 0;
  // The spectral solution of ∇²u = f on a grid periodic on every axis (f's
  // mean is dropped; u has mean 0). Returns the relative spectral residual
  // ‖f − ∇²u‖₂ / ‖f‖₂ of the u written, measured by transforming u again.
  virtual double fft_poisson(const LaplaceArgs<T>& a, const Field<T>& f, Field<T>& u) = 0;
  // Plans the transforms and takes the spectra's memory for fft_poisson on
  // this grid, so that the solve's time is the solve's (setup, not compute).
  virtual void prepare_fft(const LaplaceArgs<T>& a) { (void)a; }

  // ---- Steps split in two, for the overlapped halo exchange (grid/halo.hpp) ----
  // One heat step, Jacobi sweep or stencil step in two parts: part Shell
  // writes out at every point outside box `core`, part Core at every point
  // inside it (the same formula at every point as the whole step: together
  // bit for bit the whole step). Core reads only `in`, writes only the core,
  // and may run while the shell's faces travel. False, having done nothing,
  // where the backend does not split this step (the caller then takes the
  // whole step): the CPU always splits; the GPU where its marches run.
  virtual bool heat_step_part(const HeatArgs<T>& args, const Field<T>& in, Field<T>& out,
                              const Box& core, StepPart part) {
    (void)args, (void)in, (void)out, (void)core, (void)part;
    return false;
  }
  virtual bool jacobi_sweep_part(const LaplaceArgs<T>& a, const Field<T>& in, Field<T>& out,
                                 const Box& core, StepPart part) {
    (void)a, (void)in, (void)out, (void)core, (void)part;
    return false;
  }
  virtual bool stencil_part(const StencilArgs<T>& args, const Field<T>& in, Field<T>& out,
                            const Box& core, StepPart part) {
    (void)args, (void)in, (void)out, (void)core, (void)part;
    return false;
  }
  // Between halo_fork() and halo_join() the exchange's work (pack, unpack,
  // peer_exchange, upload, download, synchronize) and part Shell of a split
  // step go on a stream of its own that starts after the work queued so far,
  // so that kernels queued meanwhile on the compute stream (part Core) run
  // beside them; halo_join() makes the work queued after it wait for them.
  // Nothing on the CPU, whose calls return when done.
  virtual void halo_fork() {}
  virtual void halo_join() {}

  // ---- Halo exchange (grid/halo.hpp) ----
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

  // ---- Device-to-device halo exchange (NCCL on the GPU; grid/halo.hpp) ----
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

  // ---- Reference loads for `gridforge bench`'s bandwidth ceilings ----
  // dst = src, same size: a device-to-device copy on the GPU (cudaMemcpyAsync),
  // a parallel loop on the CPU. Moves 2 × bytes (read + write).
  virtual void copy(const Field<T>& src, Field<T>& dst) = 0;
  // STREAM's triad a = b + s·c (ops/stream.hpp), same sizes. Moves 3 × bytes.
  virtual void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) = 0;

  // ---- Raymarch (ops/raymarch.hpp) ----
  // An image of a.width × a.height RGBA floats (row 0 the top), in this backend's memory.
  Field<float> make_image(const RayArgs<T>& a) {
    Grid g;
    g.ndim = 2;
    g.n = {4 * std::int64_t(a.width), std::int64_t(a.height), 1};
    return Field<float>(g, memory(), "the image");
  }
  // Renders the volume (a 3D field of a.n points, where the backend keeps it:
  // nothing is downloaded) into img, render_pixel at every pixel.
  virtual void raymarch(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img) = 0;
  virtual void download_image(const Field<float>& img, float* host) = 0;
};

template <class T>
void HostSnapshots<T>::take(const Field<T>& f, int s) {
  be_.download(f, host_[std::size_t(s)].data());
}

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend();

}  // namespace gf
