#include "solvers/raymarch.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "core/interrupt.hpp"
#include "core/mpi.hpp"
#include "core/process.hpp"
#include "core/rank_errors.hpp"
#include "grid/gather.hpp"
#include "core/threads.hpp"
#include "io/expression.hpp"
#include "io/output.hpp"
#include "solvers/expr_fill.hpp"
#include "solvers/input_values.hpp"
#include "solvers/frame_plot.hpp"

namespace gf {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
double len3(const double a[3]) { return std::sqrt(dot3(a, a)); }

// Polynomial smooth minimum (Quílez): equal to min() where a and b differ by more than k.
double smooth_min(double a, double b, double k) {
  const double h = std::clamp(0.5 + 0.5 * (b - a) / k, 0.0, 1.0);
  return b + h * (a - b) - k * h * (1 - h);
}

}  // namespace

double sdf_distance(const SdfNode& n, const double p[3]) {
  using K = SdfNode::Kind;
  double d[3];
  for (int c = 0; c < 3; ++c) d[c] = p[c] - n.a[c];
  switch (n.kind) {
    case K::Sphere:
      return len3(d) - n.r;
    case K::Box: {
      double q[3], outside[3];
      for (int c = 0; c < 3; ++c) {
        q[c] = std::fabs(d[c]) - n.b[c];
        outside[c] = std::max(q[c], 0.0);
      }
      return len3(outside) + std::min(std::max({q[0], q[1], q[2]}), 0.0);
    }
    case K::Torus: {
      const double along = dot3(d, n.b.data());
      double radial[3];
      for (int c = 0; c < 3; ++c) radial[c] = d[c] - along * n.b[c];
      const double ring = len3(radial) - n.r;
      return std::sqrt(ring * ring + along * along) - n.r2;
    }
    case K::Capsule: {
      double ba[3];
      for (int c = 0; c < 3; ++c) ba[c] = n.b[c] - n.a[c];
      const double bb = dot3(ba, ba);
      const double t = bb > 0 ? std::clamp(dot3(d, ba) / bb, 0.0, 1.0) : 0.0;
      double e[3];
      for (int c = 0; c < 3; ++c) e[c] = d[c] - t * ba[c];
      return len3(e) - n.r;
    }
    case K::Plane:
      return dot3(d, n.b.data());
    case K::Union:
      return sdf_scene(n.children, p);
    case K::Intersection: {
      double v = -INFINITY;
      for (const SdfNode& ch : n.children) v = std::max(v, sdf_distance(ch, p));
      return v;
    }
    case K::Difference: {
      double v = sdf_distance(n.children[0], p);
      for (std::size_t i = 1; i < n.children.size(); ++i)
        v = std::max(v, -sdf_distance(n.children[i], p));
      return v;
    }
    case K::SmoothUnion: {
      double v = sdf_distance(n.children[0], p);
      for (std::size_t i = 1; i < n.children.size(); ++i)
        v = smooth_min(v, sdf_distance(n.children[i], p), n.k);
      return v;
    }
  }
  return INFINITY;
}

double sdf_scene(const std::vector<SdfNode>& scene, const double p[3]) {
  double v = INFINITY;
  for (const SdfNode& n : scene) v = std::min(v, sdf_distance(n, p));
  return v;
}

