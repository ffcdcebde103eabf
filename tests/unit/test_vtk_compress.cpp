// output.compression (io/vtk_compress.hpp): every variant round-trips through
// VTK's reader bit for bit, its blocks are compressed by the threads ahead of
// the writer (none by the writer itself), and the file is byte for byte what
// VTK's own writer writes on one thread with the same compressor, level and
// block size.
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkDataCompressor.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkUnsignedCharArray.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLImageDataWriter.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "io/compression.hpp"
#include "io/output.hpp"
#include "io/vtk_compress.hpp"

namespace fs = std::filesystem;
using gf::Grid;
using gf::io::Compression;
using gf::io::FieldSeriesWriter;
using gf::io::FieldView;
using gf::io::SeriesSpec;

namespace {

struct Folder {
  explicit Folder(const std::string& label)
      : path(fs::temp_directory_path() / ("gridforge-test-compress-" + std::to_string(::getpid())) /
             label) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(path.parent_path(), ignored);
  }
  fs::path path;
};

std::string bytes_of_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Grid grid3(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  Grid g;
  g.ndim = 3;
  g.n = {nx, ny, nz};
  g.h = {0.25, 0.1, 0.3};
  g.origin = {-1.0, 0.5, 2.0};
  return g;
}

// Values a compressor has something to do with: a smooth bump over zeros,
// and a slab of noise it cannot shrink.
template <class T>
std::vector<T> field_values(const Grid& g, std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> noise(-1.0, 1.0);
  std::vector<T> v(std::size_t(g.size()));
  std::size_t i = 0;
  for (std::int64_t k = 0; k < g.n[2]; ++k)
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t x = 0; x < g.n[0]; ++x, ++i) {
        const double r2 = std::pow(double(x) / double(g.n[0]) - 0.5, 2) +
                          std::pow(double(j) / double(g.n[1]) - 0.5, 2);
        v[i] = k < g.n[2] / 3   ? T(0)
               : k < g.n[2] / 2 ? T(noise(rng))
                                : T(scale * std::exp(-r2 / 0.02));
      }
  return v;
}

// The same image as the VTK series makes (io/vtk_series.cpp's make_image).
vtkSmartPointer<vtkImageData> image_of(const Grid& g, const std::vector<FieldView>& fields) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetExtent(0, int(g.n[0] - 1), 0, int(g.n[1] - 1), 0, int(g.n[2] - 1));
  image->SetOrigin(g.origin.data());
  image->SetSpacing(g.h.data());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    vtkSmartPointer<vtkDataArray> a;
    if (fields[i].precision == gf::Precision::Float32) {
      auto f = vtkSmartPointer<vtkFloatArray>::New();
      f->SetArray(const_cast<float*>(static_cast<const float*>(fields[i].data)), g.size(), 1);
      a = f;
    } else {
      auto d = vtkSmartPointer<vtkDoubleArray>::New();
      d->SetArray(const_cast<double*>(static_cast<const double*>(fields[i].data)), g.size(), 1);
      a = d;
    }
    a->SetName(fields[i].name.c_str());
    if (i == 0)
      image->GetPointData()->SetScalars(a);
    else
      image->GetPointData()->AddArray(a);
  }
  return image;
}

// What VTK's writer writes with one thread: its own compressor, level and block size.
std::string vtk_reference(const fs::path& path, const Grid& g, const std::vector<FieldView>& f,
                          const Compression& c, std::size_t block) {
  vtkNew<vtkXMLImageDataWriter> w;
  w->SetFileName(path.c_str());
  w->SetInputData(image_of(g, f));
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();
  w->SetHeaderTypeToUInt64();
  w->SetBlockSize(block);
  if (c.method == Compression::Method::None) {
    w->SetCompressorTypeToNone();
  } else {
    if (c.method == Compression::Method::Lz4)
      w->SetCompressorTypeToLZ4();
    else
      w->SetCompressorTypeToZLib();
    w->SetCompressionLevel(c.level);
  }
  REQUIRE(w->Write() == 1);
  return bytes_of_file(path);
}

template <class T>
void check_read_back(const fs::path& p, const std::vector<FieldView>& fields, std::int64_t n) {
  vtkNew<vtkXMLImageDataReader> r;
  r->SetFileName(p.c_str());
  r->Update();
  REQUIRE(r->GetErrorCode() == 0);
  for (const FieldView& f : fields) {
    vtkDataArray* a = r->GetOutput()->GetPointData()->GetArray(f.name.c_str());
    REQUIRE(a != nullptr);
    REQUIRE(a->GetNumberOfTuples() == n);
    REQUIRE(a->GetDataType() == (sizeof(T) == 4 ? VTK_FLOAT : VTK_DOUBLE));
    const T* got = static_cast<const T*>(a->GetVoidPointer(0));
    const T* want = static_cast<const T*>(f.data);
    CHECK(std::memcmp(got, want, std::size_t(n) * sizeof(T)) == 0);
  }
}

