// CudaBackend: the GPU executor. Kernels call the same kernels/ops formulas as
// the CPU reference; what differs is how the grid is walked (tiles, register
// marching along z) and where reductions happen (CUB).
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>

#include <cstdio>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/heat_kernels.cuh"
#include "kernels/cuda/stencil_kernels.cuh"
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

template <class T>
class CudaBackend final : public Backend<T> {
 public:
  explicit CudaBackend(int device)
      : label_(label_for(device)), mem_(label_) {
    GF_CUDA_CHECK(cudaSetDevice(device));
    GF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GF_CUDA_CHECK(cudaMallocHost(&stats_host_, sizeof(StatsAcc)));
  }
  ~CudaBackend() override {
    if (scratch_) mem_.deallocate(scratch_, scratch_bytes_);
    cudaFreeHost(stats_host_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return label_; }
  bool is_gpu() const override { return true; }
  MemoryResource& memory() override { return mem_; }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<EventTimer>(stream_); }
  void synchronize() override { GF_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void upload(const T* host, Field<T>& f) override {
    GF_CUDA_CHECK(cudaMemcpyAsync(f.data(), host, f.bytes(), cudaMemcpyHostToDevice, stream_));
    synchronize();
  }
  void download(const Field<T>& f, T* host) override {
    GF_CUDA_CHECK(cudaMemcpyAsync(host, f.data(), f.bytes(), cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }

  void heat_step(const HeatArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch_heat_step(a, in.data(), out.data(), stream_);
    GF_CUDA_CHECK_LAUNCH();
  }

  void set_stencil_taps(const std::vector<StencilTap<T>>& taps) override {
    tile_radius_ = upload_stencil_taps(taps, stream_);
  }
  void apply_stencil(const StencilArgs<T>& a, const Field<T>& in, Field<T>& out) override {
    launch_stencil(a, tile_radius_, in.data(), out.data(), stream_);
  }

  FieldStats stats(const Field<T>& f) override {
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
    return s;
  }

 private:
  static std::string label_for(int device) {
    cudaDeviceProp p{};
    GF_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    return std::string(p.name) + " (GPU " + std::to_string(device) + ")";
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
  DeviceMemory mem_;
  cudaStream_t stream_{};
  StatsAcc* stats_host_ = nullptr;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  int tile_radius_ = 1;  // the radius the stencil kernels' tile offsets were made for
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