template <class T>
std::vector<T> raymarch_volume(const Case& c) {
  const Grid& g = c.grid;
  const RayVolumeSpec& vol = c.raymarch.volume;
  std::vector<T> v(static_cast<std::size_t>(g.size()));
  switch (vol.kind) {
    case RayVolumeSpec::Kind::Expr:
      sample_expression<T>(Expr{vol.expr, vol.expr_loc, "raymarch.volume.expr"}, c.parameters, g,
                           v.data());
      break;
    case RayVolumeSpec::Kind::Sdf: {
      // a distance is a few dozen operations a node: a thread per 8192 points
#pragma omp parallel for collapse(2) schedule(static) \
    num_threads(cpu::threads_for(g.size(), 8192))
      for (std::int64_t k = 0; k < g.n[2]; ++k)
        for (std::int64_t j = 0; j < g.n[1]; ++j)
          for (std::int64_t i = 0; i < g.n[0]; ++i) {
            const double p[3] = {g.coord(0, i), g.coord(1, j), g.coord(2, k)};
            v[g.index(i, j, k)] = static_cast<T>(sdf_scene(vol.sdf, p));
          }
      break;
    }
    case RayVolumeSpec::Kind::File: {
      const std::vector<double> d = io::h5_read_dataset(vol.path, vol.dataset);
      if (d.size() != v.size())
        throw CaseError(SourceLoc{c.file}, "raymarch.volume.file.dataset",
                        fmt::format("dataset '{}' in '{}' has {} values; the grid has {}",
                                    vol.dataset, vol.path, d.size(), v.size()));
      // NaN, Inf or a float32 overflow would draw an empty or black image.
      check_values<T>(d, g, SourceLoc{c.file}, "raymarch.volume.file",
                      fmt::format("dataset '{}' in '{}'", vol.dataset, vol.path));
      for (std::size_t q = 0; q < d.size(); ++q) v[q] = static_cast<T>(d[q]);
      break;
    }
  }
  return v;
}

template <class T>
double set_raymarch_volume(const Case& c, Backend<T>& backend, Field<T>& volume) {
  const RayVolumeSpec& vol = c.raymarch.volume;
  if (vol.kind == RayVolumeSpec::Kind::Expr) {
    fill_expression(backend, Expr{vol.expr, vol.expr_loc, "raymarch.volume.expr"}, c.parameters,
                    volume);
    return 0;
  }
  // each rank samples its own block: one that fails stops every rank
  const std::vector<T> host =
      on_every_rank(shared_by_ranks(backend), [&] { return raymarch_volume<T>(c); });
  auto timer = backend.make_timer();
  timer->start();
  backend.upload(host.data(), volume);
  return timer->stop_ms();
}

template <class T>
RayArgs<T> ray_args(const RaySpec& s, const Grid& g, double vmin, double vmax, bool sphere_trace) {
  RayArgs<T> a;
  for (int c = 0; c < 3; ++c) {
    a.origin[c] = T(g.origin[c]);
    a.h[c] = T(g.h[c]);
  }
  double fwd[3], up[3], right[3];
  for (int c = 0; c < 3; ++c) fwd[c] = s.look_at[c] - s.position[c];
  const double fl = len3(fwd);
  for (double& x : fwd) x /= fl;
  // right = fwd × up, then up = right × fwd: orthonormal, right-handed.
  right[0] = fwd[1] * s.up[2] - fwd[2] * s.up[1];
  right[1] = fwd[2] * s.up[0] - fwd[0] * s.up[2];
  right[2] = fwd[0] * s.up[1] - fwd[1] * s.up[0];
  const double rl = len3(right);
  for (double& x : right) x /= rl;
  up[0] = right[1] * fwd[2] - right[2] * fwd[1];
  up[1] = right[2] * fwd[0] - right[0] * fwd[2];
  up[2] = right[0] * fwd[1] - right[1] * fwd[0];
  // One light, over the viewer's left shoulder.
  double light[3];
  for (int c = 0; c < 3; ++c) light[c] = -fwd[c] + 0.6 * up[c] - 0.4 * right[c];
  const double ll = len3(light);
  for (int c = 0; c < 3; ++c) {
    a.eye[c] = T(s.position[c]);
    a.fwd[c] = T(fwd[c]);
    a.right[c] = T(right[c]);
    a.up[c] = T(up[c]);
    a.light[c] = T(light[c] / ll);
    a.background[c] = float(s.background[c]);
  }
  a.tan_half = T(std::tan(s.fov_deg * 3.14159265358979323846 / 360.0));
  a.width = int(s.width);
  a.height = int(s.height);
  a.mode = s.mode == "mip"          ? RayMode::Mip
           : s.mode == "isosurface" ? RayMode::Isosurface
                                    : RayMode::EmissionAbsorption;
  a.colormap = s.colormap == "inferno"     ? Colormap::Inferno
               : s.colormap == "grayscale" ? Colormap::Grayscale
               : s.colormap == "coolwarm"  ? Colormap::Coolwarm
                                           : Colormap::Viridis;
  double lo = s.range_auto ? vmin : s.range_lo, hi = s.range_auto ? vmax : s.range_hi;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {  // a constant (or empty) volume
    lo = std::isfinite(lo) ? lo : 0.0;
    hi = lo + 1;
  }
  a.lo = T(lo);
  a.hi = T(hi);
  a.density = T(s.density);
  a.isovalue = T(s.isovalue);
  a.step = T(s.step * g.min_h());
  a.sphere_trace = sphere_trace && a.mode == RayMode::Isosurface;
  return a;
}

