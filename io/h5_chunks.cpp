// fields.h5's chunks shuffled and deflated over threads (io/h5_chunks.hpp
// says why and how).
#include "io/h5_chunks.hpp"

#include <omp.h>
#include <zlib.h>
#ifdef GRIDFORGE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>

#include "core/process.hpp"
#include "grid/view.hpp"

namespace gf::io::h5 {

namespace {

// Input bytes compressed per window: the memory held for compressed chunks,
// and at least a few chunks for every thread, so that chunks of different
// cost (a hot spot, a flat region) even out.
constexpr std::size_t kWindowBytes = std::size_t(64) << 20;


// `dims` / `chunk` (slowest first, 1 to 3 entries) as points per axis x
// first, missing axes 1: the Layout of grid/view.hpp.
Layout dense_of(const std::vector<hsize_t>& slowest_first) {
  std::int64_t n[3] = {1, 1, 1};
  const std::size_t r = slowest_first.size();
  for (std::size_t a = 0; a < r; ++a) n[a] = std::int64_t(slowest_first[r - 1 - a]);
  return Layout::dense(n);
}

struct Chunk {
  std::int64_t at[3] = {0, 0, 0};  // first point, x first
  std::vector<unsigned char> packed;  // what the file takes: m bytes
  std::size_t m = 0;
  std::uint32_t mask = 0;  // filters skipped
};

// One thread's deflate into the zlib format (what HDF5's deflate filter
// inflates): libdeflate's where the build has it (about 1.7 times zlib's
// speed at level 1, docs/performance.md), else zlib's compress2. Returns the
// bytes written, 0 when they would not fit in `cap`.
class Deflater {
 public:
  explicit Deflater(int level) : level_(level) {
#ifdef GRIDFORGE_HAVE_LIBDEFLATE
    c_.reset(libdeflate_alloc_compressor(level));
    if (!c_) throw std::bad_alloc();
#endif
  }
  std::size_t operator()(const unsigned char* in, std::size_t n, unsigned char* out,
                         std::size_t cap) const {
#ifdef GRIDFORGE_HAVE_LIBDEFLATE
    return libdeflate_zlib_compress(c_.get(), in, n, out, cap);
#else
    uLongf m = uLongf(cap);
    return compress2(out, &m, in, uLong(n), level_) == Z_OK ? std::size_t(m) : 0;
#endif
  }

 private:
  [[maybe_unused]] int level_;  // zlib's (libdeflate's compressor holds its own)
#ifdef GRIDFORGE_HAVE_LIBDEFLATE
  struct Free {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  std::unique_ptr<libdeflate_compressor, Free> c_;
#endif
};

// A thread's buffers (the chunk's values, and the same shuffled) and deflater.
struct Scratch {
  std::vector<unsigned char> raw, shuffled;
  std::unique_ptr<Deflater> deflate;
};

// The chunk's points of `src` into `raw`, points outside the dataset (an
// edge chunk) zero: H5Dwrite_chunk takes whole chunks.
void gather(const unsigned char* src, const Layout& all, const Layout& box, std::size_t elem,
            const Chunk& c, std::vector<unsigned char>& raw) {
  const std::int64_t nx = std::min(box.n[0], all.n[0] - c.at[0]);
  const std::int64_t ny = std::min(box.n[1], all.n[1] - c.at[1]);
  const std::int64_t nz = std::min(box.n[2], all.n[2] - c.at[2]);
  const bool edge = nx < box.n[0] || ny < box.n[1] || nz < box.n[2];
  if (edge) std::fill(raw.begin(), raw.end(), 0);
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      std::memcpy(raw.data() + std::size_t(box.index(0, j, k)) * elem,
                  src + std::size_t(all.index(c.at[0], c.at[1] + j, c.at[2] + k)) * elem,
                  std::size_t(nx) * elem);
}

// HDF5's shuffle filter (H5Zshuffle.c): byte b of value i goes to b·n + i.
void shuffle(const unsigned char* in, std::size_t n, std::size_t elem, unsigned char* out) {
  for (std::size_t b = 0; b < elem; ++b) {
    unsigned char* o = out + b * n;
    const unsigned char* p = in + b;
    for (std::size_t i = 0; i < n; ++i) o[i] = p[i * elem];
  }
}

// Shuffled and deflated, or left raw (mask: both filters skipped) when that
// is not smaller.
void pack(Chunk& c, Scratch& s, std::size_t elem) {
  const std::size_t bytes = s.raw.size();
  shuffle(s.raw.data(), bytes / elem, elem, s.shuffled.data());
  const std::size_t m = (*s.deflate)(s.shuffled.data(), bytes, c.packed.data(), c.packed.size());
  if (m > 0 && m < bytes) {
    c.m = m;
    c.mask = 0;
  } else {  // compressBound(bytes) ≥ bytes: the raw values fit
    std::memcpy(c.packed.data(), s.raw.data(), bytes);
    c.m = bytes;
    c.mask = 0x3;  // shuffle (filter 0) and deflate (filter 1) skipped
  }
}

}  // namespace

std::vector<hsize_t> chunk_shape(const std::vector<hsize_t>& dims, std::size_t elem,
                                 std::size_t target) {
  std::vector<hsize_t> chunk(dims.size(), 1);
  // Bytes of one entry along each axis: the axes faster than it whole.
  for (std::size_t a = 0; a < dims.size(); ++a) {
    hsize_t below = elem;
    for (std::size_t b = a + 1; b < dims.size(); ++b) below *= std::max<hsize_t>(dims[b], 1);
    // One entry is far over the target: cut a faster axis (a plane up to 4
    // times the target stays whole: 513² float32 is one plane, not 511 rows).
    if (below > 4 * target) continue;
    chunk[a] = std::clamp<hsize_t>(hsize_t(target) / below, 1, std::max<hsize_t>(dims[a], 1));
    for (std::size_t b = a + 1; b < dims.size(); ++b) chunk[b] = std::max<hsize_t>(dims[b], 1);
    return chunk;
  }
  // A value alone is over the target (never for a field): one a chunk.
  if (!dims.empty())
    chunk.back() = std::clamp<hsize_t>(hsize_t(target) / elem, 1, std::max<hsize_t>(dims.back(), 1));
  return chunk;
}

H5Handle deflate_creation(const std::vector<hsize_t>& chunk, int level) {
  H5Handle dcpl = h5_own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "cannot create dataset list");
  h5_ok(H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data()), "cannot set chunks");
  h5_ok(H5Pset_shuffle(dcpl.get()), "cannot set the shuffle filter");
  h5_ok(H5Pset_deflate(dcpl.get(), unsigned(level)), "cannot set the deflate filter");
  h5_ok(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "cannot set fill time");
  return dcpl;
}

