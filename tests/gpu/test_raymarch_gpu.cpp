// The CUDA raymarch executor against the CPU reference: random volumes
// (smooth and white noise), random cameras, every mode and colormap, sphere
// tracing, both precisions, image sizes that are not multiples of the 8×8
// block, and images poisoned with NaN first so that every pixel must be written.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "io/image.hpp"
#include "kernels/backend.hpp"
#include "kernels/device.hpp"
#include "kernels/raymarch/raymarch_exec.hpp"

using namespace gf;

namespace {

struct Scene {
  Grid grid;
  bool noise = false;
};

template <class T>
std::vector<T> random_volume(const Grid& g, bool noise, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> v(static_cast<std::size_t>(g.size()));
  if (noise) {
    for (auto& x : v) x = static_cast<T>(u(rng));
    return v;
  }
  // A few Gaussian blobs: smooth, with isosurfaces to find.
  double c[4][3], w[4], a[4];
  for (int b = 0; b < 4; ++b) {
    for (int k = 0; k < 3; ++k)
      c[b][k] = g.origin[k] + (0.2 + 0.6 * u(rng)) * (g.n[k] - 1) * g.h[k];
    w[b] = 0.05 + 0.1 * u(rng);
    a[b] = 0.5 + u(rng);
  }
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const double p[3] = {g.coord(0, i), g.coord(1, j), g.coord(2, k)};
        double s = 0;
        for (int b = 0; b < 4; ++b) {
          double r2 = 0;
          for (int q = 0; q < 3; ++q) r2 += (p[q] - c[b][q]) * (p[q] - c[b][q]);
          s += a[b] * std::exp(-r2 / w[b]);
        }
        v[g.index(i, j, k)] = static_cast<T>(s);
      }
  return v;
}

// A camera at distance 1.2–3 from the volume's centre, looking near it, with
// a random up (never along the view).
template <class T>
RayArgs<T> random_args(const Grid& g, int width, int height, RayMode mode, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  RayArgs<T> a;
  double centre[3], ext = 0;
  for (int k = 0; k < 3; ++k) {
    a.origin[k] = T(g.origin[k]);
    a.h[k] = T(g.h[k]);
    centre[k] = g.origin[k] + 0.5 * (g.n[k] - 1) * g.h[k];
    ext = std::max(ext, (g.n[k] - 1) * g.h[k]);
  }
  double dir[3], len = 0;
  for (double& d : dir) d = 2 * u(rng) - 1, len += d * d;
  len = std::sqrt(len);
  const double dist = ext * (1.2 + 1.8 * u(rng));
  double eye[3], fwd[3];
  for (int k = 0; k < 3; ++k) {
    eye[k] = centre[k] + dist * dir[k] / len;
    fwd[k] = centre[k] + 0.1 * ext * (u(rng) - 0.5) - eye[k];
  }
  auto normalize = [](double* v) {
    const double l = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; ++k) v[k] /= l;
  };
  normalize(fwd);
  double up[3] = {u(rng) - 0.5, u(rng) - 0.5, 1.0}, right[3];
  right[0] = fwd[1] * up[2] - fwd[2] * up[1];
  right[1] = fwd[2] * up[0] - fwd[0] * up[2];
  right[2] = fwd[0] * up[1] - fwd[1] * up[0];
  normalize(right);
  up[0] = right[1] * fwd[2] - right[2] * fwd[1];
  up[1] = right[2] * fwd[0] - right[0] * fwd[2];
  up[2] = right[0] * fwd[1] - right[1] * fwd[0];
  double light[3] = {-fwd[0] + 0.6 * up[0], -fwd[1] + 0.6 * up[1], -fwd[2] + 0.6 * up[2]};
  normalize(light);
  for (int k = 0; k < 3; ++k) {
    a.eye[k] = T(eye[k]);
    a.fwd[k] = T(fwd[k]);
    a.right[k] = T(right[k]);
    a.up[k] = T(up[k]);
    a.light[k] = T(light[k]);
    a.background[k] = float(u(rng));
  }
  a.tan_half = T(std::tan((20 + 40 * u(rng)) * 3.14159265358979 / 360));
  a.width = width;
  a.height = height;
  a.mode = mode;
  a.colormap = Colormap(int(u(rng) * 4) % 4);
  a.lo = T(0.1 * u(rng));
  a.hi = T(0.8 + 0.5 * u(rng));
  a.density = T(5 + 30 * u(rng));
  a.isovalue = T(0.3 + 0.3 * u(rng));
  a.step = T((0.3 + 0.7 * u(rng)) * g.min_h());
  return a;
}