// ---- FrameRenderer ------------------------------------------------------------------

template <class T>
FrameRenderer<T>::FrameRenderer(const RaySpec& s, const Grid& g, Backend<T>& backend,
                                bool sphere_trace)
    : spec_(s),
      grid_(g),
      be_(backend),
      exec_(make_raymarch_exec(backend)),
      sphere_trace_(sphere_trace),
      args_(ray_args<T>(s, g, 0.0, 1.0, sphere_trace)),
      img_(backend.make_image(args_.width, args_.height)),
      timer_(backend.make_timer()) {
  host_.width = args_.width;
  host_.height = args_.height;
}

template <class T>
const io::Image& FrameRenderer<T>::render(const Field<T>& f, double vmin, double vmax,
                                          const std::function<bool()>& stop) {
  // The host image on first use: in-situ frames draw into images of their
  // own (render_to), and 14.7 MB zeroed at 1280×720 cost their run's setup.
  host_.rgba.resize(std::size_t(args_.width) * std::size_t(args_.height) * 4);
  render_to(f, vmin, vmax, host_.rgba.data(), stop);
  return host_;
}

template <class T>
void FrameRenderer<T>::draw(const Field<T>& f, double vmin, double vmax,
                            const std::function<bool()>& stop) {
  args_ = ray_args<T>(spec_, grid_, vmin, vmax, sphere_trace_);
  timer_->start();
  exec_->render(args_, f, img_, stop);
  render_ms_ = timer_->stop_ms();
}

template <class T>
void FrameRenderer<T>::render_to(const Field<T>& f, double vmin, double vmax, float* host,
                                 const std::function<bool()>& stop) {
  draw(f, vmin, vmax, stop);
  timer_->start();
  be_.download_image(img_, host);
  download_ms_ = timer_->stop_ms();
}

template <class T>
void FrameRenderer<T>::render_rgb8_to(const Field<T>& f, double vmin, double vmax,
                                      unsigned char* host) {
  draw(f, vmin, vmax, {});
  timer_->start();
  be_.download_image_rgb8(img_, host);
  download_ms_ = timer_->stop_ms();
}

template <class T>
const io::Image& FrameRenderer<T>::render(const Field<T>& f) {
  if (!spec_.range_auto) return render(f, spec_.range_lo, spec_.range_hi);
  const FieldStats st = be_.vec().stats(f);
  return render(f, st.min, st.max);
}

template <class T>
double plain_samples(const RayArgs<T>& a, const Grid& g) {
  const Layout l = Layout::dense(g.n.data());
  double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) \
    num_threads(cpu::threads_for(std::int64_t(a.width) * a.height, 4096))
  for (int py = 0; py < a.height; ++py)
    for (int px = 0; px < a.width; ++px) {
      T dir[3], t0, t1;
      pixel_ray(a, px, py, dir);
      if (ray_box(a, l, dir, t0, t1))
        total += double(march_steps(a, t0, t1)) + (a.mode == RayMode::Isosurface ? 1 : 0);
    }
  return total;
}

