// The ray marcher's executor: render_pixel (raymarch_ops.hpp) at every pixel,
// on the CPU (raymarch_cpu.cpp: rows handed out dynamically, rays differ in
// length) and on the GPU (raymarch_cuda.cu: one thread a pixel). The volume
// and the image stay in the backend's memory: a running field is drawn
// where it lives, and only the image comes back (Backend::download_image).
// Over MPI ranks rank 0 draws from the whole field on its own backend
// (Backend::rank_backend), so there is no wrapper over ranks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "kernels/backend.hpp"
#include "kernels/raymarch/raymarch_ops.hpp"

namespace gf {

// How the GPU executor marches (the CPU reference always takes every sample
// with the software trilinear sampler). Defaults from the environment
// (raymarch_options_from_env): GRIDFORGE_RM_SKIP=0 turns empty-space
// skipping off, =1 skips in every frame (unset: RaySkip::Auto, the plain
// march where too few bricks are empty, kRaySkipMinEmpty),
// GRIDFORGE_RM_CHUNK=N the samples of a chunk of the skipping march (a
// power of two, 1 to 256; unset: skip_chunk), GRIDFORGE_RM_BRICK=N sets the bricks' edge in cells (a power
// of two, 4 to 64; unset: raymarch_auto_brick), GRIDFORGE_RM_TEXTURE=1 samples
// a float32 volume through a 3D texture with the hardware's trilinear
// filtering (8-bit weights: images differ from the CPU's by more than
// round-off, within validate's bound: measured), =0 never (unset:
// raymarch_auto_texture), GRIDFORGE_RM_TILE=WxH sets the pixels of a block
// (W·H from 32 to 256: the kernels take up to 128 registers a thread).
enum class RayTexture { Auto, Off, On };
enum class RaySkip { Auto, Off, On };
struct RayExecOptions {
  RaySkip skip = RaySkip::Auto;
  int brick = 0;  // 0: raymarch_auto_brick
  int chunk = 0;  // samples a chunk of the skipping march; 0: skip_chunk()
  RayTexture texture = RayTexture::Auto;
  int tile_x = 8, tile_y = 8;
};

// The share of a frame's bricks that must be empty (brick_skippable) for
// emission-absorption to skip (RaySkip::Auto; MIP and the isosurface always
// skip): below it, the plain march is faster. Measured on an H100
// (docs/performance.md, "Ray marching: skipping where it pays"), clouds at
// 256³, 1280×720: with 89 % of the bricks empty skipping took 0.60 ms against
// 1.21 plain, with 46 % the two were within 5 % (plain ahead at 256³, 1280×720;
// skipping at 512³, 1920×1080), with 5 % skipping took 1.46 ms against 1.18.
inline constexpr double kRaySkipMinEmpty = 0.45;

// A plain march (RaySkip::Auto) builds the bricks, to count the empty ones
// again, every kRecountFrames-th frame only.
inline constexpr int kRecountFrames = 8;

// The bricks' edge for a volume of n points an axis: 16 cells, 32 from 448
// points on the longest axis. Measured on an H100 at 1920×1080, every mode
// (docs/performance.md, "Ray marching: the defaults by measurement"): 16
// beat 8 and 32 at 256³ and 384³, 32 beat 16 at 512³, 768³ and 1024³, and
// 64 lost at 512³.
inline int raymarch_auto_brick(const std::int64_t* n) {
  std::int64_t most = 0;
  for (int a = 0; a < 3; ++a) most = n[a] > most ? n[a] : most;
  return most >= 448 ? 32 : 16;
}

// Whether the GPU samples a volume of `points` values of `value_bytes` each
// through the texture when the options leave it to the executor: float32
// volumes up to 2^28 points, 2^26 for the isosurface. The copy into the
// texture's array, made each frame, outweighs the cheaper samples above
// that (emission-absorption at 1920×1080: 512³ 3.6 against 4.4 ms, 1024³
// 14.1 against 12.7 ms); the isosurface takes few samples a ray, and at
// 512³ the software sampler is ahead (1.9 against 2.2 ms). Where the array
// cannot be allocated the software sampler draws.
inline bool raymarch_auto_texture(std::int64_t points, int value_bytes, bool isosurface) {
  const std::int64_t most = std::int64_t(1) << (isosurface ? 26 : 28);
  return value_bytes == 4 && points <= most;
}

// The options the environment asks for; a malformed value is a UsageError
// naming the variable.
RayExecOptions raymarch_options_from_env();

template <class T>
class RaymarchExec {
 public:
  virtual ~RaymarchExec() = default;
  // The GPU's march (the CPU ignores them). The executor starts with
  // raymarch_options_from_env().
  virtual void set_options(const RayExecOptions&) {}
  // Renders the volume (a 3D field, where the backend keeps it) into img
  // (Backend::make_image(a.width, a.height)). `stop` (may be empty) is asked
  // between rows on the CPU: when it says true the rows left are not drawn
  // (a raymarch run that Ctrl-C ends writes no image); the GPU draws a frame
  // in one launch.
  virtual void render(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img,
                      const std::function<bool()>& stop) = 0;
};

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_exec(Backend<T>& be);

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cuda(Backend<T>& be);

}  // namespace gf
