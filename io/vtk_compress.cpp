// Compressing a .vti's blocks ahead of VTK's writer, over threads
// (io/vtk_compress.hpp says why and how).
#include "io/vtk_compress.hpp"

#include <omp.h>
#include <vtkDataCompressor.h>
#include <vtkLZ4DataCompressor.h>
#include <vtkObjectFactory.h>
#include <vtkZLibDataCompressor.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/process.hpp"

namespace gf::io::series {

namespace {

// Input bytes compressed per window: the memory held for compressed blocks
// (at most this and the compressor's slack), and at least a few blocks for
// every thread, so that blocks of different cost even out.
constexpr std::size_t kWindowBytes = std::size_t(64) << 20;


// Base: vtkZLibDataCompressor or vtkLZ4DataCompressor. No vtkTypeMacro, on
// purpose: GetClassName() stays Base's, the name the writer puts in the
// file's compressor attribute and readers instantiate.
template <class Base>
class Ahead final : public Base, public AheadRecord {
 public:
  static Ahead* New() { VTK_STANDARD_NEW_BODY(Ahead); }  // reference counted from here on

  void setup(int level, int threads, std::size_t block, std::vector<ArrayBytes> arrays) {
    this->SetCompressionLevel(level);
    block_ = block;
    arrays_ = std::move(arrays);
    workers_.clear();
    for (int t = 0; t < std::max(threads, 1); ++t) {
      workers_.push_back(vtkSmartPointer<Base>::New());
      workers_.back()->SetCompressionLevel(level);
    }
  }

  VtkWriteStats stats() const override { return stats_; }

 protected:
  std::size_t CompressBuffer(const unsigned char* in, std::size_t n, unsigned char* out,
                             std::size_t space) override {
    if (next_ >= window_.size() || window_[next_].at != in || window_[next_].n != n) {
      const ArrayBytes* a = array_of(in);
      if (!a || n != std::min(block_, std::size_t(a->data + a->size - in))) {
        ++stats_.blocks_inline;  // not a block of ours: as VTK would
        stats_.bytes_in += std::int64_t(n);
        const std::size_t m = Base::CompressBuffer(in, n, out, space);
        stats_.bytes_out += std::int64_t(m);
        return m;
      }
      compress_window(in, a->data + a->size);
    }
    const Block& b = window_[next_++];
    if (b.m == 0 || b.m > space) return 0;  // the writer reports the failure
    std::memcpy(out, b.bytes.data(), b.m);
    ++stats_.blocks_ahead;
    stats_.bytes_in += std::int64_t(n);
    stats_.bytes_out += std::int64_t(b.m);
    return b.m;
  }

 private:
  struct Block {
    const unsigned char* at = nullptr;
    std::size_t n = 0, m = 0;  // bytes in, bytes out (0: failed)
    std::vector<unsigned char> bytes;
  };

  const ArrayBytes* array_of(const unsigned char* p) const {
    for (const ArrayBytes& a : arrays_)
      if (p >= a.data && p < a.data + a.size) return &a;
    return nullptr;
  }

  // The blocks from `from` on, up to kWindowBytes or the array's end.
  void compress_window(const unsigned char* from, const unsigned char* end) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t per = std::max<std::size_t>(kWindowBytes / block_, 4 * workers_.size());
    std::size_t count = 0;
    for (const unsigned char* p = from; p < end && count < per;
         p += std::min(block_, std::size_t(end - p)))
      ++count;
    window_.resize(count);
    const unsigned char* p = from;
    for (Block& b : window_) {  // allocations outside the threads: no throw in them
      b.at = p;
      b.n = std::min(block_, std::size_t(end - p));
      b.bytes.resize(std::max(b.bytes.size(), workers_[0]->GetMaximumCompressionSpace(b.n)));
      p += b.n;
    }
    const int threads = int(std::min(workers_.size(), count));
    double cpu_s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : cpu_s)
    {
      const double c0 = thread_cpu_seconds();
      Base& worker = *workers_[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (std::size_t i = 0; i < count; ++i) {
        Block& b = window_[i];
        b.m = worker.Compress(b.at, b.n, b.bytes.data(), b.bytes.size());
      }
      cpu_s += thread_cpu_seconds() - c0;
    }
    stats_.compress_cpu_s += cpu_s;
    next_ = 0;
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
    stats_.compress_s += wall.count();
  }

  std::size_t block_ = 0;
  std::vector<ArrayBytes> arrays_;
  std::vector<vtkSmartPointer<Base>> workers_;
  std::vector<Block> window_;
  std::size_t next_ = 0;
  VtkWriteStats stats_;
};

template <class Base>
AheadCompressor make(const Compression& c, int threads, std::size_t block,
                     std::vector<ArrayBytes> arrays) {
  auto a = vtkSmartPointer<Ahead<Base>>::Take(Ahead<Base>::New());
  a->setup(c.level, threads, block, std::move(arrays));
  const AheadRecord* record = a.GetPointer();
  return {vtkSmartPointer<vtkDataCompressor>(a.GetPointer()), record};
}

}  // namespace

AheadCompressor make_ahead_compressor(const Compression& c, int threads, std::size_t block,
                                      std::vector<ArrayBytes> arrays) {
  switch (c.method) {
    case Compression::Method::Lz4:
      return make<vtkLZ4DataCompressor>(c, threads, block, std::move(arrays));
    case Compression::Method::Zlib:
      return make<vtkZLibDataCompressor>(c, threads, block, std::move(arrays));
    case Compression::Method::None:
      break;
  }
  throw std::invalid_argument("make_ahead_compressor: no compression to make");
}

}  // namespace gf::io::series