template <class T>
BenchTiming time_raymarch_frames(const Case& c, Backend<T>& backend, const TimingPlan& plan) {
  Field<T> volume = backend.make_field(c.grid, "the volume");
  set_raymarch_volume(c, backend, volume);
  const FieldStats range = backend.vec().stats(volume);
  const RayArgs<T> a = ray_args<T>(c.raymarch, c.grid, range.min, range.max,
                                   c.raymarch.volume.kind == RayVolumeSpec::Kind::Sdf);
  auto exec = make_raymarch_exec(backend);
  Field<float> img = backend.make_image(a.width, a.height);
  auto timer = backend.make_timer();
  BenchTiming t = time_steps(
      [&](std::int64_t n) {
        for (std::int64_t f = 0; f < n; ++f) exec->render(a, volume, img, {});
      },
      *timer, plan);
  t.points = c.grid.size();
  t.rays = std::int64_t(a.width) * a.height;
  t.samples = plain_samples(a, c.grid);
  return t;
}

// ---- in-situ frames ----------------------------------------------------------------

std::filesystem::path frame_path(const std::filesystem::path& out_dir, const std::string& name,
                                 std::int64_t step) {
  return out_dir / "frames" / fmt::format("{}_{:06d}.png", name, step);
}

// The 3D frames' host images: each taken from its download until its PNG
// is written (a Lease held by the task, released however the task ends:
// run, failed, or dropped by a writer that failed before). The first is
// made with the frames, before the time loop; a second only when a frame
// finds the first still taken (its PNG not yet written), up to kFrameImages.
template <class T>
struct InSituFrames<T>::Images {
  int width = 0, height = 0;
  Backend<T>* pin = nullptr;  // where they are page-locked (a GPU's), or null
  std::vector<std::unique_ptr<io::Rgb8Image>> img;  // never moved: tasks hold references
  std::vector<bool> taken;
  std::mutex m;
  std::condition_variable cv;

  struct Lease {
    Images* of;
    int i;
    ~Lease() {
      {
        std::lock_guard<std::mutex> lk(of->m);
        of->taken[std::size_t(i)] = false;
      }
      of->cv.notify_all();
    }
  };
  ~Images() {
    if (pin)
      for (auto& im : img) pin->unpin_host(im->rgb.data());
  }
  // One more image (the caller's thread is the only one that adds them).
  void add() {
    auto im = std::make_unique<io::Rgb8Image>();
    im->width = width;
    im->height = height;
    im->rgb.resize(std::size_t(width) * std::size_t(height) * 3);
    if (pin) pin->pin_host(im->rgb.data(), im->rgb.size());
    std::lock_guard<std::mutex> lk(m);
    img.push_back(std::move(im));
    taken.push_back(false);
  }
  // A free image (a new one, or waiting for one), taken until the lease goes.
  std::shared_ptr<Lease> take() {
    auto free_one = [&](std::size_t& i) {
      for (i = 0; i < taken.size(); ++i)
        if (!taken[i]) return true;
      return false;
    };
    std::size_t i = 0;
    {
      std::unique_lock<std::mutex> lk(m);
      if (!free_one(i) && taken.size() < std::size_t(kFrameImages)) {
        lk.unlock();
        add();
        lk.lock();
      }
      cv.wait(lk, [&] { return free_one(i); });
      taken[i] = true;
    }
    return std::shared_ptr<Lease>(new Lease{this, int(i)});
  }
};

template <class T>
InSituFrames<T>::InSituFrames(const Case& c, Backend<T>& backend,
                              const std::filesystem::path& out_dir)
    : c_(c), be_(backend), dir_(out_dir), every_(c.render.every), png_threads_(cpu::png_threads()) {
  if (c.decomp && mpi::rank() != 0) return;  // rank 0 draws
  const Grid& g = c.decomp ? c.decomp->global : c.grid;
  Backend<T>& own = backend.rank_backend();
  if (c.render.ndim == 3) {
    renderer_.emplace(c.render, g, own, false);
    if (c.decomp) whole_ = own.make_field(g, "the whole field, gathered for the frames");
    // The first image, allocated and page-locked here rather than in the time loop.
    images_ = std::make_unique<Images>();
    images_->width = int(c.render.width);
    images_->height = int(c.render.height);
    if (own.is_gpu()) images_->pin = &own;
    images_->add();
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir / "frames", ec);
  if (ec)
    throw IoError(
        fmt::format("cannot create folder '{}': {}", (out_dir / "frames").string(), ec.message()));
}

