// The CUDA executor of the pde workload: the program's stage kernels
// (pde_codegen.cpp's source, its two programs compiled apart: the march when
// the executor is made, the one-thread-a-point kernels when a stage first
// needs them; a cache entry each) compiled at run time by NVRTC, without fused
// multiply-adds so that its sums and products round as the CPU reference's,
// kept in a cache of compiled kernels by the hash of its source, options,
// NVRTC version and GPU architecture, loaded with the runtime's library API
// (cudaLibraryLoadData) and launched on the backend's stream.
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/pdl.cuh"
#include "kernels/cuda/waves.cuh"
#include "kernels/device.hpp"
#include "kernels/pde/pde_codegen.hpp"  // kPdeKernelName
#include "kernels/pde/pde_exec.hpp"
#include "kernels/pde/pde_rtc.hpp"

namespace gf {

namespace fs = std::filesystem;

namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void nvrtc_check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS)
    throw DeviceError(fmt::format("NVRTC: {}: {}", what, nvrtcGetErrorString(r)));
}

}  // namespace

fs::path pde_kernel_cache_dir() {
  if (const char* d = std::getenv("GRIDFORGE_KERNEL_CACHE"); d && *d) {
    if (std::string(d) == "0") return {};
    return fs::path(d);
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "gridforge" / "kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "gridforge" / "kernels";
  return {};
}

RtcBinary pde_rtc_compile(const std::string& source, int arch) {
  RtcBinary out;
  int major = 0, minor = 0;
  nvrtc_check(nvrtcVersion(&major, &minor), "version");
  // The newest architecture NVRTC knows, if the GPU's is newer: PTX, which
  // the driver compiles on loading.
  int num = 0;
  nvrtc_check(nvrtcGetNumSupportedArchs(&num), "supported architectures");
  std::vector<int> archs(static_cast<std::size_t>(num));
  nvrtc_check(nvrtcGetSupportedArchs(archs.data()), "supported architectures");
  bool known = false;
  for (int a : archs) known = known || a == arch;
  const bool ptx = !known;
  const int target = known ? arch : archs.empty() ? arch : archs.back();
  const std::vector<std::string> opts = {
      "--std=c++17", ptx ? fmt::format("--gpu-architecture=compute_{}", target)
                         : fmt::format("--gpu-architecture=sm_{}", target),
      "--fmad=false", "-default-device", "--extra-device-vectorization"};
  std::string key_text = source;
  for (const std::string& o : opts) key_text += "\n" + o;
  key_text += fmt::format("\nnvrtc {}.{}", major, minor);
  out.key = fmt::format("pde-{:016x}-{}{}", fnv1a(key_text), ptx ? "compute_" : "sm_", target);
  out.ptx = ptx;

  const fs::path dir = pde_kernel_cache_dir();
  const fs::path file = dir.empty() ? fs::path() : dir / (out.key + (ptx ? ".ptx" : ".cubin"));
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      out.image = ss.str();
      if (!out.image.empty()) {
        out.cached = true;
        out.where = file.string();
        return out;
      }
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog = nullptr;
  nvrtc_check(nvrtcCreateProgram(&prog, source.c_str(), "gridforge_pde.cu", 0, nullptr, nullptr),
              "create program");
  // destroyed on every way out, a throw of nvrtc_check's too
  struct Destroy {
    nvrtcProgram& p;
    ~Destroy() { nvrtcDestroyProgram(&p); }
  } destroy{prog};
  std::vector<const char*> copts;
  for (const std::string& o : opts) copts.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog, int(copts.size()), copts.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) nvrtcGetProgramLog(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    throw std::logic_error(fmt::format("NVRTC could not compile the pde kernel ({}):\n{}",
                                       nvrtcGetErrorString(r), log));
  }
  std::size_t size = 0;
  if (ptx) {
    nvrtc_check(nvrtcGetPTXSize(prog, &size), "PTX size");
    out.image.resize(size);
    nvrtc_check(nvrtcGetPTX(prog, out.image.data()), "PTX");
  } else {
    nvrtc_check(nvrtcGetCUBINSize(prog, &size), "CUBIN size");
    out.image.resize(size);
    nvrtc_check(nvrtcGetCUBIN(prog, out.image.data()), "CUBIN");
  }
  out.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Into the cache, whole or not at all (a temporary name, then renamed);
  // a cache that cannot be written costs the next run a compile, no more.
  if (!file.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path tmp = file.string() + fmt::format(".tmp{}", ::getpid());
    {
      std::ofstream o(tmp, std::ios::binary);
      o.write(out.image.data(), std::streamsize(out.image.size()));
      if (!o) ec = std::make_error_code(std::errc::io_error);
    }
    if (!ec) fs::rename(tmp, file, ec);
    if (ec) {
      fs::remove(tmp, ec);
      spdlog::debug("pde: kernel cache {} not written", dir.string());
    } else {
      out.where = file.string();
    }
  }
  return out;
}

