// Empty-space skipping (kernels/raymarch/raymarch_skip.hpp) run on the CPU:
// the bricks' ranges bound every sample the skipping march may leave out, a
// brick found empty adds nothing, and the skipping march draws the plain
// march's image bit for bit while taking fewer samples. The CPU executor
// itself keeps the plain march; the GPU runs the skipping one
// (tests/gpu/test_raymarch_gpu.cpp compares the two there).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "kernels/raymarch/raymarch_exec.hpp"
#include "kernels/raymarch/raymarch_skip.hpp"
#include "tests/unit/raymarch_test_util.hpp"

namespace gf {
namespace {

// The reference sampler, counting its samples.
template <class T>
struct Counting {
  Trilinear<T> s;
  std::int64_t* n;
  T operator()(const T u[3]) const {
    ++*n;
    return s(u);
  }
};

struct Frame {
  std::vector<float> rgba;
  std::int64_t samples = 0;
};

template <class T>
Frame draw(const RayArgs<T>& a, const FieldView<const T>& v, const Bricks<T>* br) {
  Frame f;
  f.rgba.resize(std::size_t(a.width) * a.height * 4);
  const Counting<T> s{Trilinear<T>{v}, &f.samples};
  for (int py = 0; py < a.height; ++py)
    for (int px = 0; px < a.width; ++px) {
      float* out = f.rgba.data() + 4 * (std::size_t(py) * a.width + px);
      if (br)
        render_pixel_skip<T, std::int64_t>(a, s, v, *br, px, py, out);
      else
        render_pixel(a, s, v, px, py, out);
    }
  return f;
}

template <class T>
FieldView<const T> view_of(const Grid& g, const std::vector<T>& host) {
  return FieldView<const T>(host.data(), Layout::dense(g.n.data()));
}

TEST_CASE("a brick's range bounds every sample the skipping march may place in it",
          "[raymarch][raymarch_skip]") {
  std::mt19937_64 rng(2601);
  const Grid g = test::grid_of(29, 23, 31, 1.0 / 28);
  for (bool noise : {false, true}) {
    const std::vector<float> host = test::random_volume<float>(g, noise, rng, noise ? -1 : 0.5);
    const FieldView<const float> v = view_of(g, host);
    for (int B : {4, 8}) {
      std::vector<float> mn, mx;
      const Bricks<float> br = host_bricks(v, B, mn, mx);
      std::uniform_real_distribution<double> u01(0, 1);
      std::int64_t empty = 0;
      for (std::int64_t q = 0; q < br.l.size(); ++q) {
        std::int64_t b[3];
        br.l.position(q, b[0], b[1], b[2]);
        const float lower = brick_lower(mn[q], mx[q]), upper = brick_upper(mn[q], mx[q]);
        RayArgs<float> a;
        a.lo = 0;
        a.hi = 1;
        a.density = 30;
        const bool transparent = upper <= a.lo;
        empty += transparent;
        for (int r = 0; r < 40; ++r) {
          // anywhere up to (not quite) a cell beyond the brick's box
          float u[3];
          for (int c = 0; c < 3; ++c)
            u[c] = float(double(b[c] * B) - 0.999 + (B + 1.998) * u01(rng));
          const float s = Trilinear<float>{v}(u);
          REQUIRE(s >= lower);
          REQUIRE(s <= upper);
          if (transparent) {  // an empty brick's sample adds nothing
            float rgb[3] = {0.25f, 0.5f, 0.75f}, A = 0.5f;
            ea_add(a, Transfer<float>(a), s, 0.0f, 0.01f, rgb, A);
            REQUIRE(rgb[0] == 0.25f);
            REQUIRE(rgb[1] == 0.5f);
            REQUIRE(rgb[2] == 0.75f);
            REQUIRE(A == 0.5f);
          }
        }
      }
      if (!noise) CHECK(empty > 0);  // the blobs leave empty bricks to find
    }
  }
}

template <class T>
void same_image(RayMode mode, int B, std::uint64_t seed, double cut, std::int64_t& plain,
                std::int64_t& skipped) {
  std::mt19937_64 rng(seed);
  const Grid g = test::grid_of(33, 27, 41, 1.0 / 32);
  const std::vector<T> host = test::random_volume<T>(g, cut < 0, rng, cut);
  RayArgs<T> a = test::random_args<T>(g, 37, 23, mode, rng);
  if (seed % 2) a.lo = 0;  // the auto range of a volume floored at 0
  const FieldView<const T> v = view_of(g, host);
  std::vector<T> mn, mx;
  Bricks<T> br = host_bricks(v, B, mn, mx);
  // chunks of skip_chunk()'s samples, of one, and longer than a brick
  br.chunk = int(seed % 3 == 0 ? 0 : seed % 3 == 1 ? 1 : 64);
  REQUIRE(skip_fits(a, v));
  const Frame p = draw<T>(a, v, nullptr), s = draw<T>(a, v, &br);
  INFO("mode " << int(mode) << " brick " << B << " chunk " << br.chunk << " seed " << seed
               << " cut " << cut << " float"
               << 8 * sizeof(T) << ": samples " << p.samples << " plain, " << s.samples
               << " skipping");
  std::size_t differ = 0;
  for (std::size_t q = 0; q < p.rgba.size(); ++q)
    differ += std::memcmp(&p.rgba[q], &s.rgba[q], sizeof(float)) != 0;
  CHECK(differ == 0);
  CHECK(s.samples <= p.samples);
  if (br.chunk != 64) {  // chunks longer than these small bricks leave little out
    plain += p.samples;
    skipped += s.samples;
  }
}

TEST_CASE("the skipping march draws the plain march's image bit for bit, with fewer samples",
          "[raymarch][raymarch_skip]") {
  std::uint64_t seed = 26000;
  for (RayMode mode : {RayMode::EmissionAbsorption, RayMode::Mip, RayMode::Isosurface}) {
    std::int64_t plain = 0, skipping = 0;
    for (int B : {4, 8}) {
      same_image<float>(mode, B, ++seed, 0.6, plain, skipping);
      same_image<double>(mode, B, ++seed, 0.6, plain, skipping);
      same_image<float>(mode, B, ++seed, 0.9, plain, skipping);
    }
    // white noise: no brick is empty, every sample is taken
    same_image<float>(mode, 4, ++seed, -1, plain, skipping);
    INFO("mode " << int(mode) << ": " << skipping << " of " << plain << " samples");
    // (small volumes of big blobs: a few bricks a ray, and chunks of a brick's
    // edge skip whole chunks only; 512³ clouds skip far more)
    CHECK(double(skipping) < 0.85 * double(plain));
  }
}

TEST_CASE("MIP skipping over a range empty in float32 (lo == hi) draws the plain image",
          "[raymarch][raymarch_skip]") {
  // A constant volume whose auto range [v, v + 1] rounds to one float: a
  // sample at the low end is at the top too (transfer_t is 1), so no brick
  // at or below the low end may be left out.
  std::mt19937_64 rng(77);
  const Grid g = test::grid_of(33, 27, 41, 1.0 / 32);
  const std::vector<float> host(std::size_t(g.size()), 3.0e7f);
  RayArgs<float> a = test::random_args<float>(g, 29, 17, RayMode::Mip, rng);
  a.lo = 3.0e7f;
  a.hi = float(3.0e7 + 1.0);
  REQUIRE(a.lo == a.hi);
  const FieldView<const float> v = view_of(g, host);
  std::vector<float> mn, mx;
  const Bricks<float> br = host_bricks(v, 8, mn, mx);
  const Frame p = draw<float>(a, v, nullptr), s = draw<float>(a, v, &br);
  std::size_t differ = 0;
  for (std::size_t q = 0; q < p.rgba.size(); ++q)
    differ += std::memcmp(&p.rgba[q], &s.rgba[q], sizeof(float)) != 0;
  CHECK(differ == 0);
}

TEST_CASE("skipping is declined where rounding could carry a sample a cell off",
          "[raymarch][raymarch_skip]") {
  const Grid g = test::grid_of(33, 27, 41, 1.0 / 32);
  std::mt19937_64 rng(5);
  RayArgs<float> a = test::random_args<float>(g, 8, 8, RayMode::EmissionAbsorption, rng);
  const Layout l = Layout::dense(g.n.data());
  CHECK(skip_fits(a, l));
  a.eye[0] = 1e5f;  // 3e6 cells away: float's ulp there is a cell's fraction no more
  CHECK_FALSE(skip_fits(a, l));
  RayArgs<double> d = test::random_args<double>(g, 8, 8, RayMode::EmissionAbsorption, rng);
  d.eye[0] = 1e5;
  CHECK(skip_fits(d, l));
}

TEST_CASE("the GPU march's automatic bricks and sampler follow the volume",
          "[raymarch][raymarch_skip]") {
  const std::int64_t small[3] = {255, 257, 253}, mid[3] = {384, 384, 384};
  const std::int64_t wide[3] = {448, 64, 64}, big[3] = {1024, 1024, 1024};
  CHECK(raymarch_auto_brick(small) == 16);
  CHECK(raymarch_auto_brick(mid) == 16);
  CHECK(raymarch_auto_brick(wide) == 32);
  CHECK(raymarch_auto_brick(big) == 32);
  const std::int64_t n512 = std::int64_t(512) * 512 * 512, n384 = std::int64_t(384) * 384 * 384;
  CHECK(raymarch_auto_texture(n512, 4, false));
  CHECK_FALSE(raymarch_auto_texture(n512, 4, true));  // the isosurface: software from 2^26
  CHECK(raymarch_auto_texture(n384, 4, true));
  CHECK(raymarch_auto_texture(std::int64_t(1) << 28, 4, false));
  CHECK_FALSE(raymarch_auto_texture((std::int64_t(1) << 28) + 1, 4, false));
  CHECK_FALSE(raymarch_auto_texture(std::int64_t(1024) * 1024 * 1024, 4, false));
  CHECK_FALSE(raymarch_auto_texture(64, 8, false));  // float64 volumes: the software sampler
}

TEST_CASE("a skipping march's chunk spans at most a brick; the bricks counted as transparent",
          "[raymarch][raymarch_skip]") {
  RayArgs<float> a;
  a.h[0] = 0.01f, a.h[1] = 0.02f, a.h[2] = 0.005f;
  for (double cells : {0.25, 0.5, 1.0, 3.0, 40.0})
    for (int B : {4, 8, 16, 32, 64}) {
      a.step = float(cells * 0.005);  // in cells of the finest axis
      const int m = skip_chunk(a, B);
      INFO(cells << " cells a step, bricks of " << B);
      CHECK(m >= 1);
      CHECK(m <= 64);
      CHECK((m & (m - 1)) == 0);
      CHECK((m == 1 || double(m) * cells <= B + 1e-6));
      CHECK((m == 64 || 2.0 * m * cells > B));  // the largest that fits
    }
  a.lo = 0.2f;
  a.mode = RayMode::EmissionAbsorption;
  CHECK(brick_skippable(a, 0.0f, 0.19f));
  CHECK_FALSE(brick_skippable(a, 0.0f, 0.2f));  // the lerps' slack above the greatest value
  CHECK(brick_skippable(a, 0.2f, 0.2f));        // a constant brick: no slack
  CHECK(brick_skippable(a, -1.0f, 0.1f));
  CHECK_FALSE(brick_skippable(a, -1.0f, 0.3f));
}

TEST_CASE("the GPU march's options from the environment, and malformed ones refused",
          "[raymarch][raymarch_skip]") {
  const char* names[] = {"GRIDFORGE_RM_SKIP", "GRIDFORGE_RM_BRICK", "GRIDFORGE_RM_TEXTURE",
                         "GRIDFORGE_RM_TILE", "GRIDFORGE_RM_CHUNK"};
  for (const char* n : names) unsetenv(n);
  RayExecOptions o = raymarch_options_from_env();
  CHECK(o.skip == RaySkip::Auto);
  CHECK(o.brick == 0);  // raymarch_auto_brick
  CHECK(o.chunk == 0);  // skip_chunk
  CHECK(o.texture == RayTexture::Auto);
  CHECK(o.tile_x * o.tile_y == 64);
  setenv("GRIDFORGE_RM_SKIP", "0", 1);
  setenv("GRIDFORGE_RM_BRICK", "32", 1);
  setenv("GRIDFORGE_RM_TEXTURE", "1", 1);
  setenv("GRIDFORGE_RM_TILE", "16x8", 1);
  o = raymarch_options_from_env();
  CHECK(o.skip == RaySkip::Off);
  CHECK(o.brick == 32);
  CHECK(o.texture == RayTexture::On);
  setenv("GRIDFORGE_RM_TEXTURE", "0", 1);
  CHECK(raymarch_options_from_env().texture == RayTexture::Off);
  setenv("GRIDFORGE_RM_SKIP", "1", 1);
  CHECK(raymarch_options_from_env().skip == RaySkip::On);
  setenv("GRIDFORGE_RM_CHUNK", "32", 1);
  CHECK(raymarch_options_from_env().chunk == 32);
  CHECK((o.tile_x == 16 && o.tile_y == 8));
  for (const char* n : names) unsetenv(n);
  const std::pair<const char*, const char*> bad[] = {
      {"GRIDFORGE_RM_SKIP", "2"},     {"GRIDFORGE_RM_BRICK", "12"}, {"GRIDFORGE_RM_BRICK", "128"},
      {"GRIDFORGE_RM_BRICK", "0"},    {"GRIDFORGE_RM_CHUNK", "24"}, {"GRIDFORGE_RM_CHUNK", "512"},
      {"GRIDFORGE_RM_TEXTURE", "yes"}, {"GRIDFORGE_RM_TILE", "64x64"}, {"GRIDFORGE_RM_TILE", "8"},
      {"GRIDFORGE_RM_TILE", "8x8x1"}};
  for (const auto& [name, value] : bad) {
    setenv(name, value, 1);
    INFO(name << "=" << value);
    CHECK_THROWS_AS(raymarch_options_from_env(), UsageError);
    CHECK_THROWS_WITH(raymarch_options_from_env(),
                      Catch::Contains(std::string(name) + "='" + value + "'"));
    unsetenv(name);
  }
}

}  // namespace
}  // namespace gf