template <class T>
InSituFrames<T>::~InSituFrames() = default;

template <class T>
void InSituFrames<T>::png_written(const io::PngStats& st, double write_s) {
  encode_us_ += std::int64_t(st.wall_s * 1e6);
  encode_cpu_us_ += std::int64_t(st.cpu_s * 1e6);
  write_us_ += std::int64_t(write_s * 1e6);
  png_bytes_ += st.bytes;
  ++pngs_;
  encode_threads_ = std::max(encode_threads_.load(), st.threads);
}

template <class T>
double InSituFrames<T>::write(std::int64_t step, const Field<T>& f,
                              const std::function<void(std::function<void()>)>& queue,
                              const std::array<double, 2>* range) {
  if (c_.render.ndim < 3) return plot(step, f, queue);
  const auto t0 = Clock::now();
  const Field<T>* drawn = &f;
  if (c_.decomp) {  // every rank's owned block into the whole field, on rank 0
    const std::vector<unsigned char> all =
        gather_global(*c_.decomp, download_bytes(be_, f), sizeof(T));
    if (!renderer_) return seconds_since(t0);
    be_.rank_backend().upload(reinterpret_cast<const T*>(all.data()), whole_);
    drawn = &whole_;
    range = nullptr;  // the observation's is the rank's
  }
  // The range: fixed, the caller's (the same reduction of the same field), or reduced here.
  const RaySpec& s = c_.render;
  double lo = s.range_lo, hi = s.range_hi;
  if (s.range_auto && range) {
    lo = (*range)[0];
    hi = (*range)[1];
  } else if (s.range_auto) {
    const auto r0 = Clock::now();
    const FieldStats st = be_.rank_backend().vec().stats(*drawn);
    lo = st.min;
    hi = st.max;
    range_ms_ += seconds_since(r0) * 1e3;
    ++range_reductions_;
  }
  const auto w0 = Clock::now();
  std::shared_ptr<typename Images::Lease> lease = images_->take();
  image_wait_s_ += seconds_since(w0);
  io::Rgb8Image& img = *images_->img[std::size_t(lease->i)];
  renderer_->render_rgb8_to(*drawn, lo, hi, img.rgb.data());
  render_ms_ += renderer_->last_render_ms();
  download_ms_ += renderer_->last_download_ms();
  if (frames_ == 0) first_ms_ = {renderer_->last_render_ms(), renderer_->last_download_ms()};
  const std::filesystem::path path = frame_path(dir_, c_.name, step);
  auto encode = [this, lease, &img, path] {
    const auto e0 = Clock::now();
    io::PngStats st;
    io::write_png(path, img, io::kFramePngLevel, png_threads_, &st);
    png_written(st, seconds_since(e0));
  };
  if (queue)
    queue(std::move(encode));
  else
    encode();
  ++frames_;
  const double sec = seconds_since(t0);
  total_s_ += sec;
  return sec;
}

template <class T>
double InSituFrames<T>::plot(std::int64_t step, const Field<T>& f,
                             const std::function<void(std::function<void()>)>& queue) {
  const auto t0 = Clock::now();
  auto host = std::make_shared<std::vector<T>>();
  if (c_.decomp) {  // every rank's owned block into the whole field, on rank 0
    const std::vector<unsigned char> all =
        gather_global(*c_.decomp, download_bytes(be_, f), sizeof(T));
    if (mpi::rank() != 0) return seconds_since(t0);
    host->resize(all.size() / sizeof(T));
    std::memcpy(host->data(), all.data(), all.size());
  } else {
    host->resize(f.points());
    be_.download(f, host->data());
  }
  const Grid g = c_.decomp ? c_.decomp->global : c_.grid;
  const std::filesystem::path path = frame_path(dir_, c_.name, step);
  auto draw = [this, host, g, path] {
    const auto d0 = Clock::now();
    const auto [lo, hi] = frame_range(c_.render, host->data(), std::int64_t(host->size()));
    const io::Image img = draw_frame(c_.render, g, host->data(), lo, hi);
    draw_us_ += std::int64_t(seconds_since(d0) * 1e6);
    const auto e0 = Clock::now();
    io::PngStats st;
    io::write_png(path, img, io::kFramePngLevel, png_threads_, &st);
    png_written(st, seconds_since(e0));
  };
  if (queue)
    queue(std::move(draw));
  else
    draw();
  ++frames_;
  const double s = seconds_since(t0);
  total_s_ += s;
  return s;
}

