// Raymarch images (SPEC §4): <name>.png (io/png_encode.hpp), image.h5
// (float RGBA [height][width][4]), and the image comparison of validate.
// Images are RGBA floats, row 0 the top, RGB already composited over the
// background and A the volume's coverage.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gf::io {

struct Image {
  int width = 0, height = 0;
  std::vector<float> rgba;  // width·height·4
};

// An image as its PNG stores it: 8-bit RGB, rgb8_level (core/rgb8.hpp) of
// each channel of an Image. In-situ frames come back from the GPU this way
// (Backend::download_image_rgb8): a fifth of the RGBA floats' bytes.
struct Rgb8Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;  // width·height·3
};

struct PngStats;  // io/png_encode.hpp

// 8-bit RGB PNG (each channel clamped to [0, 1], rounded to the nearest of
// 256 levels 0-255); written whole or not at all. Throws IoError.
// level: zlib's compression level, 0 to 9 (5 by default; in-situ frames
// take kFramePngLevel: a frame's encoding is most of what it costs a run).
// threads: the most threads that encode it (io/png_encode.hpp: horizontal
// strips deflated on their own; the bytes are the same for any count).
// stats, when given: what the encoding took.
inline constexpr int kFramePngLevel = 1;
void write_png(const std::filesystem::path& path, const Image& img, int level = 5,
               int threads = 1, PngStats* stats = nullptr);
// The same PNG from the image's 8-bit RGB (the same file as write_png of the
// float image it was quantised from).
void write_png(const std::filesystem::path& path, const Rgb8Image& img, int level = 5,
               int threads = 1, PngStats* stats = nullptr);
// Reads a PNG back as RGBA floats (A = 1 when the file has no alpha; VTK's
// reader, libpng underneath). Throws IoError.
Image read_png(const std::filesystem::path& path);
// /image float32 [height][width][4], attributes width and height. Throws IoError.
void write_image_h5(const std::filesystem::path& path, const Image& img);

// validate's image comparison (SPEC §2) over the RGB channels, clamped to [0, 1].
struct ImageDiff {
  double mse = 0;
  double psnr_db = 0;       // +inf when identical
  double off_fraction = 0;  // pixels with a channel off by more than 2/255
  double max_abs = 0;
  bool pass = false;  // psnr ≥ kMinPsnrDb and off_fraction ≤ kMaxOffFraction
};
inline constexpr double kMinPsnrDb = 45.0;
inline constexpr double kOffBy = 2.0 / 255.0;
inline constexpr double kMaxOffFraction = 0.01;
ImageDiff compare_images(const Image& test, const Image& reference);

}  // namespace gf::io
