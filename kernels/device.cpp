#include "kernels/device.hpp"

#include "core/error.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gf {

#ifndef GRIDFORGE_HAVE_CUDA
const CudaStatus& cuda_status() {
  static const CudaStatus s = [] {
    CudaStatus st;
    st.why_unusable = "this gridforge was built without CUDA (no nvcc at configure time)";
    return st;
  }();
  return s;
}
template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int, std::int64_t) {
  throw DeviceError(cuda_status().why_unusable);
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int, std::int64_t);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int, std::int64_t);
#endif

std::size_t host_memory_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    std::size_t kb = 0;
    ls >> key >> kb;
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    if (first != std::string::npos) return line.substr(first);
  }
  return "unknown CPU";
}

std::size_t last_level_cache_bytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long b = sysconf(name);
    if (b > 0) return static_cast<std::size_t>(b);
  }
  return 0;
}

}  // namespace gf

namespace gf {

std::int64_t gpu_row_align_bytes() {
  static const std::int64_t align = [] {
    const char* e = std::getenv("GRIDFORGE_ROW_ALIGN");
    if (!e || !*e) return std::int64_t(128);
    char* end = nullptr;
    const long long v = std::strtoll(e, &end, 10);
    // 0 (dense), or a power of two from 16 bytes (one vector) to 4 KiB
    if (*end || (v != 0 && (v < 16 || v > 4096 || (v & (v - 1)) != 0)))
      throw UsageError(std::string("GRIDFORGE_ROW_ALIGN='") + e +
                       "': give 0 (dense rows) or a power of two from 16 to 4096 (bytes)");
    return std::int64_t(v);
  }();
  return align;
}

PdlPolicy gpu_dependent_launch() {
  static const PdlPolicy policy = [] {
    const char* e = std::getenv("GRIDFORGE_PDL");
    const std::string v = e ? e : "";
    if (v.empty() || v == "1") return PdlPolicy::Auto;
    if (v == "0") return PdlPolicy::Off;
    if (v == "early") return PdlPolicy::Early;
    if (v == "late") return PdlPolicy::Late;
    throw UsageError("GRIDFORGE_PDL='" + v +
                     "': give 1 (dependent launches by the field's size, the default), 0 "
                     "(ordinary launches), early or late");
  }();
  return policy;
}

int env_int(const char* name, int fallback, int lo, int hi, const char* what) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  if (*end || v < lo || v > hi)
    throw UsageError(std::string(name) + "='" + e + "': give " + what);
  return int(v);
}

int gpu_march_chunk() {
  static const int c = env_int("GRIDFORGE_MARCH_CHUNK", 0, 0, 64,
                               "0 (by the grid) or 1 to 64 planes (rows in 2D) a thread");
  return c;
}

int gpu_march_pieces() {
  static const int p = [] {
    const char* e = std::getenv("GRIDFORGE_MARCH_PIECES");
    if (!e || !*e) return 0;
    if (std::string(e) == "32") return 32;
    if (std::string(e) == "row") return -1;
    throw UsageError(std::string("GRIDFORGE_MARCH_PIECES='") + e +
                     "': give 32 (blocks of 32 pieces across a row) or row (as wide as the row "
                     "needs)");
  }();
  return p;
}

int gpu_march_tail() {
  static const int t = env_int("GRIDFORGE_MARCH_TAIL", kMarchTailPieces, 0, 31,
                               "0 (no tail blocks) or 1 to 31 pieces at a row's end");
  return t;
}

int gpu_pde_blocks() {
  static const int b = env_int("GRIDFORGE_PDE_BLOCKS", 0, 1, 8, "1 to 8 blocks an SM");
  return b;
}

int gpu_pde_prefetch() {
  static const int p = env_int("GRIDFORGE_PDE_PREFETCH", -1, 0, 1,
                               "1 (ask L2 for the plane after the next) or 0");
  return p;
}

bool gpu_pad_store() {
  static const bool p = env_int("GRIDFORGE_PAD_STORE", 1, 0, 1, "1 (whole sectors) or 0") == 1;
  return p;
}

bool gpu_march_alternate() {
  static const bool a =
      env_int("GRIDFORGE_MARCH_ORDER", 1, 0, 1,
              "1 (every other step from the other end, the default) or 0 (always up)") == 1;
  return a;
}

bool march_down(const void* in, const void* out) {
  return gpu_march_alternate() &&
         reinterpret_cast<std::uintptr_t>(in) < reinterpret_cast<std::uintptr_t>(out);
}

Layout gpu_field_layout(const Grid& g, std::size_t elem_bytes) {
  return Layout::aligned_rows(g.n.data(), std::int64_t(elem_bytes), gpu_row_align_bytes());
}

}  // namespace gf