template <class T>
nlohmann::json InSituFrames<T>::summary() const {
  const bool ray = c_.render.ndim == 3;
  const double ms = ray ? render_ms_ : double(draw_us_.load()) / 1e3;
  const double n = frames_ ? double(frames_) : 1.0;
  const double pngs = pngs_ ? double(pngs_.load()) : 1.0;
  nlohmann::json split = {{"encode", double(encode_us_.load()) / 1e3 / pngs},
                          {"encode_cpu", double(encode_cpu_us_.load()) / 1e3 / pngs},
                          {"write", double(write_us_.load()) / 1e3 / pngs}};
  if (ray) {
    split["range"] = range_ms_ / n;
    split["render"] = render_ms_ / n;
    split["download"] = download_ms_ / n;
  } else {
    split["draw"] = double(draw_us_.load()) / 1e3 / n;
  }
  nlohmann::json j = {{"frames", frames_},
                      {"every", every_},
                      {"image", {c_.render.width, c_.render.height}},
                      {"mode", ray                   ? c_.render.mode
                               : c_.render.ndim == 2 ? std::string("image")
                                                     : std::string("line plot")},
                      {"ms_per_frame", frames_ ? ms / double(frames_) : 0.0},
                      {"total_s", total_s_},
                      {"per_frame_ms", split},
                      {"encode_threads", encode_threads_.load()},
                      {"png_bytes_per_frame", pngs_ ? double(png_bytes_.load()) / pngs : 0.0}};
  if (ray) {
    // The first frame alone: on a GPU its render may include loading the kernels
    // (CUDA loads them at their first launch).
    j["first_frame_ms"] = {{"render", first_ms_[0]}, {"download", first_ms_[1]}};
    j["range_reductions"] = range_reductions_;
    j["image_wait_s"] = image_wait_s_;
  }
  return j;
}

// ---- the raymarch run -----------------------------------------------------------------

template <class T>
MemoryNeed raymarch_memory_needed(const Case& c) {
  if (c.decomp && mpi::rank() != 0) return {0, 0, {}, 0};
  const std::size_t image = std::size_t(c.raymarch.width) * std::size_t(c.raymarch.height) * 16;
  const Grid& g = c.decomp ? c.decomp->global : c.grid;
  return {1, std::size_t(g.size()) * sizeof(T) + image + (1 << 20), {}, 0};
}

