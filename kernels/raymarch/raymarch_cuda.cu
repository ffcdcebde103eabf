// The CUDA executor of the ray marcher: one thread per pixel in 2D tiles of
// pixels (8×8 by default: neighbouring rays walk neighbouring cells, so their
// samples share cache lines), the per-sample formulas of raymarch_ops.hpp.
//
// A frame that skips first reduces the volume to a coarse grid of bricks
// (least and greatest value, raymarch_skip.hpp; counted in the frame's time,
// as the field may have changed since the last), then marches with
// empty-space skipping: samples whose update provably changes nothing are
// left out, so the image is the plain march's bit for bit. Whether a frame
// skips is worth_skipping's choice (RaySkip::Auto); a frame that does not
// reduces the volume only every kRecountFrames-th time, to count again.
// Indices are 32-bit when the volume spans fewer than 2³¹ values. A float32 volume may instead be sampled
// through a 3D texture with hardware filtering (RayExecOptions::texture),
// whose 8-bit interpolation weights differ from the software sampler's.
//
// This file is compiled without FMA contraction (--fmad=false, CMakeLists.txt)
// so that its arithmetic rounds as the CPU reference's does: isosurface
// silhouettes and early ray termination are yes/no decisions that one ulp
// can flip. The texture's march is in raymarch_texture_cuda.cu, compiled
// with contraction (raymarch_kernel.cuh).
#include <optional>

#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/raymarch/raymarch_exec.hpp"
#include "kernels/raymarch/raymarch_kernel.cuh"

namespace gf {
namespace {

// One block of kBrickWarps warps a brick: the brick's points (raymarch_skip.hpp's
// brick_points) read along rows, 16 lanes a row (32 when a row is longer,
// up to 3 points a lane), the rows dealt out to the warps' lanes and walked
// with pointers (no division a row: with one, the kernel was bound by its
// integer arithmetic, 0.25 ms at 256³), kBrickRows rows a lane loaded before
// any is reduced; min and max reduced over the warp, then over the block.
constexpr int kBrickWarps = 4;
constexpr int kBrickRows = 4;

template <class T>
__device__ void warp_minmax(T& mn, T& mx) {
  for (int o = 16; o > 0; o >>= 1) {
    const T a = __shfl_xor_sync(0xffffffffu, mn, o), b = __shfl_xor_sync(0xffffffffu, mx, o);
    mn = a < mn ? a : mn;
    mx = b > mx ? b : mx;
  }
}

template <class T>
__global__ void __launch_bounds__(32 * kBrickWarps)
    brick_kernel(const FieldView<const T> v, const int B, const Layout bl, T* __restrict__ mn,
                 T* __restrict__ mx, const RayArgs<T> a, unsigned* __restrict__ empty /* or null */) {
  const std::int64_t q = blockIdx.x;
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  std::int64_t b[3], lo[3], hi[3];
  bl.position(q, b[0], b[1], b[2]);
  for (int c = 0; c < 3; ++c) brick_points(b[c], B, v.n[c], lo[c], hi[c]);
  const int p0 = int(hi[0] - lo[0] + 1), p1 = int(hi[1] - lo[1] + 1), p2 = int(hi[2] - lo[2] + 1);
  const int lx = p0 <= 16 ? 16 : 32, ly = 32 / lx;
  const int step = ly * kBrickWarps;  // rows from one of a lane's to the next
  // the lane's first row: j (in its plane), k (the plane)
  int j = warp * ly + lane / lx, k = 0;
  while (j >= p1) j -= p1, ++k;
  const int i0 = lane % lx;
  const T* base = &v(lo[0], lo[1], lo[2]);
  T lmin = *base, lmax = lmin;
  while (k < p2) {
    T x[kBrickRows][3];
#pragma unroll
    for (int u = 0; u < kBrickRows; ++u) {
      const bool in = k < p2;
      const T* row = base + std::int64_t(k) * v.sz + std::int64_t(j) * v.sy;
#pragma unroll
      for (int c = 0; c < 3; ++c) {  // p0 ≤ B + 3 ≤ 67 points: 3 a lane at most
        const int i = i0 + c * lx;
        T val = lmin;
        if (in && i < p0) val = row[i];
        x[u][c] = val;
      }
      j += step;
      while (j >= p1) j -= p1, ++k;
    }
#pragma unroll
    for (int u = 0; u < kBrickRows; ++u)
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        lmin = x[u][c] < lmin ? x[u][c] : lmin;
        lmax = x[u][c] > lmax ? x[u][c] : lmax;
      }
  }
  warp_minmax(lmin, lmax);
  __shared__ T wmin[kBrickWarps], wmax[kBrickWarps];
  if (lane == 0) {
    wmin[warp] = lmin;
    wmax[warp] = lmax;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kBrickWarps; ++w) {
      lmin = wmin[w] < lmin ? wmin[w] : lmin;
      lmax = wmax[w] > lmax ? wmax[w] : lmax;
    }
    mn[q] = lmin;
    mx[q] = lmax;
    if (empty && brick_skippable(a, lmin, lmax)) atomicAdd(empty, 1u);
  }
}

