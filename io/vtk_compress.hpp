// The .vti files' compression spread over threads. Internal to io/ (the VTK
// series, io/vtk_series.cpp, is its one user).
//
// VTK's XML writer compresses each array in blocks (vtkXMLWriter's
// BlockSize), one after the other on the calling thread, through the
// writer's vtkDataCompressor: one zlib stream (40-80 MB/s) bounded a whole
// output. The format is block-wise, though: each block is compressed on its
// own and its compressed size is listed in the array's header. So the
// compressor handed to the writer is a vtkZLibDataCompressor or
// vtkLZ4DataCompressor to VTK (its class name, which the writer records in
// the file and readers instantiate, is theirs) that compresses the blocks of
// the arrays it was told of ahead of the writer, a window of blocks at a time
// over OpenMP threads, each thread with a compressor of its own of the same
// kind and level, and returns each block's result when the writer asks for
// it. The writer still writes the file (the XML, the headers, the offsets),
// and the file is byte for byte what VTK's writer writes on one thread with
// the same compressor, level and block size (tests/unit/test_vtk_compress.cpp).
//
// A block is recognised by its address and size: VTK 9.1 hands the writer
// an AoS array's own memory, block by block. A block it does not recognise
// (a byte-swapped or converted copy, another block size) is compressed
// where it is asked for, as VTK would: slower, never wrong
// (VtkWriteStats::blocks_inline counts them).
#pragma once
#include <vtkSmartPointer.h>

#include <cstddef>
#include <vector>

#include "io/compression.hpp"
#include "io/output.hpp"

class vtkDataCompressor;

namespace gf::io::series {

// One array's bytes, as the writer will read them.
struct ArrayBytes {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};

// What the compressor reports after a write.
class AheadRecord {
 public:
  virtual ~AheadRecord() = default;
  virtual VtkWriteStats stats() const = 0;
};

struct AheadCompressor {
  vtkSmartPointer<vtkDataCompressor> vtk;  // for vtkXMLWriter::SetCompressor
  const AheadRecord* record = nullptr;     // lives as long as `vtk`
};

// A compressor of `c`'s method (lz4 or zlib, not none) and level for arrays
// written in blocks of `block` bytes, compressing ahead over `threads`.
AheadCompressor make_ahead_compressor(const Compression& c, int threads, std::size_t block,
                                      std::vector<ArrayBytes> arrays);

}  // namespace gf::io::series