template <class T>
io::Image render_on(Backend<T>& be, Backend<float>& poisoner, const RayArgs<T>& a, const Grid& g,
                    const std::vector<T>& host) {
  auto exec = make_raymarch_exec(be);
  Field<T> vol = be.make_field(g, "volume");
  be.upload(host.data(), vol);
  Field<float> img = be.make_image(a.width, a.height);
  // NaN in every channel first: a pixel the kernel skips stays NaN.
  const std::vector<float> nan(img.size(), std::numeric_limits<float>::quiet_NaN());
  poisoner.upload(nan.data(), img);
  poisoner.synchronize();
  exec->render(a, vol, img, {});
  io::Image out;
  out.width = a.width;
  out.height = a.height;
  out.rgba.resize(img.size());
  be.download_image(img, out.rgba.data());
  return out;
}

template <class T>
void compare(const Scene& s, int width, int height, RayMode mode, bool sphere_trace,
             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<T> host = random_volume<T>(s.grid, s.noise, rng);
  RayArgs<T> a = random_args<T>(s.grid, width, height, mode, rng);
  a.sphere_trace = sphere_trace;
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  auto poisoner = make_cuda_backend<float>(0);
  auto cpu_poisoner = make_cpu_backend<float>();
  const io::Image c = render_on(*cpu, *cpu_poisoner, a, s.grid, host);
  const io::Image gg = render_on(*gpu, *poisoner, a, s.grid, host);
  std::size_t unwritten = 0, differ = 0, hit = 0;
  const std::size_t pixels = std::size_t(width) * height;
  for (std::size_t p = 0; p < pixels; ++p) {
    bool nan = false, off = false;
    for (int k = 0; k < 4; ++k) {
      nan = nan || std::isnan(gg.rgba[4 * p + k]);
      off = off || std::fabs(gg.rgba[4 * p + k] - c.rgba[4 * p + k]) > 1e-4f;
    }
    unwritten += nan;
    differ += off;
    hit += c.rgba[4 * p + 3] > 0;
  }
  const io::ImageDiff d = io::compare_images(gg, c);
  INFO("mode " << int(mode) << (sphere_trace ? " sphere-traced" : "")
               << (s.noise ? " noise" : " blobs") << " " << s.grid.n[0] << "x" << s.grid.n[1] << "x"
               << s.grid.n[2] << " image " << width << "x" << height << " float" << 8 * sizeof(T)
               << " seed " << seed << ": psnr " << d.psnr_db << " dB, off " << d.off_fraction
               << ", pixels differing " << differ << " of " << pixels << ", hit " << hit);
  CHECK(unwritten == 0);
  CHECK(d.pass);
  // The same formulas, rounded alike (raymarch.cu has no FMA contraction):
  // only exp() differs between the two math libraries, by an ulp or two.
  CHECK(double(differ) <= 0.002 * double(pixels) + 1);
}

Grid grid_of(std::int64_t nx, std::int64_t ny, std::int64_t nz, double h) {
  Grid g;
  g.ndim = 3;
  g.n = {nx, ny, nz};
  g.h = {h, h * 1.1, h * 0.9};
  g.origin = {-0.3, 0.2, 0.1};
  return g;
}

}  // namespace

TEST_CASE("GPU raymarch equals the CPU reference: random volumes, cameras and modes",
          "[gpu][raymarch_gpu]") {
  std::uint64_t seed = 7000;
  const Scene blobs{grid_of(37, 29, 41, 1.0 / 36), false};
  const Scene noise{grid_of(23, 31, 19, 1.0 / 30), true};
  for (RayMode mode : {RayMode::EmissionAbsorption, RayMode::Mip, RayMode::Isosurface}) {
    for (const Scene* s : {&blobs, &noise}) {
      compare<float>(*s, 97, 61, mode, false, ++seed);
      compare<double>(*s, 97, 61, mode, false, ++seed);
      compare<float>(*s, 130, 9, mode, false, ++seed);
      compare<double>(*s, 1, 1, mode, false, ++seed);
    }
  }
  // Sphere tracing (the isosurface of a distance-like field).
  compare<float>(blobs, 83, 77, RayMode::Isosurface, true, ++seed);
  compare<double>(blobs, 83, 77, RayMode::Isosurface, true, ++seed);
}

TEST_CASE("GPU raymarch: a larger image over several blocks, both precisions",
          "[gpu][raymarch_gpu]") {
  const Scene blobs{grid_of(64, 48, 56, 1.0 / 60), false};
  compare<float>(blobs, 257, 129, RayMode::EmissionAbsorption, false, 9001);
  compare<double>(blobs, 257, 129, RayMode::Isosurface, false, 9002);
  compare<float>(blobs, 257, 129, RayMode::Mip, false, 9003);
}