template <class T>
class RaymarchCuda final : public RaymarchExec<T> {
 public:
  explicit RaymarchCuda(CudaBackend<T>& be) : be_(be), opt_(raymarch_options_from_env()) {}
  ~RaymarchCuda() override {
    release_texture();
    if (counting_) cudaEventSynchronize(counted_);  // the copy into count_host_ is done
    if (counted_) cudaEventDestroy(counted_);
    if (count_host_) cudaFreeHost(count_host_);
  }
  RaymarchCuda(const RaymarchCuda&) = delete;
  RaymarchCuda& operator=(const RaymarchCuda&) = delete;

  void set_options(const RayExecOptions& o) override { opt_ = o; }

  void render(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img,
              const std::function<bool()>&) override {
    const Layout l = volume.layout();
    // (sphere tracing steps over empty space itself: no bricks)
    const bool may_skip = opt_.skip != RaySkip::Off && !a.sphere_trace && skip_fits(a, l);
    const bool skip = may_skip && (opt_.skip == RaySkip::On || worth_skipping(a));
    // The bricks: for a skipping march, and every kRecountFrames-th frame of
    // a plain one, for a new count of the empty ones.
    bool build = skip;
    if (may_skip && !skip) build = ++plain_frames_ % kRecountFrames == 0;
    const Bricks<T> br = build ? build_bricks(volume, a) : Bricks<T>{};
    if constexpr (sizeof(T) == 4) {
      const bool want = opt_.texture == RayTexture::On ||
                        (opt_.texture == RayTexture::Auto &&
                         raymarch_auto_texture(l.size(), int(sizeof(T)),
                                               a.mode == RayMode::Isosurface));
      if (want && l.sz == l.sy * l.n[1]) {
        // Auto: an array that cannot be had leaves the frame to the software sampler.
        if (const cudaTextureObject_t t = texture_of(volume, opt_.texture == RayTexture::Auto)) {
          // the texture's march: raymarch_texture_cuda.cu, compiled with FMA contraction
          const dim3 block(unsigned(opt_.tile_x), unsigned(opt_.tile_y));
          return launch_texture_march(a, t, l, br, img.data(), skip, march_grid(a, block), block,
                                      be_.stream());
        }
      }
    }
    const FieldView<const T> v = volume.view();
    if (l.span() < (std::int64_t(1) << 31))
      launch<std::int32_t>(a, Trilinear<T, std::int32_t>{v}, l, br, img, skip);
    else
      launch<std::int64_t>(a, Trilinear<T, std::int64_t>{v}, l, br, img, skip);
  }

 private:
  template <class I, class S>
  void launch(const RayArgs<T>& a, const S& s, const Layout& l, const Bricks<T>& br,
              Field<float>& img, bool skip) {
    const dim3 block(unsigned(opt_.tile_x), unsigned(opt_.tile_y));
    const dim3 grid = march_grid(a, block);
    if (skip)
      raymarch_kernel<T, I, S, true><<<grid, block, 0, be_.stream()>>>(a, s, l, br, img.data());
    else
      raymarch_kernel<T, I, S, false><<<grid, block, 0, be_.stream()>>>(a, s, l, br, img.data());
    GF_CUDA_CHECK_LAUNCH();
  }

