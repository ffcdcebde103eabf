// The raymarch workload and in-situ frames (SPEC §1, §3): the volume (expr on
// the device, sdf and file on the host), the RayArgs of a render spec, rendering a field in
// the backend that holds it, and the raymarch run itself. Written against
// Backend<T>; knows nothing of CUDA.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "io/image.hpp"
#include "io/png_encode.hpp"
#include "kernels/backend.hpp"
#include "kernels/raymarch/raymarch_exec.hpp"
#include "solvers/bench.hpp"
#include "solvers/run.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// The signed distance of a scene node at point p (in double, on the host).
double sdf_distance(const SdfNode& n, const double p[3]);
// The scene (a union of its shapes).
double sdf_scene(const std::vector<SdfNode>& scene, const double p[3]);

// The raymarch case's volume at every grid point (x-fastest), on the host.
template <class T>
std::vector<T> raymarch_volume(const Case& c);

// The case's volume in `volume` (of c.grid), on its backend: an expression
// evaluated where the field lives (kernels/expr/), a scene or a file sampled
// on the host and uploaded. Returns how long an upload took (ms; 0 when none).
template <class T>
double set_raymarch_volume(const Case& c, Backend<T>& backend, Field<T>& volume);

// The RayArgs of spec `s` for a volume on grid g whose values span [vmin, vmax]
// (used when the range is auto); sphere tracing for distance fields.
template <class T>
RayArgs<T> ray_args(const RaySpec& s, const Grid& g, double vmin, double vmax, bool sphere_trace);

// Renders fields of one grid with one spec, on the backend that holds them.
template <class T>
class FrameRenderer {
 public:
  FrameRenderer(const RaySpec& s, const Grid& g, Backend<T>& backend, bool sphere_trace);
  // Renders f with the range [vmin, vmax] (auto) and brings the image to the
  // host. `stop`: RaymarchExec::render's (the image is incomplete when it said true).
  const io::Image& render(const Field<T>& f, double vmin, double vmax,
                          const std::function<bool()>& stop = {});
  // Same, with the range of f itself when the spec's range is auto (a reduction where f lives).
  const io::Image& render(const Field<T>& f);
  // Renders f as render(f, vmin, vmax) does and downloads the image into
  // `host` (width·height·4 floats; page-locked on a GPU for a fast copy)
  // instead of the renderer's own.
  void render_to(const Field<T>& f, double vmin, double vmax, float* host,
                 const std::function<bool()>& stop = {});
  // Same, the image downloaded as its PNG stores it (width·height·3 bytes,
  // Backend::download_image_rgb8): in-situ frames, which only write PNGs.
  void render_rgb8_to(const Field<T>& f, double vmin, double vmax, unsigned char* host);
  double last_render_ms() const { return render_ms_; }
  double last_download_ms() const { return download_ms_; }
  const RayArgs<T>& args() const { return args_; }

 private:
  const RaySpec& spec_;
  Grid grid_;
  Backend<T>& be_;
  std::unique_ptr<RaymarchExec<T>> exec_;
  bool sphere_trace_;
  RayArgs<T> args_;
  Field<float> img_;
  io::Image host_;
  std::unique_ptr<Timer> timer_;
  double render_ms_ = 0, download_ms_ = 0;
  // The range's args, the march into img_, and its time.
  void draw(const Field<T>& f, double vmin, double vmax, const std::function<bool()>& stop);
};

// The field in-situ frames draw among a run's fields (Stepper::fields(),
// Driven::fields()): the one render.field names, the first when it names
// none (the case reader checked the name against the workload's fields).
template <class T>
NamedField<T> frame_field(const RaySpec& render, const std::vector<NamedField<T>>& fields) {
  if (render.field.empty() && !fields.empty()) return fields.front();
  for (const NamedField<T>& f : fields)
    if (f.name == render.field) return f;
  throw std::logic_error("render.field names '" + render.field + "', a field the run lacks");
}

