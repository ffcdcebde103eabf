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
#include "tests/unit/raymarch_test_util.hpp"

using namespace gf;
using gf::test::grid_of;
using gf::test::random_args;
using gf::test::random_volume;

namespace {

struct Scene {
  Grid grid;
  bool noise = false;
};

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
