// PNG encoding over threads (io/png_encode.hpp says how).
#include "io/png_encode.hpp"

#include <omp.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/process.hpp"
#include "core/rgb8.hpp"

namespace gf::io {

namespace {

constexpr int kBpp = 3;  // bytes a pixel: 8-bit RGB

int paeth(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  const int ab = pb < pa ? b : a;  // a unless b is strictly nearer
  return pc < std::min(pa, pb) ? c : ab;
}

template <int F>
inline unsigned char filtered(int v, int a, int b, int c) {
  if constexpr (F == 1) v -= a;
  if constexpr (F == 2) v -= b;
  if constexpr (F == 3) v -= (a + b) >> 1;
  if constexpr (F == 4) v -= paeth(a, b, c);
  return static_cast<unsigned char>(v);
}

// Row `x` (n bytes) under `up` (zeros above the first row) through PNG
// filter F (0 none, 1 sub, 2 up, 3 average, 4 paeth) into out; returns the
// sum of the filtered bytes as signed values (libpng's heuristic).
template <int F>
std::uint64_t filter_row(const unsigned char* x, const unsigned char* up, std::size_t n,
                         unsigned char* out) {
  std::uint64_t sum = 0;
  const std::size_t lead = std::min<std::size_t>(kBpp, n);
  for (std::size_t i = 0; i < lead; ++i) {  // the first pixel: nothing to its left
    out[i] = filtered<F>(x[i], 0, up[i], 0);
    sum += std::uint64_t(std::abs(int(static_cast<signed char>(out[i]))));
  }
  std::uint32_t part = 0;  // a row of up to 2^23 bytes sums in 32 bits
  for (std::size_t i = kBpp; i < n; ++i) {
    out[i] = filtered<F>(x[i], x[i - kBpp], up[i], up[i - kBpp]);
    part += std::uint32_t(std::abs(int(static_cast<signed char>(out[i]))));
  }
  return sum + part;
}

std::uint64_t filter_row(int f, const unsigned char* x, const unsigned char* up, std::size_t n,
                         unsigned char* out) {
  switch (f) {
    case 1: return filter_row<1>(x, up, n, out);
    case 2: return filter_row<2>(x, up, n, out);
    case 3: return filter_row<3>(x, up, n, out);
    case 4: return filter_row<4>(x, up, n, out);
    default: return filter_row<0>(x, up, n, out);
  }
}

void put32(std::vector<unsigned char>& o, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) o.push_back(static_cast<unsigned char>(v >> s));
}

// A whole chunk: length, type, data, CRC.
void put_chunk(std::vector<unsigned char>& o, const char* type, const unsigned char* data,
               std::size_t n) {
  put32(o, std::uint32_t(n));
  const std::size_t at = o.size();
  o.insert(o.end(), type, type + 4);
  o.insert(o.end(), data, data + n);
  put32(o, std::uint32_t(crc32(0, &o[at], uInt(4 + n))));
}

// One strip's work: its rows filtered, deflated as a raw segment (sync
// flushed, or finished when last), and the checksums of both.
struct Strip {
  int y0 = 0, y1 = 0;
  std::vector<unsigned char> out;  // the deflated segment (m bytes of it)
  std::size_t m = 0;
  uLong adler = 1, crc = 0;  // of the filtered bytes; of the segment
  std::size_t raw = 0;       // filtered bytes
  int err = Z_OK;
};

// Grows v to n bytes without writing them (a frame's buffers are written
// whole before they are read; zeroing them cost each frame page faults and
// a pass over memory on one thread).
void grow(std::unique_ptr<unsigned char[]>& v, std::size_t& cap, std::size_t n) {
  if (n <= cap) return;
  v.reset(new unsigned char[n]);
  cap = n;
}

// Per thread, kept from one image to the next (an in-situ run encodes a
// frame every few ms on the same threads): the candidate rows of the five
// filters and a row of zeros, the strip's filtered rows, and a deflate
// stream, reset for each strip (deflateReset: the same bytes as a new one,
// without its 256 KiB of buffers allocated and freed a strip).
struct Scratch {
  std::vector<unsigned char> cand;  // 5 filters' rows, then a row of zeros
  std::unique_ptr<unsigned char[]> filtered;
  std::size_t filtered_cap = 0;
  z_stream z{};
  int level = -1;  // the stream's, -1: none yet
  ~Scratch() {
    if (level >= 0) deflateEnd(&z);
  }
  void ready(std::size_t row, int per) {
    if (cand.size() != 6 * row) cand.assign(6 * row, 0);
    grow(filtered, filtered_cap, std::size_t(per) * (row + 1));
  }
  int stream(int lvl) {
    if (level == lvl) return deflateReset(&z);
    if (level >= 0) deflateEnd(&z);
    z = z_stream{};
    level = -1;
    const int e = deflateInit2(&z, lvl, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    if (e == Z_OK) level = lvl;
    return e;
  }
};

void deflate_strip(Strip& s, const unsigned char* rgb, std::size_t row, int level, bool last,
                   Scratch& t) {
  unsigned char* dst = t.filtered.get();
  const unsigned char* zeros = &t.cand[5 * row];  // above the first row
  for (int y = s.y0; y < s.y1; ++y) {
    const unsigned char* x = rgb + std::size_t(y) * row;
    const unsigned char* up = y > 0 ? x - row : zeros;
    if (level <= kPngUpFilterLevel) {  // Up on every row
      *dst++ = 2;
      filter_row<2>(x, up, row, dst);
      dst += row;
      continue;
    }
    std::uint64_t best = ~std::uint64_t(0);
    int pick = 0;
    for (int f = 0; f < 5; ++f) {  // the least sum; the lower filter on a tie
      const std::uint64_t sum = filter_row(f, x, up, row, &t.cand[std::size_t(f) * row]);
      if (sum < best) best = sum, pick = f;
    }
    *dst++ = static_cast<unsigned char>(pick);
    std::memcpy(dst, &t.cand[std::size_t(pick) * row], row);
    dst += row;
  }
  s.raw = std::size_t(dst - t.filtered.get());
  s.adler = adler32(adler32(0, nullptr, 0), t.filtered.get(), uInt(s.raw));
  s.err = t.stream(level);
  if (s.err != Z_OK) return;
  z_stream& z = t.z;
  z.next_in = t.filtered.get();
  z.avail_in = uInt(s.raw);
  z.next_out = s.out.data();
  z.avail_out = uInt(s.out.size());
  const int r = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
  const bool ok = last ? r == Z_STREAM_END : (r == Z_OK && z.avail_in == 0 && z.avail_out > 0);
  s.err = ok ? Z_OK : (r == Z_OK ? Z_BUF_ERROR : r);
  s.m = s.out.size() - z.avail_out;
  s.crc = crc32(0, s.out.data(), uInt(s.m));
}

}  // namespace

int png_strip_rows(int width) {
  const std::size_t row = 1 + std::size_t(kBpp) * std::size_t(std::max(width, 1));
  return int(std::max<std::size_t>(1, (kPngStripBytes + row - 1) / row));
}

namespace {

// The PNG of a w × h image: from RGBA floats (rgba, quantised here by
// rgb8_level) or from 8-bit RGB (rgb8, as it is), whichever is not null.
std::vector<unsigned char> encode(int w, int h, const float* rgba, const unsigned char* rgb8,
                                  int level, int threads, PngStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  level = std::clamp(level, 0, 9);
  const std::size_t row = std::size_t(kBpp) * std::size_t(w);
  const int per = png_strip_rows(w);
  // The buffers, kept by the calling thread from one image to the next (the
  // OpenMP threads see them through these references: a thread_local named
  // inside the parallel region would be the worker's own).
  thread_local std::unique_ptr<unsigned char[]> rgb_buf;
  thread_local std::size_t rgb_cap = 0;
  thread_local std::vector<Strip> strips_of_caller;
  thread_local std::vector<std::unique_ptr<Scratch>> scratch_of_caller;
  std::vector<Strip>& strips = strips_of_caller;
  std::vector<std::unique_ptr<Scratch>>& scratch = scratch_of_caller;
  strips.resize(std::size_t((h + per - 1) / per));
  const int nt = std::max(1, std::min(threads, int(strips.size())));
  // Every buffer before the threads start: nothing throws inside them. (A
  // Scratch is never moved: its deflate state points back at its stream.)
  while (scratch.size() < std::size_t(nt)) scratch.push_back(std::make_unique<Scratch>());
  for (int i = 0; i < nt; ++i) scratch[std::size_t(i)]->ready(row, per);
  if (rgba) grow(rgb_buf, rgb_cap, row * std::size_t(h));
  unsigned char* const quantised = rgba ? rgb_buf.get() : nullptr;  // the caller's buffer
  const unsigned char* rgb = rgba ? quantised : rgb8;
  for (std::size_t i = 0; i < strips.size(); ++i) {
    Strip& s = strips[i];
    s.y0 = int(i) * per;
    s.y1 = std::min(h, s.y0 + per);
    s.m = 0;
    s.err = Z_OK;
    // deflate's bound for the strip, and a sync flush's empty stored block
    const std::size_t bound =
        deflateBound(nullptr, uLong(std::size_t(s.y1 - s.y0) * (row + 1))) + 16;
    if (s.out.size() < bound) s.out.resize(bound);
  }
  double cpu_s = 0;
#pragma omp parallel num_threads(nt) reduction(+ : cpu_s)
  {
    const double c0 = thread_cpu_seconds();
    if (rgba) {
#pragma omp for schedule(static)
      for (int y = 0; y < h; ++y) {
        const float* s = rgba + std::size_t(y) * std::size_t(w) * 4;
        unsigned char* d = quantised + std::size_t(y) * row;
        for (int x = 0; x < w; ++x)
          for (int c = 0; c < kBpp; ++c) d[kBpp * x + c] = rgb8_level(s[4 * x + c]);
      }
    }
    Scratch& t = *scratch[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < strips.size(); ++i)
      deflate_strip(strips[i], rgb, row, level, i + 1 == strips.size(), t);
    cpu_s += thread_cpu_seconds() - c0;
  }

  // The zlib header (the level's FLEVEL bits), the segments, the adler32.
  const unsigned char zhead[2] = {0x78, static_cast<unsigned char>(level <= 1   ? 0x01
                                                                   : level <= 5 ? 0x5e
                                                                   : level == 6 ? 0x9c
                                                                                : 0xda)};
  std::size_t idat = 2 + 4;
  uLong adler = adler32(0, nullptr, 0);
  for (const Strip& s : strips) {
    if (s.err != Z_OK)
      throw IoError(fmt::format("cannot encode a PNG of {}x{} pixels: zlib error {}", w, h, s.err));
    idat += s.m;
    adler = adler32_combine(adler, s.adler, z_off_t(s.raw));
  }
  std::vector<unsigned char> o = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};  // the signature
  o.reserve(8 + 25 + 12 + idat + 12);
  std::vector<unsigned char> ihdr;
  put32(ihdr, std::uint32_t(w));
  put32(ihdr, std::uint32_t(h));
  for (unsigned char b : {8, 2, 0, 0, 0}) ihdr.push_back(b);  // 8-bit RGB, deflate, filters, no interlace
  put_chunk(o, "IHDR", ihdr.data(), ihdr.size());
  // IDAT written in place: its CRC the header's, combined with the segments' and the trailer's.
  put32(o, std::uint32_t(idat));
  const std::size_t at = o.size();
  o.insert(o.end(), {'I', 'D', 'A', 'T', zhead[0], zhead[1]});
  uLong crc = crc32(0, &o[at], 6);
  for (const Strip& s : strips) {
    o.insert(o.end(), s.out.begin(), s.out.begin() + std::ptrdiff_t(s.m));
    crc = crc32_combine(crc, s.crc, z_off_t(s.m));
  }
  const std::size_t trailer = o.size();
  put32(o, std::uint32_t(adler));
  crc = crc32_combine(crc, crc32(0, &o[trailer], 4), 4);
  put32(o, std::uint32_t(crc));
  put_chunk(o, "IEND", nullptr, 0);
  if (stats) {
    stats->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats->cpu_s = cpu_s;
    stats->threads = nt;
    stats->strips = int(strips.size());
    stats->bytes = std::int64_t(o.size());
  }
  return o;
}

}  // namespace

std::vector<unsigned char> encode_png(const Image& img, int level, int threads, PngStats* stats) {
  const int w = img.width, h = img.height;
  if (w <= 0 || h <= 0 || img.rgba.size() < std::size_t(w) * std::size_t(h) * 4)
    throw IoError(fmt::format("cannot encode a PNG of {}x{} pixels", w, h));
  return encode(w, h, img.rgba.data(), nullptr, level, threads, stats);
}

std::vector<unsigned char> encode_png(const Rgb8Image& img, int level, int threads,
                                      PngStats* stats) {
  const int w = img.width, h = img.height;
  if (w <= 0 || h <= 0 || img.rgb.size() < std::size_t(w) * std::size_t(h) * 3)
    throw IoError(fmt::format("cannot encode a PNG of {}x{} pixels", w, h));
  return encode(w, h, nullptr, img.rgb.data(), level, threads, stats);
}

}  // namespace gf::io
