// Writers for the files of SPEC §4. Every file appears whole or not at all:
// it is written under a temporary name in the same folder and renamed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/precision.hpp"
#include "grid/decomp.hpp"
#include "grid/grid.hpp"
#include "io/compression.hpp"

namespace gf::io {

namespace fs = std::filesystem;

// A host array of grid values (x-fastest, grid.size() values).
struct FieldView {
  std::string name;          // e.g. "u"
  const void* data = nullptr;
  Precision precision = Precision::Float64;
};

struct SeriesSpec {
  fs::path dir;              // the run's output folder (exists)
  std::string name;          // case name: <name>.pvd, vtk/<name>_<step6>.vti
  Grid grid;
  Precision precision = Precision::Float64;
  bool vtk = true;           // <name>.pvd + vtk/*.vti
  bool hdf5 = true;          // fields.h5 + fields.xdmf
  std::string version;       // gridforge version, a root attribute of fields.h5
  // Restart: continue the series already in `dir` (the .pvd, fields.h5 or
  // its partial file, fields.xdmf), keeping the steps before this one and
  // removing the later ones (their .vti files and /steps groups). No series
  // there: a new one is started.
  std::optional<std::int64_t> resume_before;
  // A run over several MPI ranks: every rank writes its block. `grid` is the
  // global grid and each FieldView holds the rank's padded block
  // (decomp->local_grid()); fields.h5 is written collectively (parallel
  // HDF5, one hyperslab per rank), the VTK series as a .pvti per step over
  // one .vti piece per rank. Every rank calls every method. Null on one rank.
  std::shared_ptr<const Decomp> decomp;
  // The .vti files' appended data (output.compression), compressed in blocks
  // of vtk_block_bytes by up to `threads` threads (io/vtk_compress.hpp).
  Compression compression;
  // fields.h5's datasets (output.hdf5_compression): zlib: chunked, shuffle +
  // deflate at its level, compressed by up to `threads` threads
  // (io/h5_chunks.hpp); none: contiguous. Over MPI ranks always contiguous.
  Compression hdf5_compression{Compression::Method::None};
  int threads = 1;
  std::size_t vtk_block_bytes = std::size_t(1) << 20;
};

// What the VTK series' compression did, over the steps written so far.
struct VtkWriteStats {
  std::int64_t bytes_in = 0, bytes_out = 0;  // the arrays' bytes, and what their blocks became
  double compress_s = 0;      // the blocks compressed by the threads: wall time,
  double compress_cpu_s = 0;  // and CPU time, summed over the threads
  std::int64_t blocks_ahead = 0;       // blocks compressed by the threads
  std::int64_t blocks_inline = 0;      // blocks VTK handed over that were not (none expected)
};

// What fields.h5's compression did, over the steps written so far (zeros
// when it is not compressed).
struct H5WriteStats {
  std::int64_t bytes_in = 0, bytes_out = 0;  // the fields' bytes, and the chunks' in the file
  double compress_s = 0;      // the chunks compressed by the threads: wall time,
  double compress_cpu_s = 0;  // and CPU time, summed over the threads
  double write_s = 0;         // the chunks handed to HDF5 (H5Dwrite_chunk)
  std::int64_t chunks = 0;         // chunks written
  std::int64_t chunks_stored = 0;  // of them, stored uncompressed (would not shrink)
  std::string deflate;             // the library that deflates: "libdeflate 1.14", "zlib 1.2.13"
};

// The time series of fields of one run: VTK (.vti per output step + .pvd) and
// HDF5 (fields.h5 /steps/<step6>/<field>, + fields.xdmf).
class FieldSeriesWriter {
 public:
  explicit FieldSeriesWriter(SeriesSpec spec);
  ~FieldSeriesWriter();  // calls finish(), swallowing errors
  FieldSeriesWriter(const FieldSeriesWriter&) = delete;
  FieldSeriesWriter& operator=(const FieldSeriesWriter&) = delete;

  // Writes every field at this step. Throws IoError naming the path.
  void write(std::int64_t step, double time, const std::vector<FieldView>& fields);
  // Closes fields.h5 and moves it into place. Idempotent.
  void finish();
  // The .vti compression's record (zeros without vtk or compression).
  VtkWriteStats vtk_stats() const;
  // fields.h5's compression record (zeros without hdf5 or compression).
  H5WriteStats h5_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether the series in spec.dir can be continued before step `before`
// (SeriesSpec::resume_before): its .pvd read, its fields.h5 (or partial
// file) opened and checked against the grid, all without changing anything.
// Throws UsageError (exit 2: the series is an input of the restart) naming
// the file. FieldSeriesWriter checks this before it changes any file.
void check_series_resume(const SeriesSpec& spec, std::int64_t before);

// Atomic whole-file writes (temporary name in the same folder, then rename).
void write_text_atomic(const fs::path& path, const std::string& text);
void write_json_atomic(const fs::path& path, const nlohmann::json& j);

// Asks the operating system to start writing `path`'s dirty pages to disk now,
// without waiting for them (Linux: sync_file_range(SYNC_FILE_RANGE_WRITE) on a
// thread of its own, since that call blocks while the disk's queue is full;
// elsewhere nothing). The writers call it after each .vti, each step of
// fields.h5 and each checkpoint, so that the disk works while the run goes on
// instead of taking the whole run's bytes after it (docs/performance.md,
// "Writeback").
// A hint: failures are ignored, and nothing about the file's content changes.
void start_writeback(const fs::path& path) noexcept;

// log.csv: a header and rows of numbers; rewritten whole (atomically) on flush().
class CsvLog {
 public:
  CsvLog(fs::path path, std::vector<std::string> columns);
  void row(const std::vector<double>& values);
  // Restart: takes over the rows of the log.csv already at `path` whose
  // first column is < limit (≤ limit when inclusive); none when there is no
  // file. Throws IoError when its header is not this log's.
  void resume(double limit, bool inclusive);
  void flush();

 private:
  fs::path path_;
  std::vector<std::string> columns_;
  std::string body_;
};

// Shape of an HDF5 dataset, slowest axis first, checked to be readable as
// numbers: integers or floats (not booleans, enums, compounds such as complex
// numbers, or strings), with any external raw-data file it names present.
// Throws IoError naming the file and dataset otherwise, and when either is
// missing.
std::vector<std::int64_t> h5_dataset_shape(const std::string& path, const std::string& dataset);
// Reads a whole dataset converted to double. Throws IoError.
std::vector<double> h5_read_dataset(const std::string& path, const std::string& dataset);

// What a fields.h5 (or any file of its layout) holds: the grid's points per
// axis (attribute 'dims', x first) and its steps in file order, each with its
// fields and their precision. Throws IoError naming the file when it is not
// of that layout.
struct StepsListing {
  struct Field {
    std::string name;
    Precision precision = Precision::Float64;
  };
  struct Step {
    std::string group;  // "/steps/000100"
    std::int64_t step = 0;
    double time = 0;
    std::vector<Field> fields;
  };
  std::vector<std::int64_t> dims;
  std::vector<double> spacing, origin;  // per axis, x first (empty when the file has none)
  std::vector<Step> steps;
};
StepsListing h5_list_steps(const std::string& path);

}  // namespace gf::io
