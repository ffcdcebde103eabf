// CpuBackend: the reference executor's device core (host memory, transfers
// that are copies) and its vector operations, plain OpenMP loops. The
// workloads' CPU executors are beside their formulas (kernels/<workload>/).
#include <sys/mman.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "core/error.hpp"
#include "core/rgb8.hpp"
#include "kernels/backend.hpp"
#include "kernels/cpu/loops.hpp"
#include "kernels/device.hpp"
#include "kernels/ops/stream.hpp"

namespace gf {
namespace {

using namespace cpu;

class HostMemory final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes, const std::string& what) override {
    // 64-byte alignment for vector loads; round the size up as aligned_alloc wants.
    // Arrays of 2 MiB or more start on a 2 MiB boundary and ask for transparent
    // huge pages (only a hint; where THP is in "madvise" mode, as on Debian,
    // there are none without it): a 3D stencil walks three planes and an output
    // at once, and on 4 KiB pages large grids run markedly slower
    // (docs/performance.md). The bench's triad allocates here too.
    const std::size_t huge = std::size_t(2) << 20;
    const std::size_t align = bytes >= huge ? huge : 64;
    std::size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded ? rounded : 64);
    if (p && align == huge) madvise(p, rounded, MADV_HUGEPAGE);
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

// Copies between box [lo, lo + c) of a field and a packed buffer (x fastest).
template <class T, bool ToBuf>
void copy_box(const FieldView<T>& box, T* buf) {
  const Layout packed = Layout::dense(box.n);
  const std::size_t row = std::size_t(box.n[0]) * sizeof(T);
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_for(packed.size()))
  for (std::int64_t k = 0; k < box.n[2]; ++k)
    for (std::int64_t j = 0; j < box.n[1]; ++j) {
      T* r = &box(0, j, k);
      T* b = buf + packed.index(0, j, k);
      if constexpr (ToBuf)
        std::memcpy(b, r, row);
      else
        std::memcpy(r, b, row);
    }
}

template <class T>
class CpuVector final : public VectorOps<T> {
 public:
  FieldStats stats(const Field<T>& f) override {
    const T* u = f.data();
    const Grid& g = f.grid();
    const Layout& l = f.layout();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    std::int64_t bad = 0;
    const std::int64_t n = g.has_halo() ? g.owned_size() : l.size();
    if (!g.has_halo() && l.is_dense()) {
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : sum, bad) \
    num_threads(threads_for(n))
      for (std::int64_t i = 0; i < n; ++i) accumulate(u[i], lo, hi, sum, bad);
    } else {  // the owned box only
      const std::int64_t b0[3] = {g.halo_lo[0], g.halo_lo[1], g.halo_lo[2]};
      const std::int64_t cnt[3] = {g.owned(0), g.owned(1), g.owned(2)};
      const FieldView<const T> box = f.view().box(b0, cnt);
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : sum, bad) \
    num_threads(threads_for(n))
      for (std::int64_t q = 0; q < n; ++q) accumulate(box[box.index_of_point(q)], lo, hi, sum, bad);
    }
    FieldStats s;
    s.nonfinite = bad;
    s.min = lo;
    s.max = hi;
    s.mean = n > bad ? sum / double(n - bad) : 0.0;
    s.sum = sum;
    s.count = n - bad;
    return s;
  }

  double dot(const Field<T>& x, const Field<T>& y) override {
    const T* a = x.data();
    const T* b = y.data();
    return sum_owned(x.grid(), x.layout(),
                     [&](std::int64_t i) { return double(a[i]) * double(b[i]); });
  }

  void axpby(T a, const Field<T>& x, T b, Field<T>& y) override {
    const T* xs = x.data();
    T* ys = y.data();
    const std::int64_t n = static_cast<std::int64_t>(x.size());
    if (b == T(0)) {
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
      for (std::int64_t i = 0; i < n; ++i) ys[i] = a * xs[i];
    } else {
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
      for (std::int64_t i = 0; i < n; ++i) ys[i] = a * xs[i] + b * ys[i];
    }
  }

  double cg_update(T alpha, const Field<T>& p, const Field<T>& q, Field<T>& u,
                   Field<T>& r) override {
    const T* ps = p.data();
    const T* qs = q.data();
    T* us = u.data();
    T* rs = r.data();
    const std::int64_t n = static_cast<std::int64_t>(p.size());
    double s = 0;
    if (p.grid().has_halo() || !p.layout().is_dense()) {  // Σ r² over the owned points
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
      for (std::int64_t i = 0; i < n; ++i) {
        us[i] += alpha * ps[i];
        rs[i] -= alpha * qs[i];
      }
      return sum_owned(p.grid(), p.layout(),
                       [&](std::int64_t i) { return double(rs[i]) * double(rs[i]); });
    }
#pragma omp parallel for reduction(+ : s) schedule(static) num_threads(threads_for(n))
    for (std::int64_t i = 0; i < n; ++i) {
      us[i] += alpha * ps[i];
      rs[i] -= alpha * qs[i];
      s += double(rs[i]) * double(rs[i]);
    }
    return s;
  }

  void add_constant(Field<T>& u, T c) override {
    T* us = u.data();
    const std::int64_t n = static_cast<std::int64_t>(u.size());
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
    for (std::int64_t i = 0; i < n; ++i) us[i] += c;
  }

  void triad(Field<T>& a, const Field<T>& b, T s, const Field<T>& c) override {
    T* as = a.data();
    const T* bs = b.data();
    const T* cs = c.data();
    const std::int64_t n = static_cast<std::int64_t>(a.size());
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
    for (std::int64_t i = 0; i < n; ++i) as[i] = triad_point(bs[i], s, cs[i]);
  }

 private:
  static void accumulate(double v, double& lo, double& hi, double& sum, std::int64_t& bad) {
    if (!std::isfinite(v)) {
      ++bad;
      return;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sum += v;
  }
};

