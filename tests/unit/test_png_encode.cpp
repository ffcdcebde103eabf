// The PNG encoder over threads (io/png_encode.hpp): one valid PNG (every
// chunk's CRC, one zlib stream whose adler32 holds), the pixels VTK's PNG
// writer wrote before it (read back through VTK's reader, libpng), and the
// same bytes for any thread count.
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGWriter.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "io/image.hpp"
#include "io/png_encode.hpp"
#include "kernels/backend.hpp"
#include "kernels/device.hpp"

namespace fs = std::filesystem;
using gf::io::Image;

namespace {

// A frame-like image: smooth gradients, a noisy band, and values outside
// [0, 1], NaN and the halfway points between two levels.
Image test_image(int w, int h, unsigned seed) {
  Image img;
  img.width = w;
  img.height = h;
  img.rgba.resize(std::size_t(w) * h * 4);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.1f, 1.1f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float* p = &img.rgba[4 * (std::size_t(y) * w + x)];
      const bool noisy = (y / 7) % 3 == 1;
      p[0] = noisy ? u(rng) : float(x) / float(w);
      p[1] = noisy ? u(rng) : 0.5f + 0.5f * std::sin(0.05f * float(x + 2 * y));
      p[2] = float((x * 31 + y * 17) % 256) / 255.0f + 0.5f / 255.0f;  // halfway points
      p[3] = 1.0f;
    }
  img.rgba[0] = NAN;
  img.rgba[1] = 2.0f;
  img.rgba[2] = -1.0f;
  return img;
}

// What VTK's PNG writer wrote (write_png until the encoder over threads).
void write_png_vtk(const fs::path& path, const Image& img, int level) {
  vtkNew<vtkImageData> data;
  data->SetExtent(0, img.width - 1, 0, img.height - 1, 0, 0);
  data->AllocateScalars(VTK_UNSIGNED_CHAR, 3);
  auto* px = static_cast<unsigned char*>(data->GetScalarPointer());
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const float* s = &img.rgba[4 * (std::size_t(img.height - 1 - y) * img.width + x)];
      unsigned char* d = px + 3 * (std::size_t(y) * img.width + x);
      for (int c = 0; c < 3; ++c) {
        const float v = s[c] > 0.0f ? (s[c] < 1.0f ? s[c] : 1.0f) : 0.0f;
        d[c] = static_cast<unsigned char>(double(v * 255.0f) + 0.5);
      }
    }
  vtkNew<vtkPNGWriter> writer;
  writer->SetCompressionLevel(level);
  writer->SetFileName(path.c_str());
  writer->SetInputData(data);
  writer->Write();
}

std::uint32_t get32(const std::vector<unsigned char>& b, std::size_t at) {
  return std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 |
         std::uint32_t(b[at + 2]) << 8 | std::uint32_t(b[at + 3]);
}

// Walks the chunks (every CRC checked) and inflates the IDAT stream (its
// adler32 checked by zlib); returns the filtered rows' bytes.
std::vector<unsigned char> inflate_png(const std::vector<unsigned char>& png) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  REQUIRE(png.size() > 8);
  REQUIRE(std::equal(sig, sig + 8, png.begin()));
  std::vector<unsigned char> z;
  std::size_t at = 8;
  std::string last;
  std::uint32_t w = 0, h = 0;
  while (at + 12 <= png.size()) {
    const std::uint32_t n = get32(png, at);
    REQUIRE(at + 12 + n <= png.size());
    const std::string type(png.begin() + std::ptrdiff_t(at + 4), png.begin() + std::ptrdiff_t(at + 8));
    CHECK(crc32(0, &png[at + 4], uInt(4 + n)) == get32(png, at + 8 + n));
    if (type == "IHDR") {
      w = get32(png, at + 8);
      h = get32(png, at + 12);
      CHECK(png[at + 16] == 8);  // bit depth
      CHECK(png[at + 17] == 2);  // RGB
    }
    if (type == "IDAT") z.insert(z.end(), png.begin() + std::ptrdiff_t(at + 8), png.begin() + std::ptrdiff_t(at + 8 + n));
    last = type;
    at += 12 + n;
  }
  CHECK(at == png.size());
  CHECK(last == "IEND");
  std::vector<unsigned char> raw(std::size_t(h) * (1 + 3 * std::size_t(w)) + 1);
  uLongf got = uLongf(raw.size());
  REQUIRE(uncompress(raw.data(), &got, z.data(), uLong(z.size())) == Z_OK);
  raw.resize(got);
  return raw;
}

