// fields.h5's compressed datasets (output.hdf5_compression, docs/cases.md):
// chunked, with HDF5's built-in shuffle and deflate filters, so that h5py,
// h5dump and ParaView's Xdmf3 reader open them with no plugin. Internal to
// io/ (the HDF5 series of io/output.cpp is its one user).
//
// HDF5 runs its filters inside H5Dwrite on the calling thread: one zlib
// stream, ~130 MB/s a core, ten times slower than the disk of a GPU host
// (docs/performance.md). The filters are simple and fixed by the format,
// though: shuffle puts byte b of every value together (out[b·n + i] =
// in[i·size + b] over the n values of a chunk), deflate is zlib's compress2
// of that (a zlib stream; libdeflate writes the same format faster and is
// used where the build has it). So the chunks are gathered, shuffled and
// compressed here, a window of them at a time over OpenMP threads, as
// io/vtk_compress.cpp does the .vti blocks, and handed to the file whole
// with H5Dwrite_chunk on the writer thread, the one that calls HDF5. A chunk
// whose compressed bytes would not be fewer is stored as it is, with both
// filters marked skipped in its filter mask (what HDF5 itself does when an
// optional filter fails); readers then take it as is.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/h5.hpp"

namespace gf::io::h5 {

// The raw bytes a chunk aims at: a few planes of a 3D field (512³ float32:
// one plane, 512 chunks a field, enough to keep 16 threads busy), about the
// size where zlib's ratio stops improving (docs/performance.md).
inline constexpr std::size_t kChunkBytes = std::size_t(1) << 20;

// A chunk shape for a dataset of `dims` (slowest axis first) of `elem`-byte
// values: whole rows and planes, as many of the slowest axis as make about
// `target` bytes; a plane (or row) over 4 times that is cut along its own
// slowest axis. Every entry ≥ 1 and ≤ its dimension.
std::vector<hsize_t> chunk_shape(const std::vector<hsize_t>& dims, std::size_t elem,
                                 std::size_t target = kChunkBytes);

// A dataset creation list: chunked as `chunk`, shuffle then deflate at
// `level` (1-9), no fill values written (every chunk is written whole).
H5Handle deflate_creation(const std::vector<hsize_t>& chunk, int level);

// What the chunk writes did, summed over the datasets written.
struct ChunkWriteStats {
  std::int64_t bytes_in = 0, bytes_out = 0;  // the values' bytes, and what the file took
  double compress_s = 0;      // the threads' gather, shuffle and compress: wall time,
  double compress_cpu_s = 0;  // and CPU time summed over the threads
  double write_s = 0;         // H5Dwrite_chunk on the writer thread
  std::int64_t chunks = 0;        // chunks written
  std::int64_t chunks_stored = 0; // of them, stored unfiltered (did not shrink)
};

// What deflates the chunks: "libdeflate 1.14" where the build has it (the
// same zlib stream format, faster), else "zlib 1.2.13".
std::string deflate_library();

// Writes every value of `ds` (created with deflate_creation(chunk, level))
// from `data`, the whole array in memory (x fastest, `dims` slowest first),
// as chunks compressed over up to `threads` threads. Throws H5Failure.
void write_deflated(hid_t ds, const void* data, std::size_t elem, const std::vector<hsize_t>& dims,
                    const std::vector<hsize_t>& chunk, int level, int threads,
                    ChunkWriteStats& stats);

}  // namespace gf::io::h5