template <class T>
nlohmann::json run_raymarch(const Case& c, Backend<T>& backend, const RunOptions& opts) {
  if (c.decomp) {  // rank 0 renders the whole volume on its own device
    nlohmann::json t;
    // Whatever stops rank 0 (a volume that is not finite, a file it cannot
    // read, Ctrl-C: exit 130) stops every rank alike: the others wait for it.
    std::exception_ptr failure;
    if (mpi::rank() == 0) {
      Case whole = c;
      whole.grid = c.decomp->global;
      whole.decomp = nullptr;
      try {
        t = run_raymarch(whole, backend.rank_backend(), opts);
        t["ranks"] = c.decomp->nranks;
        t["rendered_on"] = "rank 0";
        io::write_json_atomic(opts.out_dir / "timing.json", t);
      } catch (...) {
        failure = std::current_exception();
      }
    }
    agree_on_errors(failure);
    return nlohmann::json::parse(mpi::broadcast(t.dump()));
  }
  const auto t_start = Clock::now();
  const RaySpec& s = c.raymarch;
  Field<T> volume = backend.make_field(c.grid, "the volume");
  const double upload_ms = set_raymarch_volume(c, backend, volume);
  // the range of its values (the points are all finite: checked as sampled)
  const FieldStats range = backend.vec().stats(volume);
  const double vmin = range.min, vmax = range.max;
  FrameRenderer<T> renderer(s, c.grid, backend, s.volume.kind == RayVolumeSpec::Kind::Sdf);
  const double setup_s = seconds_since(t_start) - upload_ms / 1e3;
  // Ctrl-C: no image is written (the CPU stops between rows).
  const auto stopped = [&] {
    if (interrupt_requested())
      throw InterruptedError(fmt::format("interrupted while rendering; no image written in {}",
                                         opts.out_dir.string()));
  };
  stopped();  // after the volume
  // On the GPU a first frame loads the kernel and warms the caches; the one timed is the second.
  if (backend.is_gpu()) renderer.render(volume, vmin, vmax, interrupt_requested);
  const io::Image& img = renderer.render(volume, vmin, vmax, interrupt_requested);
  stopped();
  const double ms = renderer.last_render_ms();
  if (opts.started) opts.started();
  const auto t_out = Clock::now();
  io::write_png(opts.out_dir / (c.name + ".png"), img, 5, cpu::png_threads());
  if (c.output.hdf5) io::write_image_h5(opts.out_dir / "image.h5", img);
  const double output_s = seconds_since(t_out);
  const double rays = double(s.width) * double(s.height);
  const double samples = plain_samples(renderer.args(), c.grid);
  const auto [startup_s, total_s] = whole_process(t_start);
  nlohmann::json timing = {
      {"case", c.name},
      {"workload", "raymarch"},
      {"device", backend.name()},
      {"precision", to_string(c.precision)},
      {"grid", {c.grid.n[0], c.grid.n[1], c.grid.n[2]}},
      {"steps", 1},
      {"phases_s",
       {{"startup", startup_s},
        {"setup", setup_s},
        {"upload", upload_ms / 1e3},
        {"compute", ms / 1e3},
        {"download", renderer.last_download_ms() / 1e3},
        {"output", output_s},
        {"total", total_s}}},
      {"per_step_ms", {{"min", ms}, {"median", ms}, {"max", ms}}},
      {"image", {s.width, s.height}},
      {"mode", s.mode},
      {"frames", 1},
      {"ms_per_frame", ms},
      {"rays_per_s", ms > 0 ? rays / (ms / 1e3) : 0.0},
      // the plain march's samples without early termination (the peer's count)
      {"samples_per_frame", samples},
      {"samples_per_s", ms > 0 ? samples / (ms / 1e3) : 0.0},
      {"points_per_s", 0.0},
      {"effective_GBps", 0.0},
      {"device_memory_peak_bytes", backend.memory().peak_bytes()},
      {"host_memory_peak_bytes", host_memory_peak_bytes()},
  };
  if (!backend.is_gpu()) {
    timing["threads"] = cpu::threads_for_rays(std::int64_t(s.width) * s.height);
    timing["threads_max"] = cpu::max_threads();
  }
  io::write_json_atomic(opts.out_dir / "timing.json", timing);
  return timing;
}

#define GF_INSTANTIATE(T)                                                             \
  template std::vector<T> raymarch_volume<T>(const Case&);                            \
  template double set_raymarch_volume<T>(const Case&, Backend<T>&, Field<T>&);        \
  template RayArgs<T> ray_args<T>(const RaySpec&, const Grid&, double, double, bool); \
  template double plain_samples<T>(const RayArgs<T>&, const Grid&);                   \
  template BenchTiming time_raymarch_frames<T>(const Case&, Backend<T>&, const TimingPlan&); \
  template class FrameRenderer<T>;                                                    \
  template class InSituFrames<T>;                                                     \
  template MemoryNeed raymarch_memory_needed<T>(const Case&);                         \
  template nlohmann::json run_raymarch<T>(const Case&, Backend<T>&, const RunOptions&);
GF_INSTANTIATE(float)
GF_INSTANTIATE(double)
#undef GF_INSTANTIATE

}  // namespace gf
