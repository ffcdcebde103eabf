// CpuBackend: the reference executor. Plain loops over the grid that call the
// kernels/ops formulas, parallel over the outer axes with OpenMP. Keep it
// simple enough to trust by reading: the GPU is validated against it.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "core/error.hpp"
#include "kernels/backend.hpp"
#include "kernels/device.hpp"

namespace gf {
namespace {

class HostMemory final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes, const std::string& what) override {
    // 64-byte alignment for vector loads; round the size up as aligned_alloc wants.
    std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p) {
      // Same words as the GPU's message and the check before the run.
      char msg[160];
      std::snprintf(msg, sizeof msg, " (%.3g GiB) on the host: %.3g GiB free",
                    double(bytes) / 1073741824.0, double(host_memory_available()) / 1073741824.0);
      throw DeviceError("out of host memory allocating " + what + msg +
                        "; use a smaller grid or float32");
    }
    count_alloc(bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    std::free(p);
    count_free(bytes);
  }
  bool host_accessible() const override { return true; }
};

class WallTimer final : public Timer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  double stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};

template <int D, class T>
void heat_step_cpu(const HeatArgs<T>& a, const T* in, T* out) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i)
        out[i + nx * (j + ny * k)] = heat_point_bc<D>(a, in, i, j, k);
}

template <int D, class T>
void stencil_cpu(const StencilArgs<T>& a, const StencilTap<T>* taps, const T* in, T* out) {
  const std::int64_t nx = a.n[0], ny = a.n[1], nz = a.n[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i)
        out[i + nx * (j + ny * k)] = stencil_point_bc<D>(a, taps, in, i, j, k);
}

template <class T>
class CpuBackend final : public Backend<T> {
 public:
  std::string name() const override {
    return "cpu (" + std::to_string(omp_get_max_threads()) + " threads)";
  }
  bool is_gpu() const override { return false; }
  MemoryResource& memory() override { return mem_; }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<WallTimer>(); }
  void synchronize() override {}

  void upload(const T* host, Field<T>& f) override {
    std::memcpy(f.data(), host, f.bytes());
  }
  void download(const Field<T>& f, T* host) override {
    std::memcpy(host, f.data(), f.bytes());
  }

  void heat_step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    switch (a.ndim) {
      case 1: heat_step_cpu<1>(a, in.data(), out.data()); break;
      case 2: heat_step_cpu<2>(a, in.data(), out.data()); break;
      default: heat_step_cpu<3>(a, in.data(), out.data()); break;
    }
  }

  void set_stencil_taps(const std::vector<StencilTap<T>>& taps) override { taps_ = taps; }
  void apply_stencil(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    switch (a.ndim) {
      case 1: stencil_cpu<1>(a, taps_.data(), in.data(), out.data()); break;
      case 2: stencil_cpu<2>(a, taps_.data(), in.data(), out.data()); break;
      default: stencil_cpu<3>(a, taps_.data(), in.data(), out.data()); break;
    }
  }

  FieldStats stats(const Field<T>& f) override {
    const T* u = f.data();
    const std::int64_t n = static_cast<std::int64_t>(f.size());
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    std::int64_t bad = 0;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : sum, bad)
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = u[i];
      if (!std::isfinite(v)) {
        ++bad;
        continue;
      }
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += v;
    }
    FieldStats s;
    s.nonfinite = bad;
    s.min = lo;
    s.max = hi;
    s.mean = n > bad ? sum / double(n - bad) : 0.0;
    return s;
  }

 private:
  HostMemory mem_;
  std::vector<StencilTap<T>> taps_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
  return std::make_unique<CpuBackend<T>>();
}
template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace gf