// In-situ frames of a heat, stencil, wave, pde or laplace run:
// frames/<name>_<step6>.png at every multiple of render.every, of the field
// render.field names (frame_field; the caller passes it to write()). On a 3D
// grid the field is ray-marched where it lives and only the image comes back;
// on a 1D or 2D grid the field is downloaded and drawn on the host
// (solvers/frame_plot.hpp), with the PNG, by the output writer's thread when
// there is one. Over several MPI ranks every rank calls write() at the same
// steps: the owned blocks are gathered into the whole field on rank 0
// (gather_global), which uploads it to its own device
// (Backend::rank_backend) and renders it there, the same image as one rank
// draws; the other ranks draw nothing. The PNGs are encoded over threads
// (io/png_encode.hpp: cpu::png_threads()).
template <class T>
class InSituFrames {
 public:
  InSituFrames(const Case& c, Backend<T>& backend, const std::filesystem::path& out_dir);
  ~InSituFrames();  // after the tasks it queued have run (OutputWriter joined)
  InSituFrames(const InSituFrames&) = delete;
  InSituFrames& operator=(const InSituFrames&) = delete;
  bool due(std::int64_t step) const { return step % every_ == 0; }
  std::int64_t every() const { return every_; }
  // Renders the field and writes its frame; returns the seconds spent here
  // (the range, render and download and, without `queue`, the PNG). With
  // `queue` the PNG (encoding over threads and file) is handed to it as a
  // task, reading the image (8-bit RGB, render_rgb8_to) from one of up to
  // kFrameImages host buffers, which stays taken until the task is done (a
  // frame waits for a free one).
  // range: the field's least and greatest value at this step, when the
  // caller has them (Observation::range): an auto range takes them instead of
  // reducing the field again (one rank only).
  double write(std::int64_t step, const Field<T>& f,
               const std::function<void(std::function<void()>)>& queue = {},
               const std::array<double, 2>* range = nullptr);
  nlohmann::json summary() const;

 private:
  struct Images;  // the host images of the 3D frames, and which are taken
  const Case& c_;
  Backend<T>& be_;
  std::filesystem::path dir_;
  std::int64_t every_;
  int png_threads_;
  std::optional<FrameRenderer<T>> renderer_;  // not on MPI ranks other than 0
  std::unique_ptr<Images> images_;            // with renderer_
  Field<T> whole_;                            // rank 0 of several: the gathered field
  // 1D and 2D: the field on the host, drawn there (with `queue`, on its thread)
  double plot(std::int64_t step, const Field<T>& f,
              const std::function<void(std::function<void()>)>& queue);
  // A PNG written (on whichever thread): its encoding's record.
  void png_written(const io::PngStats& st, double write_s);
  std::int64_t frames_ = 0, range_reductions_ = 0;
  double render_ms_ = 0, range_ms_ = 0, download_ms_ = 0, total_s_ = 0, image_wait_s_ = 0;
  std::array<double, 2> first_ms_{0, 0};  // the first frame's render and download
  // on whichever thread: microseconds (drawing; the PNG's encoding, wall and
  // CPU; the whole PNG task), bytes, threads
  std::atomic<std::int64_t> draw_us_{0}, encode_us_{0}, encode_cpu_us_{0}, write_us_{0};
  std::atomic<std::int64_t> png_bytes_{0}, pngs_{0};
  std::atomic<int> encode_threads_{0};
};

// Host images an in-situ run's 3D frames go through, at most: one being
// encoded while the next is rendered and downloaded (the second is made only
// when a frame finds the first still taken).
inline constexpr int kFrameImages = 2;

// The frame file of a step: frames/<name>_<step6>.png.
std::filesystem::path frame_path(const std::filesystem::path& out_dir, const std::string& name,
                                 std::int64_t step);

// Device memory of a raymarch case: the volume and the image (over several
// MPI ranks, rank 0's: the whole volume; the others need none).
template <class T>
MemoryNeed raymarch_memory_needed(const Case& c);

// A raymarch run: <name>.png, image.h5 (output.formats has hdf5), timing.json.
// Over several MPI ranks rank 0 renders the whole volume on its own device
// and the others wait for its timing record (rendering is not split).
template <class T>
nlohmann::json run_raymarch(const Case& c, Backend<T>& backend, const RunOptions& opts);

// The samples a frame's plain march takes without early termination (every
// ray's steps through the volume's box; the isosurface's first sample too):
// the count raymarch_peer.py reports, so that samples/s compare.
template <class T>
double plain_samples(const RayArgs<T>& a, const Grid& g);

// gridforge bench's raymarch rows: the volume made on the backend once, then
// frames rendered into the backend's image (no download), timed as steps
// (solvers/bench.cpp's time_steps). Points: the volume's; rays and samples:
// a frame's (plain_samples).
template <class T>
BenchTiming time_raymarch_frames(const Case& c, Backend<T>& backend, const TimingPlan& plan);

}  // namespace gf
