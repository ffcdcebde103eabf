// How a launch fills the device: its SMs, the blocks of a kernel that fit
// at once, and the chunk of planes (rows) a thread walks that costs the
// fewest waves. Shared by the one-step marches (march_kernels.cuh), the
// temporally blocked passes (time_block_kernels.cuh) and the pde march
// (kernels/pde/pde_cuda.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <utility>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_check.cuh"

namespace gf {

// The current device's SMs (at least 1).
inline int device_sms() {
  int dev = 0, sms = 0;
  GF_CUDA_CHECK(cudaGetDevice(&dev));
  GF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms > 0 ? sms : 1;
}

// What ask(device) says of the current device, asked once per device (Tag:
// one cache per question).
template <class Tag, class Ask>
std::int64_t per_device(Ask ask) {
  static std::mutex m;
  static std::vector<std::pair<int, std::int64_t>> known;  // device, answer
  int dev = 0;
  GF_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(m);
  for (const auto& [d, v] : known)
    if (d == dev) return v;
  const std::int64_t v = ask(dev);
  known.emplace_back(dev, v);
  return v;
}

// The current device's L2 cache in bytes (0 when the runtime does not say),
// asked once per device (the 3D star march's launcher asks every other step).
inline std::int64_t device_l2_bytes() {
  struct L2 {};
  return per_device<L2>([](int dev) {
    int l2 = 0;
    GF_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    return std::int64_t(l2);
  });
}

// The current device's peak DRAM bandwidth in bytes a second, by its memory
// clock and bus width (double data rate; 0 when the runtime does not say):
// H100 SXM about 3.35e12, H200 about 4.8e12.
inline std::int64_t device_dram_peak() {
  struct Dram {};
  return per_device<Dram>([](int dev) {
    int khz = 0, bits = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return std::int64_t(0);
    }
    return std::int64_t(2) * std::int64_t(khz) * 1000 * (bits / 8);
  });
}

// Blocks of `threads` threads of kernel k (a __global__ function, or a
// cudaKernel_t of a loaded library) resident on the whole device at once,
// asked once per kernel and block size.
inline int resident_blocks(const void* k, int threads) {
  static std::mutex m;
  static std::vector<std::tuple<const void*, int, int, int>> known;  // kernel, threads, device
  int dev = 0;
  GF_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(m);
  for (const auto& [f, t, d, n] : known)
    if (f == k && t == threads && d == dev) return n;
  int per_sm = 0;  // (a question the runtime cannot answer counts 1 an SM: only speed depends on it)
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, 0) != cudaSuccess)
    (void)cudaGetLastError();
  const int n = (per_sm > 0 ? per_sm : 1) * device_sms();
  known.emplace_back(k, threads, dev, n);
  return n;
}
template <class... A>
int resident_blocks(void (*k)(A...), int threads) {
  return resident_blocks(reinterpret_cast<const void*>(k), threads);
}

// The planes (rows) a thread walks, from 1 to `most`, for a launch of
// `columns` blocks a chunk over n planes with `slots` blocks resident at
// once: the one whose waves cost least, a block's time taken as its chunk
// plus `overhead` planes (the ones it loads before its first point); ties
// go to the larger chunk. Large grids (many waves) keep `most`; a grid of a
// few MiB, one wave of `most`-plane blocks, takes shorter chunks over more
// of the device.
inline int wave_chunk(long long columns, int n, int most, int overhead, int slots) {
  int best = most;
  double best_cost = 1e300;
  for (int chunk = most; chunk >= 1; --chunk) {
    const long long blocks = columns * ((n + chunk - 1) / chunk);
    const long long waves = (blocks + slots - 1) / slots;
    const double cost = double(waves) * double(chunk + overhead);
    if (cost < best_cost * 0.999) best_cost = cost, best = chunk;
  }
  return best;
}

}  // namespace gf