namespace {
// Whether the current device's DRAM peaks at kPdeNoPrefetchDram or more (an
// H200): the pde march's shape rules below say what changes there.
bool pde_fast_dram() { return double(device_dram_peak()) >= kPdeNoPrefetchDram; }
}  // namespace

bool pde_march_prefetch(int elem_bytes) {
  if (gpu_pde_prefetch() >= 0) return gpu_pde_prefetch() == 1;
  return !(elem_bytes == 4 && pde_fast_dram());
}

namespace {

template <class T>
class PdeCuda final : public PdeExec<T> {
 public:
  PdeCuda(CudaBackend<T>& be, const std::string& src, PdeTerms terms, bool equal_h)
      : be_(be), terms_(terms), equal_h_(equal_h), fast_dram_(pde_fast_dram()),
        parts_(pde_source_parts(src)) {
    const int dev = be.device();
    int major = 0, minor = 0;
    GF_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    GF_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    arch_ = major * 10 + minor;
    if (parts_.march.empty()) {  // 1D: the point kernels are all there is
      load_point();
      spdlog::info("pde: stage kernel {}", note_);
      return;
    }
    RtcBinary bin = pde_rtc_compile(parts_.march, arch_);
    compile_s_ = bin.compile_s;
    load_march(bin);
    // A march whose registers at 3 blocks an SM spill to local memory
    // (large equations) is compiled again for 1 block.
    cudaFuncAttributes fa{};
    if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(march_)) == cudaSuccess &&
        fa.localSizeBytes > 0) {
      const std::size_t at = parts_.march.find(kPdeMarchMinb);
      if (at != std::string::npos) {
        std::string again = parts_.march;
        const std::size_t num = at + std::string(kPdeMarchMinb).size() + 1;
        again.replace(num, again.find('\n', num) - num, "1");
        march_lib_.reset();
        march_ = nullptr;
        bin = pde_rtc_compile(again, arch_);
        compile_s_ += bin.compile_s;
        load_march(bin);
      }
    }
    (void)cudaGetLastError();
    const std::string regs =
        cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(march_)) == cudaSuccess
            ? fmt::format(", march {} registers, {} bytes local", fa.numRegs, fa.localSizeBytes)
            : "";
    (void)cudaGetLastError();
    note_ = describe(bin) + regs +
            fmt::format(", {} L2 prefetch (DRAM peak {:.2f}e12 B/s)",
                        pde_march_prefetch(int(sizeof(T))) ? "with" : "no",  // (as pde_dist.cpp made the source)
                        double(device_dram_peak()) / 1e12);
    spdlog::info("pde: stage kernel {}", note_);
  }

  static std::string describe(const RtcBinary& bin) {
    return bin.cached ? fmt::format("{} (cached: {})", bin.key, bin.where)
                      : fmt::format("{} (compiled by NVRTC in {:.3f} s{})", bin.key, bin.compile_s,
                                    bin.where.empty() ? ", not cached" : "; cached: " + bin.where);
  }
  // A loaded library, unloaded with its owner (or when a kernel of it
  // cannot be found).
  struct Unload {
    void operator()(cudaLibrary_t l) const { cudaLibraryUnload(l); }
  };
  using Library = std::unique_ptr<std::remove_pointer_t<cudaLibrary_t>, Unload>;
  static Library load_library(const RtcBinary& bin) {
    cudaLibrary_t l = nullptr;
    GF_CUDA_CHECK(cudaLibraryLoadData(&l, bin.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    return Library(l);
  }
  static cudaKernel_t kernel_of(const Library& lib, const std::string& suffix) {
    cudaKernel_t k = nullptr;
    GF_CUDA_CHECK(cudaLibraryGetKernel(&k, lib.get(), (std::string(kPdeKernelName) + suffix).c_str()));
    return k;
  }
  void load_march(const RtcBinary& bin) {
    Library lib = load_library(bin);
    march_ = kernel_of(lib, "_march");
    march_lib_ = std::move(lib);
  }
  // The one-thread-a-point kernels, compiled (or read from the cache) and
  // loaded the first time a stage needs them (pde_source_parts).
  void load_point() {
    if (point_lib_) return;  // (a library without both kernels is not kept)
    const RtcBinary bin = pde_rtc_compile(parts_.point, arch_);
    compile_s_ += bin.compile_s;
    Library lib = load_library(bin);
    const cudaKernel_t k32 = kernel_of(lib, "_i32"), k64 = kernel_of(lib, "_i64");
    kernel32_ = k32;
    kernel64_ = k64;
    point_lib_ = std::move(lib);
    if (march_) {  // a stage the march could not take, after the setup line
      note_ += "; one-thread-a-point kernels " + describe(bin);
      spdlog::info("pde: one-thread-a-point kernels {}", describe(bin));
    } else {
      note_ = describe(bin);
    }
  }

  void stage(PdeArgs<T> a, const PdeFields<T>& f) override {
    if (!pde_terms_fit(terms_, pde_stage_terms(a.st), pde_stage_ones(a.st)))
      throw std::logic_error("pde: a stage with terms the kernel was not compiled for");
    if ((a.equal_h != 0) != equal_h_)
      throw std::logic_error("pde: spacings other than the kernel was compiled for");
    pde_set_arrays(a, f);
    if (march(a)) return;
    load_point();
    const Layout& l = a.l;
    const dim3 block = l.n[1] > 1 ? dim3(32, 8, 1) : dim3(256, 1, 1);
    int slab = int(std::min<std::int64_t>(l.n[2], 8));
    const dim3 grid(unsigned((l.n[0] + block.x - 1) / block.x),
                    unsigned((l.n[1] + block.y - 1) / block.y),
                    unsigned((l.n[2] + slab - 1) / slab));
    void* args[] = {&a, &slab};
    const cudaKernel_t k = l.span() < (std::int64_t(1) << 31) ? kernel32_ : kernel64_;
    GF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, args, 0,
                                   be_.stream()));
  }
  // The march and the faces in one launch (pde_march.hpp), where the fields allow:
  // 2D or 3D, at least 3 points along y (and z), fewer than 2³¹ values,
  // rows that start on 16-byte vectors in 16-byte aligned arrays, and a
  // launch within the grid's limits. False, having launched nothing, else.
  bool march(PdeArgs<T>& a) {
    constexpr std::int64_t W = 16 / sizeof(T);
    const Layout& l = a.l;
    const int d = a.ndim;
    if (!march_ || d < 2 || l.span() >= (std::int64_t(1) << 31) || l.sy % W != 0 ||
        l.n[1] < 3 || (d == 3 && l.n[2] < 3))
      return false;
    const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    for (int q = 0; q < kPdeMaxFields; ++q)
      if (!aligned(a.u0[q]) || !aligned(a.acc[q]) || !aligned(a.out[q])) return false;
    for (const T* p : a.in)
      if (!aligned(p)) return false;
    const std::int64_t pieces = (l.n[0] + W - 1) / W;
    // Planes (rows in 2D) a thread makes, as measured on an H100 with the
    // L2 prefetch and the faces in the launch: 3D float32 4 (since the
    // march's fewer instructions, session 20: 512³ 0.97 of copy bandwidth
    // against 0.94 with 8, 513³ 0.91 against 0.88, 257³ 0.79 against 0.74,
    // 509 × 263 × 391 0.93 against 0.87; with the older march 8 had been
    // ahead); 3D float64 4 from 384 planes up (512³ 0.91 against 0.88, 513³
    // 0.86 against 0.83; 6, 8 and 16 no better, session 20) and 8 below
    // (257³ 0.82 against 0.79); 2D 4 (4097²: 0.86, 8: 0.80). On a device
    // whose DRAM peaks at kPdeNoPrefetchDram or more, float64 8 at every size
    // (H200, session 22: 384³ 0.81 → 0.83, 512³ 0.85 → 0.88, 513³ 0.78 →
    // 0.79; below 384 planes 8 was already the rule).
    // Fewer where a grid of a few MiB would leave most of the device idle
    // (waves.cuh, wave_chunk), or GRIDFORGE_MARCH_CHUNK: H100, fraction of
    // copy, float32 256×64×64 0.54 against 0.35, 384×96×64 0.65 against
    // 0.57, 1025² 0.63 against 0.51; float64 256×64×64 0.69 against 0.59,
    // 1025² 0.77 against 0.69; level from 256³ and 2049².
    int chunk = d == 2 || sizeof(T) == 4 || (l.n[2] >= 384 && !fast_dram_) ? 4 : 8;
    const auto blocks = [](std::int64_t n, std::int64_t per) { return (n + per - 1) / per; };
    // A block is P pieces of R rows. float32: the fewest blocks of at most
    // 32 pieces across a row, as wide as the row needs, so that a row of 129
    // pieces (513 points) takes 5 blocks of 26, not 5 of 32 with 31 idle
    // (H100: 0.82 of copy bandwidth against 0.80 at 513³, 0.68 against 0.63
    // at 257³). float64 kept blocks of 32 ahead (513³: 0.83 against 0.79).
    // On a device whose DRAM peaks at kPdeNoPrefetchDram or more, 3D float32
    // takes blocks of 32 too on rows of 3 blocks or more, but where the last
    // of 3 would make fewer than 8 pieces. H200, session 22, fraction of copy
    // bandwidth, as wide as the row / 32: 1025 × 129 × 65 0.67 / 0.71, 289 ×
    // 203 × 177 0.67 / 0.70, 449 × 97 × 130 0.62 / 0.66, 385³ 0.75 / 0.79,
    // 300³ 0.74 / 0.79, 801 × 101 × 101 0.67 / 0.71, 700 × 150 × 120 0.75 /
    // 0.77; within the calls' noise, 513³ 0.82-0.84 / 0.81-0.83 and 641 × 161
    // × 97 0.64-0.65 / 0.63-0.64;
    // 257³ (a third block of 1 piece) 0.75 / 0.71, 200 × 300 × 200 (2
    // blocks) 0.76 / 0.72. GRIDFORGE_MARCH_PIECES=32 or =row forces either.
    const std::int64_t bx = blocks(pieces, 32), last32 = pieces - 32 * (bx - 1);
    const int mp = gpu_march_pieces();
    const bool wide32 =
        mp == 32 || (mp == 0 && (sizeof(T) == 8 ||
                                 (d == 3 && fast_dram_ && (bx >= 4 || (bx == 3 && last32 >= 8)))));
    const int P = wide32 ? 32 : int(blocks(pieces, bx)), R = 256 / P;
    const std::int64_t nx = l.n[0], ny = l.n[1], nz = l.n[2];
    const std::int64_t columns = d == 3 ? bx * blocks(ny - 2, R) : bx;
    const int along = int(d == 3 ? nz - 2 : blocks(ny - 2, R));  // planes, or row groups in 2D
    if (gpu_march_chunk() > 0)
      chunk = gpu_march_chunk();
    else
      chunk = wave_chunk(columns, along, chunk, 2,
                         resident_blocks(reinterpret_cast<const void*>(march_), P * R));
    std::int64_t gx = bx, gy, gz = 1, nfaces, mb;
    if (d == 3) {
      gy = blocks(ny - 2, R);
      gz = mb = blocks(nz - 2, chunk);
      nfaces = 2 * nx * (nz + ny - 2);
      gz += blocks(nfaces, gx * gy * P * R);  // the faces' blocks, after the march's
    } else {
      gy = mb = blocks(blocks(ny - 2, chunk), R);
      nfaces = 2 * nx;
      gy += blocks(nfaces, gx * P * R);
    }
    if (gy > 65535 || gz > 65535) return false;
    const dim3 grid{unsigned(gx), unsigned(gy), unsigned(gz)};
    int ch = chunk, m = int(mb);
    long nf = long(nfaces);
    // a dependent launch scheduled early at every size, unless GRIDFORGE_PDL=0
    // (pde_march.hpp says why not late; the kernel source says which)
    const Pdl dep = gpu_dependent_launch() == PdlPolicy::Off ? Pdl::Off : Pdl::Early;
    // 2D: a stage from the other end where march_down says (pde_march_and_faces)
    int down = d == 2 && march_down(a.in[0], a.out[0]) ? 1 : 0;
    void* args[] = {&a, &ch, &nf, &m, &down};
    launch_pdl(reinterpret_cast<const void*>(march_), grid, dim3(unsigned(P), unsigned(R), 1),
               be_.stream(), dep, args);
    return true;
  }

  std::string setup_note() const override { return note_; }
  double compile_s() const override { return compile_s_; }

 private:
  CudaBackend<T>& be_;
  PdeTerms terms_;
  bool equal_h_ = false;
  bool fast_dram_ = false;  // pde_fast_dram, asked once (not every stage)
  PdeSourceParts parts_;
  int arch_ = 0;
  Library march_lib_, point_lib_;
  cudaKernel_t kernel32_ = nullptr, kernel64_ = nullptr;
  cudaKernel_t march_ = nullptr;
  std::string note_;
  double compile_s_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<PdeExec<T>> make_pde_cuda(Backend<T>& be, const std::string& source,
                                          PdeTerms terms, bool equal_h) {
  return std::make_unique<PdeCuda<T>>(cuda_core(be), source, terms, equal_h);
}
template std::unique_ptr<PdeExec<float>> make_pde_cuda<float>(Backend<float>&, const std::string&,
                                                              PdeTerms, bool);
template std::unique_ptr<PdeExec<double>> make_pde_cuda<double>(Backend<double>&,
                                                                const std::string&, PdeTerms,
                                                                bool);

}  // namespace gf
