// output.hdf5_compression (io/h5_chunks.hpp): fields.h5's chunks shuffled
// and deflated over threads, written with H5Dwrite_chunk, read back by
// HDF5's own filters bit for bit: edge chunks, chunks that do not shrink,
// 1D/2D/3D, float32 and float64, and the same values as an uncompressed
// fields.h5.
#include <hdf5.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/h5_chunks.hpp"
#include "io/output.hpp"

namespace fs = std::filesystem;
using gf::Grid;
using gf::Precision;
using gf::io::Compression;
using gf::io::FieldSeriesWriter;
using gf::io::FieldView;
using gf::io::SeriesSpec;
using gf::io::h5::chunk_shape;
using gf::io::h5::H5Handle;

namespace {

fs::path fresh_dir(const std::string& label) {
  const fs::path p =
      fs::temp_directory_path() / ("gridforge-test-h5c-" + std::to_string(::getpid())) / label;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// Smooth over half the array (a field: compresses), random bits over the
// middle half (NaNs and denormals included: does not), so that both kinds of
// chunk are written.
template <class T>
std::vector<T> mixed_values(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(std::sin(0.001 * double(i)) * 100.0);
  for (std::size_t i = n / 4; i < n / 4 + n / 2; ++i) {
    const std::uint64_t bits = rng();
    std::memcpy(&v[i], &bits, sizeof(T));
  }
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
hid_t native() {
  return sizeof(T) == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

// Writes `v` (shape `dims`, slowest first) as one dataset of `chunk`-shaped
// deflated chunks, reads it back through HDF5's filters and returns it.
template <class T>
std::vector<T> through_chunks(const fs::path& file, const std::vector<T>& v,
                              const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk,
                              int threads, gf::io::h5::ChunkWriteStats& stats) {
  using namespace gf::io::h5;
  {
    H5Handle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    REQUIRE(f);
    H5Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
    H5Handle dcpl = deflate_creation(chunk, 3);
    H5Handle ds(H5Dcreate2(f.get(), "u", native<T>(), space.get(), H5P_DEFAULT, dcpl.get(),
                           H5P_DEFAULT),
                H5Dclose);
    REQUIRE(ds);
    write_deflated(ds.get(), v.data(), sizeof(T), dims, chunk, 3, threads, stats);
  }
  H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  H5Handle ds(H5Dopen2(f.get(), "u", H5P_DEFAULT), H5Dclose);
  REQUIRE(ds);
  std::vector<T> back(v.size(), T(-1));
  REQUIRE(H5Dread(ds.get(), native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  return back;
}

// some_stored: a chunk lies wholly in the random half, and is stored raw.
template <class T>
void chunks_round_trip(const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk,
                       bool some_stored = true) {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::size_t n = 1;
  for (hsize_t d : dims) n *= std::size_t(d);
  const std::vector<T> v = mixed_values<T>(n, rng);
  const fs::path dir = fresh_dir("chunks");
  for (int threads : {1, 3}) {
    INFO("threads " << threads);
    gf::io::h5::ChunkWriteStats stats;
    CHECK(same_bits(through_chunks(dir / "c.h5", v, dims, chunk, threads, stats), v));
    std::size_t expect = 1;
    for (std::size_t a = 0; a < dims.size(); ++a) expect *= (dims[a] + chunk[a] - 1) / chunk[a];
    CHECK(stats.chunks == std::int64_t(expect));
    CHECK(stats.bytes_in == std::int64_t(n * sizeof(T)));
    if (some_stored) CHECK(stats.chunks_stored > 0);  // the random half
    CHECK(stats.chunks_stored < stats.chunks);  // the smooth rest
  }
  fs::remove_all(dir.parent_path());
}

template <class T>
std::vector<T> read_field(const fs::path& file, const std::string& path, std::size_t n) {
  H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  H5Handle ds(H5Dopen2(f.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
  REQUIRE(ds);
  std::vector<T> back(n);
  REQUIRE(H5Dread(ds.get(), native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  return back;
}

// Filters of a dataset in pipeline order, and its layout.
std::vector<H5Z_filter_t> filters_of(const fs::path& file, const std::string& path,
                                     H5D_layout_t& layout) {
  H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  H5Handle ds(H5Dopen2(f.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
  H5Handle dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
  layout = H5Pget_layout(dcpl.get());
  std::vector<H5Z_filter_t> out;
  for (int i = 0; i < H5Pget_nfilters(dcpl.get()); ++i) {
    unsigned flags = 0, cd[8];
    std::size_t ncd = 8;
    out.push_back(H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &ncd, cd, 0, nullptr, nullptr));
  }
  return out;
}

// The same fields through FieldSeriesWriter compressed and not: equal bits,
// the compressed datasets chunked with shuffle + deflate.
template <class T>
void series_round_trip(const Grid& g, std::vector<const char*> methods = {"none", "zlib:1"}) {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const Precision prec = gf::precision_of<T>();
  const std::vector<T> u = mixed_values<T>(std::size_t(g.size()), rng);
  std::vector<T> v(u.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = T(0.5 * double(i % 97));
  const fs::path dir = fresh_dir("series");
  for (const char* method : methods) {
    INFO(method);
    const fs::path out = dir / std::string(method).substr(0, 4);
    fs::create_directories(out);
    SeriesSpec spec{out, "case", g, prec, false, true, "1.0"};
    spec.hdf5_compression = *gf::io::parse_hdf5_compression(method);
    spec.threads = 2;
    {
      FieldSeriesWriter w(spec);
      w.write(0, 0.0, {FieldView{"u", u.data(), prec}, FieldView{"v", v.data(), prec}});
      w.write(7, 0.5, {FieldView{"u", v.data(), prec}, FieldView{"v", u.data(), prec}});
      w.finish();
      const gf::io::H5WriteStats s = w.h5_stats();
      CHECK(s.bytes_in == (std::string(method) == "none" ? 0 : 4 * g.size() * std::int64_t(sizeof(T))));
    }
    const fs::path h5 = out / "fields.h5";
    CHECK(same_bits(read_field<T>(h5, "/steps/000000/u", u.size()), u));
    CHECK(same_bits(read_field<T>(h5, "/steps/000000/v", u.size()), v));
    CHECK(same_bits(read_field<T>(h5, "/steps/000007/u", u.size()), v));
    CHECK(same_bits(read_field<T>(h5, "/steps/000007/v", u.size()), u));
    H5D_layout_t layout{};
    const auto filters = filters_of(h5, "/steps/000007/u", layout);
    if (std::string(method) == "none") {
      CHECK(layout == H5D_CONTIGUOUS);
      CHECK(filters.empty());
    } else {
      CHECK(layout == H5D_CHUNKED);
      CHECK(filters == std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE});
    }
    // The library's reader (restart, initial.file, compare) sees them too.
    const auto as_double = gf::io::h5_read_dataset(h5.string(), "/steps/000007/v");
    REQUIRE(as_double.size() == u.size());
    for (std::size_t i = 0; i < u.size(); ++i)
      if (!(as_double[i] == double(u[i]) || (std::isnan(as_double[i]) && std::isnan(u[i])))) {
        FAIL("value " << i << " differs");
        break;
      }
  }
  fs::remove_all(dir.parent_path());
}

Grid grid_of(int ndim, std::array<std::int64_t, 3> n) {
  Grid g;
  g.ndim = ndim;
  for (int a = 0; a < 3; ++a) {
    g.n[a] = n[a];
    g.h[a] = 1.0;
    g.origin[a] = 0.0;
  }
  return g;
}

}  // namespace

TEST_CASE("chunk_shape: whole rows and planes up to about 1 MiB, within the dims",
          "[output][hdf5_compression]") {
  using V = std::vector<hsize_t>;
  CHECK(chunk_shape(V{512, 512, 512}, 4) == V{1, 512, 512});
  CHECK(chunk_shape(V{256, 256, 256}, 4) == V{4, 256, 256});
  CHECK(chunk_shape(V{64, 64, 64}, 4) == V{64, 64, 64});   // one chunk, the whole field
  CHECK(chunk_shape(V{33, 47, 65}, 8) == V{33, 47, 65});
  CHECK(chunk_shape(V{513, 513, 513}, 4) == V{1, 513, 513});  // a plane just over 1 MiB
  CHECK(chunk_shape(V{8, 4096, 4096}, 4) == V{1, 64, 4096});  // a 64 MiB plane is cut
  CHECK(chunk_shape(V{16385, 16385}, 4) == V{15, 16385});
  CHECK(chunk_shape(V{10000001}, 8) == V{131072});
  CHECK(chunk_shape(V{11}, 8) == V{11});
  CHECK(chunk_shape(V{1, 1, 1}, 4) == V{1, 1, 1});
  CHECK(chunk_shape(V{3, 1 << 20}, 8, 1 << 10) == V{1, 128});  // a row over the target
}

TEST_CASE("deflated chunks round-trip bit for bit, edge chunks and unshrinkable chunks included",
          "[output][hdf5_compression]") {
  // Dims that no chunk divides on any axis, and chunks that span an axis.
  chunks_round_trip<float>({33, 47, 65}, {4, 10, 16});
  chunks_round_trip<double>({33, 47, 65}, {7, 47, 64});
  chunks_round_trip<float>({129, 257}, {5, 64});
  chunks_round_trip<double>({100003}, {4096});
  chunks_round_trip<float>({17, 17, 17}, {16, 16, 16}, false);  // 2^k + 1: a point past it
}

TEST_CASE("fields.h5 compressed holds the bits of fields.h5 uncompressed, 1D to 3D",
          "[output][hdf5_compression]") {
  series_round_trip<float>(grid_of(3, {65, 47, 33}), {"none", "zlib:1", "zlib:9"});
  series_round_trip<double>(grid_of(3, {129, 65, 17}));  // 15 planes a chunk: an edge of 2
  series_round_trip<float>(grid_of(2, {257, 1025, 1}));  // 2^k + 1; 1020 rows a chunk, an edge of 5
  series_round_trip<double>(grid_of(1, {131075, 1, 1}));  // 131072 a chunk, an edge of 3
}