template <class T>
void every_variant(const std::string& label) {
  const Grid g = grid3(45, 31, 17);  // 23715 points: several 8 KiB blocks, the last one short
  const std::size_t block = 8192;
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const std::vector<T> u = field_values<T>(g, rng, 100.0), v = field_values<T>(g, rng, -3.0);
  const gf::Precision prec = gf::precision_of<T>();
  const std::vector<FieldView> fields{{"u", u.data(), prec}, {"v", v.data(), prec}};
  const std::int64_t blocks_per_array =
      (g.size() * std::int64_t(sizeof(T)) + std::int64_t(block) - 1) / std::int64_t(block);
  using M = Compression::Method;
  for (const Compression c :
       {Compression{M::None, 9}, Compression{M::Lz4, 1}, Compression{M::Lz4, 9},
        Compression{M::Zlib, 1}, Compression{M::Zlib, 9}}) {
    for (int threads : {1, 3}) {
      std::string name = gf::io::to_string(c) + "_t" + std::to_string(threads);
      INFO(name);
      std::replace(name.begin(), name.end(), ':', '_');
      Folder dir(label + "_" + name);
      SeriesSpec spec{dir.path, "case", g, prec, true, false, "1.0"};
      spec.compression = c;
      spec.threads = threads;
      spec.vtk_block_bytes = block;
      gf::io::VtkWriteStats stats;
      {
        FieldSeriesWriter w(spec);
        w.write(0, 0.0, fields);
        w.write(7, 0.5, fields);
        stats = w.vtk_stats();
      }
      const fs::path vti = dir.path / "vtk" / "case_000007.vti";
      check_read_back<T>(vti, fields, g.size());
      const std::string file = bytes_of_file(vti);
      const std::string head = file.substr(0, file.find("<AppendedData"));
      if (c.method == M::None) {
        CHECK(head.find("compressor=") == std::string::npos);
        CHECK(stats.blocks_ahead == 0);
      } else {
        CHECK(head.find(c.method == M::Lz4
                            ? "compressor=\"vtkLZ4DataCompressor\""
                            : "compressor=\"vtkZLibDataCompressor\"") != std::string::npos);
        // Every block of both arrays at both steps came from the threads.
        CHECK(stats.blocks_inline == 0);
        CHECK(stats.blocks_ahead == 2 * 2 * blocks_per_array);
        CHECK(stats.bytes_in == 2 * 2 * g.size() * std::int64_t(sizeof(T)));
        CHECK(stats.bytes_out > 0);
        CHECK(stats.bytes_out < stats.bytes_in);  // the zeros and the bump shrink
      }
      CHECK(file == vtk_reference(dir.path / "reference.vti", g, fields, c, block));
    }
  }
}

}  // namespace

TEST_CASE("every output.compression round-trips float32 fields through VTK bit for bit",
          "[output][compression]") {
  every_variant<float>("f32");
}

TEST_CASE("every output.compression round-trips float64 fields through VTK bit for bit",
          "[output][compression]") {
  every_variant<double>("f64");
}

TEST_CASE("the ahead compressor compresses a block it does not know where it is asked for",
          "[output][compression]") {
  std::vector<unsigned char> a(10000), foreign(3000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i % 7);
  for (std::size_t i = 0; i < foreign.size(); ++i) foreign[i] = static_cast<unsigned char>(i % 3);
  for (const auto m : {Compression::Method::Lz4, Compression::Method::Zlib}) {
    const Compression c{m, gf::io::default_level(m)};
    auto ahead = gf::io::series::make_ahead_compressor(c, 2, 4096, {{a.data(), a.size()}});
    const auto round = [&](const unsigned char* p, std::size_t n) {
      vtkSmartPointer<vtkUnsignedCharArray> z =
          vtkSmartPointer<vtkUnsignedCharArray>::Take(ahead.vtk->Compress(p, n));
      REQUIRE(z != nullptr);
      vtkSmartPointer<vtkUnsignedCharArray> back = vtkSmartPointer<vtkUnsignedCharArray>::Take(
          ahead.vtk->Uncompress(z->GetPointer(0), std::size_t(z->GetNumberOfValues()), n));
      REQUIRE(back != nullptr);
      REQUIRE(std::size_t(back->GetNumberOfValues()) == n);
      CHECK(std::memcmp(back->GetPointer(0), p, n) == 0);
    };
    round(a.data(), 4096);         // the first block: the window is compressed
    round(a.data() + 4096, 4096);  // from the window
    round(foreign.data(), 3000);   // not of the arrays: inline
    round(a.data() + 100, 500);    // inside the array, not a block: inline
    round(a.data() + 8192, 1808);  // the last, short block
    const gf::io::VtkWriteStats s = ahead.record->stats();
    CHECK(s.blocks_ahead == 3);
    CHECK(s.blocks_inline == 2);
    CHECK(s.bytes_in == 4096 + 4096 + 3000 + 500 + 1808);
  }
}
