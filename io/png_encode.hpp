// 8-bit RGB PNG encoding spread over threads, the way pigz spreads gzip.
//
// The image is cut into horizontal strips of a fixed number of rows (set by
// the width alone). Each strip's rows are filtered (PNG's per-row adaptive
// choice, which looks at the row above only; up to kPngUpFilterLevel, the Up
// filter on every row) and deflated on their own as a
// raw deflate segment that ends in a sync flush (an empty stored block: the
// segment ends on a byte boundary, not as the stream's last block); the last
// strip is finished. The segments, one after the other behind a zlib header,
// are one deflate stream, and its adler32 is the strips' combined
// (adler32_combine); the IDAT chunk's CRC is the segments' combined too. So
// the file is one valid PNG whatever the thread count, and its bytes do not
// depend on the thread count (only on the image and the level).
//
// The threads are OpenMP's, as the .vti and fields.h5 compressors'
// (io/vtk_compress.hpp, io/h5_chunks.hpp): a team started by the calling
// thread (the output writer's), up to `threads` of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/image.hpp"

namespace gf::io {

// What one encoding did (PngStats of write_png, timing.json's render.encode).
struct PngStats {
  double wall_s = 0;  // quantising, filtering, deflating and the checksums: wall time
  double cpu_s = 0;   // and CPU time, summed over the threads
  int threads = 0;    // the threads that took part
  int strips = 0;     // the strips deflated on their own
  std::int64_t bytes = 0;  // the PNG's
};

// Filtered bytes a strip holds at least (whole rows of 1 + 3·width bytes):
// a strip's deflate loses its dictionary at the strip's start, so a strip
// holds many times deflate's 32 KiB window; an HD frame has a few dozen.
inline constexpr std::size_t kPngStripBytes = std::size_t(96) << 10;

// The zlib levels up to which every row takes PNG's Up filter instead of the
// adaptive choice (in-situ frames' kFramePngLevel): on a rendered frame the
// choice took about 40 % of the encoding for files 2 % smaller (a 1280×720
// heat3d_movie frame on one core of the build VM: 7.2 against 4.5 ms of CPU,
// 91.7 against 93.5 kB), and a frame's encoding is what stands between the
// time loop and its next frame.
inline constexpr int kPngUpFilterLevel = 1;

// The rows of each strip of an image `width` pixels wide.
int png_strip_rows(int width);

// The PNG file's bytes of img: 8-bit RGB, each channel clamped to [0, 1] and
// rounded to the nearest of the 256 levels 0-255 (as write_png has always written it),
// deflated at zlib `level` (0 to 9) over up to `threads` threads. Throws
// IoError when zlib fails (out of memory).
std::vector<unsigned char> encode_png(const Image& img, int level, int threads,
                                      PngStats* stats = nullptr);
// The same from 8-bit RGB (the same bytes as encode_png of the float image
// that rgb8_level quantised into it).
std::vector<unsigned char> encode_png(const Rgb8Image& img, int level, int threads,
                                      PngStats* stats = nullptr);

}  // namespace gf::io