std::vector<unsigned char> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("PNG over threads: one valid zlib stream, the same bytes at any thread count",
          "[png][image]") {
  // odd sizes: one strip, a few, dozens, and a tall narrow image of several
  const std::vector<std::pair<int, int>> sizes = {{1, 1}, {7, 3}, {487, 263}, {1283, 721}, {3, 20011}};
  for (const auto& [w, h] : sizes) {
    const Image img = test_image(w, h, unsigned(w * 31 + h));
    for (int level : {0, 1, 6, 9}) {
      gf::io::PngStats st1;
      const std::vector<unsigned char> one = gf::io::encode_png(img, level, 1, &st1);
      INFO(w << "x" << h << " level " << level << ", " << st1.strips << " strips");
      CHECK(st1.strips == (h + gf::io::png_strip_rows(w) - 1) / gf::io::png_strip_rows(w));
      CHECK(st1.threads == 1);
      CHECK(st1.bytes == std::int64_t(one.size()));
      const std::vector<unsigned char> raw = inflate_png(one);
      CHECK(raw.size() == std::size_t(h) * (1 + 3 * std::size_t(w)));
      // each row's filter: Up on every row up to kPngUpFilterLevel, else the adaptive choice
      std::size_t up_rows = 0;
      for (int y = 0; y < h && raw.size() == std::size_t(h) * (1 + 3 * std::size_t(w)); ++y)
        up_rows += raw[std::size_t(y) * (1 + 3 * std::size_t(w))] == 2;
      if (level <= gf::io::kPngUpFilterLevel)
        CHECK(up_rows == std::size_t(h));
      else if (h > 100)
        CHECK(up_rows < std::size_t(h));  // the noisy bands choose other filters
      for (int threads : {2, 3, 8}) {
        gf::io::PngStats st;
        CHECK(gf::io::encode_png(img, level, threads, &st) == one);
        CHECK(st.threads == std::min(threads, st1.strips));
      }
    }
  }
}

TEST_CASE("PNG over threads: the pixels VTK's PNG writer wrote", "[png][image]") {
  const fs::path dir = fs::temp_directory_path() / "gf_test_png_encode";
  fs::create_directories(dir);
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{5, 3}, {333, 241}, {1283, 721}}) {
    INFO(w << "x" << h);
    const Image img = test_image(w, h, unsigned(w + h));
    write_png_vtk(dir / "vtk.png", img, 5);
    gf::io::PngStats st;
    gf::io::write_png(dir / "ours.png", img, gf::io::kFramePngLevel, 4, &st);
    CHECK(st.bytes == std::int64_t(fs::file_size(dir / "ours.png")));
    CHECK(file_bytes(dir / "ours.png") == gf::io::encode_png(img, gf::io::kFramePngLevel, 1));
    const Image ours = gf::io::read_png(dir / "ours.png"), theirs = gf::io::read_png(dir / "vtk.png");
    REQUIRE(ours.width == w);
    REQUIRE(ours.height == h);
    CHECK(ours.rgba == theirs.rgba);
    // and the rounding itself: each channel clamped and rounded to the nearest level
    std::size_t off = 0;
    for (std::size_t p = 0; p < std::size_t(w) * h; ++p)
      for (int c = 0; c < 3; ++c) {
        const float v = img.rgba[4 * p + c];
        const float cl = std::isnan(v) ? 0.0f : std::fmin(std::fmax(v, 0.0f), 1.0f);
        off += ours.rgba[4 * p + c] != float(std::lround(double(cl * 255.0f))) / 255.0f;
      }
    CHECK(off == 0);
  }
  CHECK(!fs::exists(dir / ".ours.png.tmp"));
  fs::remove_all(dir);
}