  // Whether this frame skips (RaySkip::Auto): MIP always (it also leaves out
  // bricks at or below a ray's maximum so far, which no count foresees), the
  // isosurface always (skipping was ahead on every volume measured);
  // emission-absorption when at least kRaySkipMinEmpty of the bricks were
  // empty in the last frame whose count has reached the host (a frame's
  // bricks send their count when none is on its way; it is read without
  // waiting: the frame before, when frames are apart; until a first count
  // arrives, skipping). The count only chooses between two marches that draw
  // the same image.
  bool worth_skipping(const RayArgs<T>& a) {
    if (a.mode != RayMode::EmissionAbsorption) return true;
    if (counting_) {
      const cudaError_t e = cudaEventQuery(counted_);
      if (e == cudaSuccess) {
        counting_ = false;
        last_skip_ = double(*count_host_) >= kRaySkipMinEmpty * double(count_of_);
      } else if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();  // not an error: the count is still on its way
      } else {
        GF_CUDA_CHECK(e);
      }
    }
    return last_skip_;
  }

  // The bricks of this frame's volume, reduced on the GPU (kept between
  // frames: the same layout needs the same buffer), and, where
  // worth_skipping reads it (emission-absorption, RaySkip::Auto), the count of
  // the empty ones (brick_skippable) on its way to the host.
  Bricks<T> build_bricks(const Field<T>& volume, const RayArgs<T>& a) {
    const int B = opt_.brick ? opt_.brick : raymarch_auto_brick(volume.layout().n);
    const Layout bl = brick_layout(volume.layout(), B);
    if (!bricks_ || bricks_->layout().n[0] != bl.size()) {
      Grid g;
      g.ndim = 2;
      g.n = {bl.size(), 2, 1};
      bricks_.reset();
      bricks_.emplace(be_.make_dense_field(g, "the ray marcher's brick ranges"));
    }
    const FieldView<T> r = bricks_->view();
    T* mn = &r(0, 0);
    T* mx = &r(0, 1);
    // a new count when the last one has been read (or there is none yet)
    const bool count =
        opt_.skip == RaySkip::Auto && a.mode == RayMode::EmissionAbsorption && !counting_;
    unsigned* empty = nullptr;
    if (count) {
      empty = static_cast<unsigned*>(
          empty_.at_least(be_.memory(), sizeof(unsigned), "the ray marcher's empty-brick count"));
      GF_CUDA_CHECK(cudaMemsetAsync(empty, 0, sizeof(unsigned), be_.stream()));
    }
    brick_kernel<T><<<unsigned(bl.size()), 32 * kBrickWarps, 0, be_.stream()>>>(
        volume.view(), B, bl, mn, mx, a, empty);
    GF_CUDA_CHECK_LAUNCH();
    if (count) {
      if (!count_host_) {
        GF_CUDA_CHECK(cudaMallocHost(&count_host_, sizeof(unsigned)));
        GF_CUDA_CHECK(cudaEventCreateWithFlags(&counted_, cudaEventDisableTiming));
      }
      GF_CUDA_CHECK(cudaMemcpyAsync(count_host_, empty, sizeof(unsigned), cudaMemcpyDeviceToHost,
                                    be_.stream()));
      GF_CUDA_CHECK(cudaEventRecord(counted_, be_.stream()));
      counting_ = true;
      count_of_ = bl.size();
    }
    Bricks<T> br{bl, mn, mx, B, 0, opt_.chunk ? opt_.chunk : skip_chunk(a, B)};
    while ((1 << br.shift) < br.B) ++br.shift;
    return br;
  }

  // A 3D array holding the volume's values, copied from the field this frame.
  // optional: 0 when the array cannot be allocated (out of memory), instead
  // of an error.
  cudaTextureObject_t texture_of(const Field<T>& volume, bool optional) {
    const Layout l = volume.layout();
    const cudaExtent ext = make_cudaExtent(std::size_t(l.n[0]), std::size_t(l.n[1]),
                                           std::size_t(l.n[2]));
    if (!array_ || ext.width != ext_.width || ext.height != ext_.height ||
        ext.depth != ext_.depth) {
      release_texture();
      const cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
      const cudaError_t got = cudaMalloc3DArray(&array_, &fmt, ext);
      if (got == cudaErrorMemoryAllocation && optional) {
        (void)cudaGetLastError();  // cleared: the run goes on without the array
        array_ = nullptr;
        return 0;
      }
      GF_CUDA_CHECK(got);
      ext_ = ext;
      cudaResourceDesc res{};
      res.resType = cudaResourceTypeArray;
      res.res.array.array = array_;
      cudaTextureDesc td{};
      for (int c = 0; c < 3; ++c) td.addressMode[c] = cudaAddressModeClamp;
      td.filterMode = cudaFilterModeLinear;
      td.readMode = cudaReadModeElementType;
      td.normalizedCoords = 0;
      GF_CUDA_CHECK(cudaCreateTextureObject(&tex_, &res, &td, nullptr));
    }
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr(const_cast<T*>(volume.data()), std::size_t(l.sy) * sizeof(T),
                                   std::size_t(l.n[0]), std::size_t(l.n[1]));
    p.dstArray = array_;
    p.extent = ext;
    p.kind = cudaMemcpyDeviceToDevice;
    GF_CUDA_CHECK(cudaMemcpy3DAsync(&p, be_.stream()));
    return tex_;
  }

  void release_texture() {
    if (tex_) cudaDestroyTextureObject(tex_);
    if (array_) cudaFreeArray(array_);
    tex_ = 0;
    array_ = nullptr;
  }

  CudaBackend<T>& be_;
  RayExecOptions opt_;
  std::optional<Field<T>> bricks_;
  // The count of empty bricks: on the device, its copy on the host, the
  // event of the copy, whether one is on its way, how many bricks it was of,
  // and the decision the last count gave (skipping until one arrives).
  DeviceBuffer empty_;
  unsigned* count_host_ = nullptr;
  cudaEvent_t counted_ = nullptr;
  bool counting_ = false;
  std::int64_t count_of_ = 0;
  bool last_skip_ = true;
  std::int64_t plain_frames_ = 0;  // frames drawn by a plain march that might have skipped
  cudaArray_t array_ = nullptr;
  cudaTextureObject_t tex_ = 0;
  cudaExtent ext_{};
};

}  // namespace

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cuda(Backend<T>& be) {
  return std::make_unique<RaymarchCuda<T>>(cuda_core(be));
}
template std::unique_ptr<RaymarchExec<float>> make_raymarch_cuda<float>(Backend<float>&);
template std::unique_ptr<RaymarchExec<double>> make_raymarch_cuda<double>(Backend<double>&);

}  // namespace gf
