// The CUDA raymarch executor against the CPU reference: random volumes
// (smooth and white noise), random cameras, every mode and colormap, sphere
// tracing, both precisions, image sizes that are not multiples of the 8×8
// block, and images poisoned with NaN first so that every pixel must be written.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <utility>
#include <limits>
#include <random>
#include <vector>

#include "core/rgb8.hpp"
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
                    const std::vector<T>& host, const RayExecOptions* opt = nullptr) {
  auto exec = make_raymarch_exec(be);
  if (opt) exec->set_options(*opt);
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
             std::uint64_t seed, double cut = -1) {
  std::mt19937_64 rng(seed);
  const std::vector<T> host = random_volume<T>(s.grid, s.noise, rng, cut);
  RayArgs<T> a = random_args<T>(s.grid, width, height, mode, rng);
  a.sphere_trace = sphere_trace;
  auto cpu = make_cpu_backend<T>();
  auto gpu = make_cuda_backend<T>(0);
  auto poisoner = make_cuda_backend<float>(0);
  auto cpu_poisoner = make_cpu_backend<float>();
  // The software sampler: the CPU's formulas (the texture's 8-bit weights
  // are compared with the CPU below, within validate's bound).
  RayExecOptions sw;
  sw.texture = RayTexture::Off;
  const io::Image c = render_on(*cpu, *cpu_poisoner, a, s.grid, host);
  const io::Image gg = render_on(*gpu, *poisoner, a, s.grid, host, &sw);
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

// The GPU's 8-bit download of an image (in-situ frames' PNGs) against the
// host's quantisation of the float image: the same bytes, edge values too.
template <class T>
void rgb8_like_host(int width, int height, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Scene blobs{grid_of(37, 29, 41, 1.0 / 36), false};
  const std::vector<T> host = random_volume<T>(blobs.grid, false, rng, -1);
  const RayArgs<T> a = random_args<T>(blobs.grid, width, height, RayMode::EmissionAbsorption, rng);
  auto gpu = make_cuda_backend<T>(0);
  auto poisoner = make_cuda_backend<float>(0);
  io::Image img = render_on(*gpu, *poisoner, a, blobs.grid, host);
  // a rendered image, and in its first pixels' colour channels NaN,
  // out-of-range values and the floats either side of each halfway point
  // between two levels
  std::vector<float> probe = {std::numeric_limits<float>::quiet_NaN(), -1.0f, 2.0f, 1e-30f,
                              std::nextafter(1.0f, 0.0f), 1.0f, 0.0f, -0.0f};
  for (int l = 0; l < 255; ++l) {
    const float half = (float(l) + 0.5f) / 255.0f;
    probe.insert(probe.end(), {std::nextafter(half, 0.0f), std::nextafter(half, 1.0f), half});
  }
  const std::size_t pixels = std::size_t(width) * height;
  for (std::size_t q = 0; q < probe.size() && q < 3 * pixels; ++q)
    img.rgba[4 * (q / 3) + q % 3] = probe[q];
  Field<float> f = poisoner->make_image(width, height);
  poisoner->upload(img.rgba.data(), f);
  poisoner->synchronize();
  std::vector<unsigned char> got(std::size_t(width) * height * 3, 0xab);
  gpu->download_image_rgb8(f, got.data());
  std::size_t off = 0;
  for (std::size_t p = 0; p < std::size_t(width) * height; ++p)
    for (int c = 0; c < 3; ++c) off += got[3 * p + c] != rgb8_level(img.rgba[4 * p + c]);
  INFO(width << "x" << height << " float" << 8 * sizeof(T));
  CHECK(off == 0);
}

TEST_CASE("GPU raymarch: the 8-bit download is the host's quantisation, byte for byte",
          "[gpu][raymarch_gpu]") {
  rgb8_like_host<float>(97, 61, 31);
  rgb8_like_host<double>(1, 1, 32);
  rgb8_like_host<float>(1283, 721, 33);
  rgb8_like_host<double>(130, 9, 34);
}

// One executor drawing frame after frame with skipping left to it
// (RaySkip::Auto: the first frame skips, the next ones choose by the last
// count of empty bricks, a plain march counting again every 8th frame): every
// frame the plain march's image bit for bit, on a volume with no empty brick
// (white noise) and one with many (blobs cut off low).
template <class T>
void auto_frames(bool noise, RayMode mode, RayTexture tex, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Grid g = grid_of(45, 37, 41, 1.0 / 40);
  const std::vector<T> host = random_volume<T>(g, noise, rng, noise ? -1 : 0.6);
  RayArgs<T> a = random_args<T>(g, 97, 61, mode, rng);
  a.lo = 0;
  auto gpu = make_cuda_backend<T>(0);
  Field<T> vol = gpu->make_field(g, "volume");
  gpu->upload(host.data(), vol);
  RayExecOptions au, off;
  au.texture = off.texture = tex;
  off.skip = RaySkip::Off;
  auto exec = make_raymarch_exec(*gpu), plain_exec = make_raymarch_exec(*gpu);
  exec->set_options(au);
  plain_exec->set_options(off);
  Field<float> img = gpu->make_image(a.width, a.height), ref = gpu->make_image(a.width, a.height);
  std::vector<float> got(img.size()), want(ref.size());
  plain_exec->render(a, vol, ref, {});
  gpu->download_image(ref, want.data());
  std::size_t differ = 0;
  for (int frame = 0; frame < 19; ++frame) {
    exec->render(a, vol, img, {});
    if (frame % 3 == 0) gpu->synchronize();  // counts arriving now and then
    gpu->download_image(img, got.data());
    differ += std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0;
  }
  INFO((noise ? "noise" : "blobs") << " mode " << int(mode) << " float" << 8 * sizeof(T)
                                   << (tex == RayTexture::On ? " texture" : ""));
  CHECK(differ == 0);
}

TEST_CASE("GPU raymarch: skipping left to the executor draws the plain image in every frame",
          "[gpu][raymarch_gpu]") {
  std::uint64_t seed = 4400;
  for (RayMode mode : {RayMode::EmissionAbsorption, RayMode::Mip, RayMode::Isosurface})
    for (bool noise : {true, false}) {
      auto_frames<float>(noise, mode, RayTexture::Off, ++seed);
      auto_frames<float>(noise, mode, RayTexture::On, ++seed);
      auto_frames<double>(noise, mode, RayTexture::Off, ++seed);
    }
}

TEST_CASE("GPU raymarch: a larger image over several blocks, both precisions",
          "[gpu][raymarch_gpu]") {
  const Scene blobs{grid_of(64, 48, 56, 1.0 / 60), false};
  compare<float>(blobs, 257, 129, RayMode::EmissionAbsorption, false, 9001);
  compare<double>(blobs, 257, 129, RayMode::Isosurface, false, 9002);
  compare<float>(blobs, 257, 129, RayMode::Mip, false, 9003);
}

// ---- empty-space skipping and the texture sampler (issue 26) ----------------------

namespace {

std::size_t bits_differ(const io::Image& x, const io::Image& y) {
  std::size_t n = 0;
  for (std::size_t q = 0; q < x.rgba.size(); ++q)
    n += std::memcmp(&x.rgba[q], &y.rgba[q], sizeof(float)) != 0;
  return n;
}

std::size_t unwritten(const io::Image& x) {
  std::size_t n = 0;
  for (float v : x.rgba) n += std::isnan(v);
  return n;
}

template <class T>
void skip_same_with(const Grid& g, int width, int height, RayMode mode, int B, double cut,
                    std::uint64_t seed, RayTexture tex) {
  std::mt19937_64 rng(seed);
  const std::vector<T> host = random_volume<T>(g, false, rng, cut);
  RayArgs<T> a = random_args<T>(g, width, height, mode, rng);
  if (seed % 2) a.lo = 0;
  auto gpu = make_cuda_backend<T>(0);
  auto poisoner = make_cuda_backend<float>(0);
  auto cpu = make_cpu_backend<T>();
  auto cpu_poisoner = make_cpu_backend<float>();
  RayExecOptions on, off;
  on.brick = B;
  on.skip = RaySkip::On;  // skipping in every frame, however few bricks are empty
  off.skip = RaySkip::Off;
  on.texture = off.texture = tex;
  const io::Image skipped = render_on(*gpu, *poisoner, a, g, host, &on);
  const io::Image plain = render_on(*gpu, *poisoner, a, g, host, &off);
  RayExecOptions au = on;  // skipping only when enough bricks are empty: either way the same image
  au.skip = RaySkip::Auto;
  const io::Image automatic = render_on(*gpu, *poisoner, a, g, host, &au);
  const io::Image c = render_on(*cpu, *cpu_poisoner, a, g, host);
  const io::ImageDiff d = io::compare_images(skipped, c);
  INFO("mode " << int(mode) << " brick " << B << (tex == RayTexture::On ? " texture" : "")
               << " cut " << cut << " " << g.n[0] << "x" << g.n[1] << "x" << g.n[2] << " image "
               << width << "x" << height << " float"
               << 8 * sizeof(T) << " seed " << seed << ": psnr " << d.psnr_db << " dB against the CPU");
  CHECK(unwritten(skipped) == 0);
  CHECK(unwritten(plain) == 0);
  CHECK(bits_differ(skipped, plain) == 0);
  CHECK(bits_differ(automatic, plain) == 0);
  CHECK(d.pass);
}

// Skipping on (bricks of B cells) and off on the GPU: the same image bit for
// bit; and the skipping image against the CPU's, as validate compares. With
// each sampler: software, and the texture for float32 volumes.
template <class T>
void skip_same(const Grid& g, int width, int height, RayMode mode, int B, double cut,
               std::uint64_t seed) {
  for (RayTexture tex : {RayTexture::Off, RayTexture::On}) {
    if (tex == RayTexture::On && sizeof(T) != 4) continue;
    skip_same_with<T>(g, width, height, mode, B, cut, seed, tex);
  }
}

}  // namespace

TEST_CASE("GPU raymarch: empty-space skipping leaves the image bit for bit the plain march's",
          "[gpu][raymarch_gpu]") {
  std::uint64_t seed = 26100;
  const Grid odd = grid_of(61, 37, 53, 1.0 / 60), small = grid_of(23, 31, 19, 1.0 / 30);
  for (RayMode mode : {RayMode::EmissionAbsorption, RayMode::Mip, RayMode::Isosurface}) {
    for (int B : {4, 8, 16, 32}) {
      skip_same<float>(odd, 131, 77, mode, B, 0.6, ++seed);
      skip_same<double>(odd, 131, 77, mode, B, 0.6, ++seed);
      skip_same<float>(small, 97, 61, mode, B, 0.9, ++seed);
    }
    skip_same<float>(odd, 1, 1, mode, 8, 0.6, ++seed);
    skip_same<double>(small, 130, 9, mode, 8, -1, ++seed);  // no empty brick
  }
}

TEST_CASE("GPU raymarch: other tiles of pixels draw the same image", "[gpu][raymarch_gpu]") {
  std::mt19937_64 rng(26200);
  const Grid g = grid_of(61, 37, 53, 1.0 / 60);
  const std::vector<float> host = random_volume<float>(g, false, rng, 0.5);
  const RayArgs<float> a = random_args<float>(g, 203, 117, RayMode::EmissionAbsorption, rng);
  auto gpu = make_cuda_backend<float>(0);
  auto poisoner = make_cuda_backend<float>(0);
  const io::Image ref = render_on(*gpu, *poisoner, a, g, host);
  for (auto [w, h] : {std::pair{16, 8}, {32, 4}, {8, 16}, {16, 16}, {32, 8}}) {
    RayExecOptions o;
    o.tile_x = w;
    o.tile_y = h;
    const io::Image x = render_on(*gpu, *poisoner, a, g, host, &o);
    INFO("tile " << w << "x" << h);
    CHECK(unwritten(x) == 0);
    CHECK(bits_differ(x, ref) == 0);
  }
}

// The hardware's 8-bit filter weights against the CPU's trilinear samples:
// the PSNRs are printed (WARN; 83-99 dB measured), every pixel is drawn, the
// image passes validate's bound (45 dB and no pixel off by more than 2/255),
// skipping changes it by round-off at most, and it is what the automatic
// options draw for a float32 volume.
TEST_CASE("GPU raymarch: the texture sampler, against the CPU (PSNR printed)",
          "[gpu][raymarch_gpu][raymarch_texture]") {
  std::uint64_t seed = 26300;
  const Grid g = grid_of(61, 37, 53, 1.0 / 60);
  for (RayMode mode : {RayMode::EmissionAbsorption, RayMode::Mip, RayMode::Isosurface}) {
    std::mt19937_64 rng(++seed);
    const std::vector<float> host = random_volume<float>(g, false, rng, 0.5);
    const RayArgs<float> a = random_args<float>(g, 257, 129, mode, rng);
    auto gpu = make_cuda_backend<float>(0);
    auto poisoner = make_cuda_backend<float>(0);
    auto cpu = make_cpu_backend<float>();
    auto cpu_poisoner = make_cpu_backend<float>();
    RayExecOptions tex, tex_plain;
    tex.texture = tex_plain.texture = RayTexture::On;
    tex.skip = RaySkip::On;
    tex_plain.skip = RaySkip::Off;
    const io::Image t = render_on(*gpu, *poisoner, a, g, host, &tex);
    const io::Image tp = render_on(*gpu, *poisoner, a, g, host, &tex_plain);
    // The default for a float32 volume of this size is the texture
    // (raymarch_auto_texture), and the bricks' edge the automatic one.
    RayExecOptions automatic;
    const io::Image au = render_on(*gpu, *poisoner, a, g, host, &automatic);
    const io::Image c = render_on(*cpu, *cpu_poisoner, a, g, host);
    const io::ImageDiff d = io::compare_images(t, c), ds = io::compare_images(t, tp);
    WARN("texture sampler, mode " << int(mode) << ": " << d.psnr_db << " dB against the CPU, "
                                  << 100 * d.off_fraction << " % of pixels off by > 2/255 ("
                                  << (d.pass ? "passes" : "fails") << " validate); skipping "
                                  << ds.psnr_db << " dB against no skipping");
    CHECK(unwritten(t) == 0);
    CHECK(d.pass);  // validate's bound: the texture is the default for float32
    CHECK(d.psnr_db > 45);
    CHECK(ds.psnr_db > 60);
    CHECK(bits_differ(au, t) == 0);
  }
}