TEST_CASE("PNG from 8-bit RGB: the same bytes as from the floats quantised into it",
          "[png][image]") {
  const fs::path dir = fs::temp_directory_path() / "gf_test_png_rgb8";
  fs::create_directories(dir);
  auto cpu = gf::make_cpu_backend<float>();
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {487, 263}, {1283, 721}}) {
    INFO(w << "x" << h);
    Image img = test_image(w, h, unsigned(3 * w + h));
    // the floats next to each halfway point between two levels, each side
    for (std::size_t p = 0; p + 2 < img.rgba.size() && p < 4 * 512; p += 4) {
      const float half = (float(p / 4 % 255) + 0.5f) / 255.0f;
      img.rgba[p + 1] = std::nextafter(half, 0.0f);
      img.rgba[p + 2] = std::nextafter(half, 1.0f);
    }
    // the CPU backend's 8-bit download: rgb8_level of each channel
    gf::Field<float> f = cpu->make_image(w, h);
    cpu->upload(img.rgba.data(), f);
    gf::io::Rgb8Image rgb;
    rgb.width = w;
    rgb.height = h;
    rgb.rgb.resize(std::size_t(w) * h * 3);
    cpu->download_image_rgb8(f, rgb.rgb.data());
    std::size_t off = 0;
    for (std::size_t q = 0; q < std::size_t(w) * h; ++q)
      for (int c = 0; c < 3; ++c) {
        const float v = img.rgba[4 * q + c];
        const float cl = std::isnan(v) ? 0.0f : std::fmin(std::fmax(v, 0.0f), 1.0f);
        off += rgb.rgb[3 * q + c] != std::lround(double(cl * 255.0f));
      }
    CHECK(off == 0);
    for (int level : {0, 1, 6}) {
      const std::vector<unsigned char> want = gf::io::encode_png(img, level, 3);
      for (int threads : {1, 4}) CHECK(gf::io::encode_png(rgb, level, threads) == want);
    }
    gf::io::write_png(dir / "rgb8.png", rgb, gf::io::kFramePngLevel, 2);
    CHECK(file_bytes(dir / "rgb8.png") == gf::io::encode_png(img, gf::io::kFramePngLevel, 1));
  }
  gf::io::Rgb8Image tiny;
  tiny.width = 4;
  tiny.height = 4;
  tiny.rgb.resize(47);  // one byte short
  CHECK_THROWS_WITH(gf::io::encode_png(tiny, 1, 1), Catch::Contains("4x4"));
  fs::remove_all(dir);
}

TEST_CASE("PNG over threads: a folder that cannot be written is an IoError naming the file",
          "[png][image]") {
  const Image img = test_image(4, 4, 1);
  CHECK_THROWS_WITH(gf::io::write_png("/nonexistent_gf_dir/a.png", img),
                    Catch::Contains("/nonexistent_gf_dir/a.png"));
}

// Not run by default (a timing, not a check): ./gridforge_tests "[.png_speed]"
TEST_CASE("PNG over threads: speed of a 1280x720 frame against VTK's writer", "[.png_speed]") {
  const fs::path dir = fs::temp_directory_path() / "gf_test_png_speed";
  fs::create_directories(dir);
  const Image img = test_image(1280, 720, 7);
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  for (int rep = 0; rep < 3; ++rep) {
    auto t = Clock::now();
    write_png_vtk(dir / "vtk.png", img, gf::io::kFramePngLevel);
    const double vtk = ms(t);
    std::string row = "VTK's writer " + std::to_string(vtk) + " ms";
    for (int threads : {1, 2, 4, 16}) {
      gf::io::PngStats st;
      t = Clock::now();
      gf::io::write_png(dir / "ours.png", img, gf::io::kFramePngLevel, threads, &st);
      row += "; " + std::to_string(threads) + " threads " + std::to_string(ms(t)) +
             " ms (encode " + std::to_string(1e3 * st.wall_s) + " ms wall, " +
             std::to_string(1e3 * st.cpu_s) + " ms CPU, " + std::to_string(st.bytes) + " bytes)";
    }
    WARN(row);
  }
  fs::remove_all(dir);
}