void write_deflated(hid_t ds, const void* data, std::size_t elem, const std::vector<hsize_t>& dims,
                    const std::vector<hsize_t>& chunk, int level, int threads,
                    ChunkWriteStats& stats) {
  const Layout all = dense_of(dims), box = dense_of(chunk);
  std::int64_t count[3];
  for (int a = 0; a < 3; ++a) count[a] = (all.n[a] + box.n[a] - 1) / box.n[a];
  const std::int64_t total = count[0] * count[1] * count[2];
  const std::size_t bytes = std::size_t(box.size()) * elem;
  const std::size_t per = std::max<std::size_t>(kWindowBytes / bytes,
                                                std::size_t(std::max(threads, 1)));
  std::vector<Chunk> window(std::size_t(std::min<std::int64_t>(total, std::int64_t(per))));
  // Allocations outside the threads: no throw in them.
  for (Chunk& c : window) c.packed.resize(compressBound(uLong(bytes)));
  const int team = std::max(1, std::min(threads, int(window.size())));
  std::vector<Scratch> scratch(static_cast<std::size_t>(team));
  for (Scratch& s : scratch) {
    s.raw.resize(bytes);
    s.shuffled.resize(bytes);
    s.deflate = std::make_unique<Deflater>(level);
  }
  const auto* src = static_cast<const unsigned char*>(data);
  const std::size_t rank = dims.size();
  for (std::int64_t first = 0; first < total; first += std::int64_t(window.size())) {
    const std::size_t n = std::size_t(std::min<std::int64_t>(total - first, std::int64_t(window.size())));
    for (std::size_t w = 0; w < n; ++w) {  // chunk q: x fastest over the chunk grid
      const std::int64_t q = first + std::int64_t(w);
      window[w].at[0] = q % count[0] * box.n[0];
      window[w].at[1] = q / count[0] % count[1] * box.n[1];
      window[w].at[2] = q / (count[0] * count[1]) * box.n[2];
    }
    const auto t0 = std::chrono::steady_clock::now();
    double cpu_s = 0;
#pragma omp parallel num_threads(std::min(team, int(n))) reduction(+ : cpu_s)
    {
      const double c0 = thread_cpu_seconds();
      Scratch& s = scratch[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (std::size_t w = 0; w < n; ++w) {
        gather(src, all, box, elem, window[w], s.raw);
        pack(window[w], s, elem);
      }
      cpu_s += thread_cpu_seconds() - c0;
    }
    const auto t1 = std::chrono::steady_clock::now();
    stats.compress_s += std::chrono::duration<double>(t1 - t0).count();
    stats.compress_cpu_s += cpu_s;
    for (std::size_t w = 0; w < n; ++w) {
      const Chunk& c = window[w];
      std::vector<hsize_t> offset(rank);
      for (std::size_t a = 0; a < rank; ++a) offset[a] = hsize_t(c.at[rank - 1 - a]);
      h5_ok(H5Dwrite_chunk(ds, H5P_DEFAULT, c.mask, offset.data(), c.m, c.packed.data()),
            "cannot write a chunk");
      stats.bytes_out += std::int64_t(c.m);
      stats.chunks_stored += c.mask ? 1 : 0;
    }
    stats.chunks += std::int64_t(n);
    stats.write_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  }
  stats.bytes_in += all.size() * std::int64_t(elem);
}

std::string deflate_library() {
#ifdef GRIDFORGE_HAVE_LIBDEFLATE
  return "libdeflate " LIBDEFLATE_VERSION_STRING;
#else
  return std::string("zlib ") + zlibVersion();
#endif
}

}  // namespace gf::io::h5