template <class T>
class CpuBackend final : public Backend<T> {
 public:
  std::string name() const override {
    return "cpu (" + std::to_string(omp_get_max_threads()) + " threads)";
  }
  BackendKind kind() const override { return BackendKind::Cpu; }
  bool is_gpu() const override { return false; }
  MemoryResource& memory() override { return mem_; }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<WallTimer>(); }
  void synchronize() override {}
  VectorOps<T>& vec() override { return vec_; }

  void upload(const T* host, Field<T>& f) override { std::memcpy(f.data(), host, f.bytes()); }
  void download(const Field<T>& f, T* host) override { std::memcpy(host, f.data(), f.bytes()); }
  void copy(const Field<T>& src, Field<T>& dst) override {
    const T* s = src.data();
    T* d = dst.data();
    const std::int64_t n = static_cast<std::int64_t>(src.size());
#pragma omp parallel for schedule(static) num_threads(threads_for(n))
    for (std::int64_t i = 0; i < n; ++i) d[i] = s[i];
  }
  void download_image(const Field<float>& img, float* host) override {
    std::memcpy(host, img.data(), img.bytes());
  }
  void download_image_rgb8(const Field<float>& img, unsigned char* host) override {
    const float* s = img.data();
    const std::int64_t pixels = static_cast<std::int64_t>(img.size() / 4);
#pragma omp parallel for schedule(static) num_threads(threads_for(pixels))
    for (std::int64_t p = 0; p < pixels; ++p)
      for (int c = 0; c < 3; ++c) host[3 * p + c] = rgb8_level(s[4 * p + c]);
  }

  void pack(const Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
            Field<T>& buf) override {
    copy_box<T, true>(const_cast<Field<T>&>(f).view().box(lo, count), buf.data());
  }
  void unpack(Field<T>& f, const std::int64_t* lo, const std::int64_t* count,
              const Field<T>& buf) override {
    copy_box<T, false>(f.view().box(lo, count), const_cast<T*>(buf.data()));
  }

 private:
  HostMemory mem_;
  CpuVector<T> vec_;
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
  return std::make_unique<CpuBackend<T>>();
}
template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace gf
