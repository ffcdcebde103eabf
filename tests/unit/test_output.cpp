// Output writers (SPEC §4): series written here are read back with the
// libraries' own readers (vtkXMLImageDataReader, the HDF5 C API), and the
// .pvd/.xdmf texts are parsed enough to check times and axis order.
//
// Set GF_KEEP_TEST_OUTPUT=DIR to keep the files in DIR (for instance to run
// postprocess/paraview_check.py on them).
#include <hdf5.h>
#include <sys/resource.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataReader.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/output.hpp"

namespace fs = std::filesystem;
using gf::Grid;
using gf::Precision;
using gf::io::FieldSeriesWriter;
using gf::io::FieldView;
using gf::io::SeriesSpec;

namespace {

// A fresh folder per test; removed afterwards unless GF_KEEP_TEST_OUTPUT is set.
class TestDir {
 public:
  explicit TestDir(const std::string& label) {
    const char* keep = std::getenv("GF_KEEP_TEST_OUTPUT");
    keep_ = keep && *keep;
    const fs::path root =
        keep_ ? fs::path(keep)
              : fs::temp_directory_path() / ("gridforge-test-output-" + std::to_string(::getpid()));
    path_ = root / label;
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ignored;
    if (keep_) return;
    fs::remove_all(path_, ignored);
    fs::remove(path_.parent_path(), ignored);  // the per-process folder, once empty
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool keep_ = false;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> all_matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1].str());
  return out;
}

// Files a writer left under a temporary name (".x.tmp", ".fields.h5.partial").
std::vector<std::string> hidden_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().starts_with(".")) out.push_back(e.path().string());
  return out;
}

Grid make_grid(int ndim, std::array<std::int64_t, 3> n, std::array<double, 3> h,
               std::array<double, 3> origin) {
  Grid g;
  g.ndim = ndim;
  g.n = n;
  g.h = h;
  g.origin = origin;
  return g;
}

template <class T>
std::vector<T> random_values(std::int64_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-10.0, 10.0);
  std::vector<T> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// ------------------------------------------------------------ HDF5 helpers

// Closes an HDF5 id at scope end.
struct H5Id {
  H5Id(hid_t i, herr_t (*c)(hid_t)) : id(i), closer(c) {}
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() {
    if (id >= 0) closer(id);
  }
  hid_t id;
  herr_t (*closer)(hid_t);
};

double h5_attr_double(hid_t obj, const char* name) {
  H5Id a{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  REQUIRE(a.id >= 0);
  double v = 0;
  REQUIRE(H5Aread(a.id, H5T_NATIVE_DOUBLE, &v) >= 0);
  return v;
}

std::int64_t h5_attr_int64(hid_t obj, const char* name) {
  H5Id a{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  REQUIRE(a.id >= 0);
  H5Id t{H5Aget_type(a.id), H5Tclose};
  CHECK(H5Tget_class(t.id) == H5T_INTEGER);
  std::int64_t v = 0;
  REQUIRE(H5Aread(a.id, H5T_NATIVE_INT64, &v) >= 0);
  return v;
}

template <class T>
std::vector<T> h5_attr_array(hid_t obj, const char* name, hid_t mem_type) {
  H5Id a{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  REQUIRE(a.id >= 0);
  H5Id s{H5Aget_space(a.id), H5Sclose};
  std::vector<T> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(s.id)));
  REQUIRE(H5Aread(a.id, mem_type, v.data()) >= 0);
  return v;
}

std::string h5_attr_string(hid_t obj, const char* name) {
  H5Id a{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  REQUIRE(a.id >= 0);
  H5Id t{H5Aget_type(a.id), H5Tclose};
  REQUIRE(H5Tget_class(t.id) == H5T_STRING);
  REQUIRE(H5Tis_variable_str(t.id) == 0);
  std::string v(H5Tget_size(t.id), '\0');
  REQUIRE(H5Aread(a.id, t.id, v.data()) >= 0);
  return v.substr(0, v.find('\0'));
}

// Reads /steps/<step6>/<field> in its stored type and checks its shape.
template <class T>
std::vector<T> h5_read_field(hid_t file, const std::string& path, std::vector<hsize_t> shape) {
  H5Id ds{H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose};
  REQUIRE(ds.id >= 0);
  H5Id type{H5Dget_type(ds.id), H5Tclose};
  CHECK(H5Tget_size(type.id) == sizeof(T));
  H5Id space{H5Dget_space(ds.id), H5Sclose};
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.id)));
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  CHECK(dims == shape);
  hsize_t count = 1;
  for (auto d : dims) count *= d;
  std::vector<T> v(count);
  const hid_t mem = sizeof(T) == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  REQUIRE(H5Dread(ds.id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  return v;
}

// ------------------------------------------------------------- VTK helpers

vtkSmartPointer<vtkImageData> read_vti(const fs::path& p) {
  REQUIRE(fs::exists(p));
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(p.c_str());
  reader->Update();
  REQUIRE(reader->GetErrorCode() == 0);
  vtkSmartPointer<vtkImageData> image = reader->GetOutput();
  REQUIRE(image != nullptr);
  return image;
}

template <class T>
void check_vti(const fs::path& p, const Grid& g, const std::vector<std::string>& names,
               const std::vector<std::vector<T>>& values) {
  INFO(p.string());
  auto image = read_vti(p);
  int ext[6];
  image->GetExtent(ext);
  for (int a = 0; a < 3; ++a) {
    CHECK(ext[2 * a] == 0);
    CHECK(ext[2 * a + 1] == g.n[a] - 1);
    CHECK(image->GetOrigin()[a] == g.origin[a]);
    CHECK(image->GetSpacing()[a] == g.h[a]);
  }
  auto* pd = image->GetPointData();
  REQUIRE(pd->GetScalars() != nullptr);
  CHECK(std::string(pd->GetScalars()->GetName()) == names[0]);
  for (std::size_t f = 0; f < names.size(); ++f) {
    vtkDataArray* a = pd->GetArray(names[f].c_str());
    REQUIRE(a != nullptr);
    CHECK(a->GetDataType() == (sizeof(T) == 4 ? VTK_FLOAT : VTK_DOUBLE));
    REQUIRE(a->GetNumberOfTuples() == g.size());
    std::int64_t mismatches = 0;
    for (std::int64_t i = 0; i < g.size(); ++i)
      mismatches += a->GetComponent(i, 0) != double(values[f][std::size_t(i)]);
    CHECK(mismatches == 0);
  }
}

// ------------------------------------------------------- pvd/xdmf/h5 checks

struct Step {
  std::int64_t step;
  double time;
};

std::string step6(std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06lld", static_cast<long long>(step));
  return buf;
}

std::string vti_name(const std::string& name, std::int64_t step) {
  return "vtk/" + name + "_" + step6(step) + ".vti";
}

void check_pvd(const fs::path& p, const std::string& name, const std::vector<Step>& steps) {
  const std::string text = read_text(p);
  INFO(text);
  CHECK(text.find("type=\"Collection\"") != std::string::npos);
  const auto times = all_matches(text, R"re(timestep="([^"]*)")re");
  const auto files = all_matches(text, R"re(file="([^"]*)")re");
  REQUIRE(times.size() == steps.size());
  REQUIRE(files.size() == steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CHECK(std::stod(times[i]) == steps[i].time);  // printed with every digit
    CHECK(files[i] == vti_name(name, steps[i].step));
  }
}

// Values slowest axis first, as XDMF wants them; every grid is a 3D mesh
// (ParaView shows a 2DCoRectMesh in the y-z plane), missing axes 1 thick.
std::string zyx_dims(const Grid& g) {
  return std::to_string(g.n[2]) + " " + std::to_string(g.n[1]) + " " + std::to_string(g.n[0]);
}

void check_xdmf(const fs::path& p, const Grid& g, const std::vector<std::string>& names,
                const std::vector<Step>& steps, Precision prec) {
  const std::string text = read_text(p);
  INFO(text);
  CHECK(text.find("CollectionType=\"Temporal\"") != std::string::npos);
  CHECK(text.find("<Information") == std::string::npos);
  const auto times = all_matches(text, R"re(<Time Value="([^"]*)")re");
  REQUIRE(times.size() == steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) CHECK(std::stod(times[i]) == steps[i].time);
  const auto topo = all_matches(text, R"re(TopologyType="([^"]*)")re");
  REQUIRE(topo.size() == steps.size());
  CHECK(topo[0] == "3DCoRectMesh");
  for (const auto& d : all_matches(text, R"re(<Topology [^>]*Dimensions="([^"]*)")re"))
    CHECK(d == zyx_dims(g));
  for (const auto& d : all_matches(text, R"re(<DataItem Dimensions="([^"]*)"[^>]*Format="HDF")re"))
    CHECK(d == zyx_dims(g));
  // Origin and spacing, slowest axis first: z y x.
  for (const char* item : {"Origin", "Spacing"}) {
    const auto values = all_matches(text, std::string("Name=\"") + item + R"re("[^>]*>([^<]*)<)re");
    REQUIRE(values.size() == steps.size());
    const auto& expect = std::string(item) == "Origin" ? g.origin : g.h;
    std::istringstream in(values[0]);
    double z = 0, y = 0, x = 0;
    in >> z >> y >> x;
    CHECK(z == expect[2]);
    CHECK(y == expect[1]);
    CHECK(x == expect[0]);
  }
  const auto refs = all_matches(text, R"re(Format="HDF">([^<]*)<)re");
  REQUIRE(refs.size() == steps.size() * names.size());
  CHECK(refs.back() == "fields.h5:/steps/" + step6(steps.back().step) + "/" + names.back());
  const auto precs = all_matches(text, R"re(NumberType="Float" Precision="(\d)" Format="HDF")re");
  REQUIRE(!precs.empty());
  CHECK(precs[0] == (prec == Precision::Float32 ? "4" : "8"));
}

std::vector<hsize_t> zyx_shape(const Grid& g) {
  std::vector<hsize_t> s;
  for (int a = g.ndim - 1; a >= 0; --a) s.push_back(hsize_t(g.n[a]));
  return s;
}

void check_h5_root(hid_t file, const Grid& g, Precision prec) {
  const auto dims = h5_attr_array<std::int64_t>(file, "dims", H5T_NATIVE_INT64);
  const auto spacing = h5_attr_array<double>(file, "spacing", H5T_NATIVE_DOUBLE);
  const auto origin = h5_attr_array<double>(file, "origin", H5T_NATIVE_DOUBLE);
  REQUIRE(dims.size() == std::size_t(g.ndim));
  REQUIRE(spacing.size() == std::size_t(g.ndim));
  REQUIRE(origin.size() == std::size_t(g.ndim));
  for (int a = 0; a < g.ndim; ++a) {  // x y z order
    CHECK(dims[a] == g.n[a]);
    CHECK(spacing[a] == g.h[a]);
    CHECK(origin[a] == g.origin[a]);
  }
  CHECK(h5_attr_string(file, "precision") == gf::to_string(prec));
  CHECK(h5_attr_string(file, "gridforge_version") == "9.8.7");
}

template <class T>
void check_h5(const fs::path& p, const Grid& g, const std::vector<std::string>& names,
              const std::vector<Step>& steps,
              const std::vector<std::vector<std::vector<T>>>& data) {
  H5Id file{H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  REQUIRE(file.id >= 0);
  check_h5_root(file.id, g, gf::precision_of<T>());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string group = "/steps/" + step6(steps[i].step);
    H5Id grp{H5Gopen2(file.id, group.c_str(), H5P_DEFAULT), H5Gclose};
    REQUIRE(grp.id >= 0);
    CHECK(h5_attr_double(grp.id, "time") == steps[i].time);
    CHECK(h5_attr_int64(grp.id, "step") == steps[i].step);
    for (std::size_t f = 0; f < names.size(); ++f) {
      const std::string path = group + "/" + names[f];
      INFO(path);
      CHECK(h5_read_field<T>(file.id, path, zyx_shape(g)) == data[i][f]);
      H5Id ds{H5Dopen2(file.id, path.c_str(), H5P_DEFAULT), H5Dclose};
      CHECK(h5_attr_double(ds.id, "time") == steps[i].time);
      CHECK(h5_attr_int64(ds.id, "step") == steps[i].step);
      // The library's reader sees the same values, converted to double.
      const auto as_double = gf::io::h5_read_dataset(p.string(), path);
      CHECK(as_double == std::vector<double>(data[i][f].begin(), data[i][f].end()));
    }
  }
}

// -------------------------------------------------------- series round trip

// A series of two steps with fields named `names`, read back every way.
template <class T>
void round_trip(const std::string& label, const Grid& g, const std::vector<std::string>& names) {
  TestDir dir(label);
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const Precision prec = gf::precision_of<T>();
  const std::vector<Step> steps{{0, 0.0}, {25, 0.1234567890123456789}};
  std::vector<std::vector<std::vector<T>>> data;  // [step][field][point]
  {
    FieldSeriesWriter w(SeriesSpec{dir.path(), "case", g, prec, true, true, "9.8.7"});
    for (const auto& s : steps) {
      data.emplace_back();
      std::vector<FieldView> views;
      for (const auto& name : names) {
        data.back().push_back(random_values<T>(g.size(), rng));
        views.push_back(FieldView{name, data.back().back().data(), prec});
      }
      w.write(s.step, s.time, views);
      // fields.h5 appears whole, when the series is finished.
      CHECK_FALSE(fs::exists(dir.path() / "fields.h5"));
      CHECK(fs::exists(dir.path() / ".fields.h5.partial"));
    }
    w.finish();
    CHECK(fs::exists(dir.path() / "fields.h5"));
  }
  CHECK(hidden_files(dir.path()).empty());
  for (std::size_t i = 0; i < steps.size(); ++i)
    check_vti<T>(dir.path() / vti_name("case", steps[i].step), g, names, data[i]);
  check_pvd(dir.path() / "case.pvd", "case", steps);
  check_h5<T>(dir.path() / "fields.h5", g, names, steps, data);
  check_xdmf(dir.path() / "fields.xdmf", g, names, steps, prec);
}

}  // namespace

TEST_CASE("3D float32 series round-trips through VTK, HDF5, pvd and xdmf", "[output]") {
  // Sizes that differ per axis, so a swapped axis order cannot pass.
  round_trip<float>("series3d", make_grid(3, {7, 5, 4}, {0.25, 0.1, 0.3}, {-1.0, 0.5, 2.0}),
                    {"u", "v"});
}

TEST_CASE("2D float64 series round-trips through VTK, HDF5, pvd and xdmf", "[output]") {
  round_trip<double>("series2d", make_grid(2, {6, 9, 1}, {0.2, 1.0 / 3.0, 1.0}, {0.5, -2.0, 0.0}),
                     {"u"});
}

TEST_CASE("1D series round-trips through VTK, HDF5, pvd and xdmf", "[output]") {
  round_trip<double>("series1d", make_grid(1, {11, 1, 1}, {0.1, 1.0, 1.0}, {3.0, 0.0, 0.0}), {"u"});
}

// ------------------------------------------------------------- series cases

namespace {

SeriesSpec small_spec(const fs::path& dir, bool vtk = true, bool hdf5 = true) {
  return SeriesSpec{
      dir,  "case", make_grid(2, {4, 3, 1}, {0.5, 0.5, 1}, {0, 0, 0}), Precision::Float64, vtk,
      hdf5, "1.0"};
}

const std::vector<double> kSmallField{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

std::vector<FieldView> small_fields() {
  return {FieldView{"u", kSmallField.data(), Precision::Float64}};
}

// The IoError's message, checked to name `path`.
template <class F>
std::string io_error_of(F&& f) {
  try {
    f();
  } catch (const gf::IoError& e) {
    return e.what();
  }
  FAIL("no gf::IoError thrown");
  return {};
}

}  // namespace

TEST_CASE("FieldSeriesWriter writes only the formats asked for", "[output]") {
  TestDir dir("formats");
  SECTION("vtk only") {
    FieldSeriesWriter w(small_spec(dir.path(), true, false));
    w.write(0, 0.0, small_fields());
    w.finish();
    CHECK(fs::exists(dir.path() / "case.pvd"));
    CHECK(fs::exists(dir.path() / "vtk" / "case_000000.vti"));
    CHECK_FALSE(fs::exists(dir.path() / "fields.h5"));
    CHECK_FALSE(fs::exists(dir.path() / "fields.xdmf"));
  }
  SECTION("hdf5 only") {
    FieldSeriesWriter w(small_spec(dir.path(), false, true));
    w.write(0, 0.0, small_fields());
    w.finish();
    CHECK(fs::exists(dir.path() / "fields.h5"));
    CHECK(fs::exists(dir.path() / "fields.xdmf"));
    CHECK_FALSE(fs::exists(dir.path() / "vtk"));
    CHECK_FALSE(fs::exists(dir.path() / "case.pvd"));
  }
  CHECK(hidden_files(dir.path()).empty());
}

TEST_CASE("A run that fails midway keeps the steps it finished", "[output]") {
  TestDir dir("failed_run");
  try {
    FieldSeriesWriter w(small_spec(dir.path()));
    w.write(0, 0.0, small_fields());
    w.write(10, 1.0, small_fields());
    throw std::runtime_error("solver diverged");  // finish() is never called
  } catch (const std::runtime_error&) {
  }
  const std::string h5 = (dir.path() / "fields.h5").string();
  REQUIRE(fs::exists(h5));
  CHECK(hidden_files(dir.path()).empty());
  CHECK(gf::io::h5_read_dataset(h5, "/steps/000010/u") == kSmallField);
  CHECK(gf::io::h5_dataset_shape(h5, "/steps/000010/u") == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("FieldSeriesWriter rejects misuse", "[output]") {
  TestDir dir("misuse");
  FieldSeriesWriter w(small_spec(dir.path()));
  w.write(5, 0.5, small_fields());
  CHECK_THROWS_AS(w.write(5, 0.5, small_fields()), std::invalid_argument);
  CHECK_THROWS_AS(w.write(6, 0.6, {}), std::invalid_argument);
  CHECK_THROWS_AS(w.write(6, 0.6, {FieldView{"a/b", kSmallField.data(), Precision::Float64}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(w.write(6, 0.6, {FieldView{"u", nullptr, Precision::Float64}}),
                  std::invalid_argument);
  w.finish();
  w.finish();  // idempotent
  CHECK_THROWS_AS(w.write(7, 0.7, small_fields()), std::logic_error);
}

TEST_CASE("FieldSeriesWriter reports unwritable places as IoError naming the path", "[output]") {
  TestDir dir("unwritable");
  const fs::path& d = dir.path();
  SECTION("output folder missing") {
    const auto msg = io_error_of([&] { FieldSeriesWriter w(small_spec(d / "nope")); });
    CHECK_THAT(msg, Catch::Contains((d / "nope").string()));
  }
  SECTION("vtk/ cannot be made (a file is in the way)") {
    std::ofstream(d / "vtk") << "x";
    const auto msg = io_error_of([&] { FieldSeriesWriter w(small_spec(d)); });
    CHECK_THAT(msg, Catch::Contains((d / "vtk").string()));
  }
  SECTION("fields.h5 cannot be created") {
    fs::create_directories(d / ".fields.h5.partial" / "blocker");
    const auto msg = io_error_of([&] { FieldSeriesWriter w(small_spec(d, false, true)); });
    CHECK_THAT(msg, Catch::Contains((d / "fields.h5").string()));
  }
  SECTION("a .vti cannot be written: no partial file, earlier outputs intact") {
    FieldSeriesWriter w(small_spec(d));
    w.write(0, 0.0, small_fields());
    const std::string pvd_before = read_text(d / "case.pvd");
    fs::create_directories(d / "vtk" / ".case_000001.vti.tmp" / "blocker");
    const auto msg = io_error_of([&] { w.write(1, 0.1, small_fields()); });
    CHECK_THAT(msg, Catch::Contains((d / "vtk" / "case_000001.vti").string()));
    CHECK_FALSE(fs::exists(d / "vtk" / "case_000001.vti"));
    CHECK(read_text(d / "case.pvd") == pvd_before);
    fs::remove_all(d / "vtk" / ".case_000001.vti.tmp");
    w.finish();
    CHECK(hidden_files(d).empty());
    CHECK(gf::io::h5_read_dataset((d / "fields.h5").string(), "/steps/000000/u") == kSmallField);
  }
  SECTION("fields.h5 cannot be moved into place") {
    FieldSeriesWriter w(small_spec(d, false, true));
    w.write(0, 0.0, small_fields());
    fs::create_directories(d / "fields.h5" / "blocker");
    const auto msg = io_error_of([&] { w.finish(); });
    CHECK_THAT(msg, Catch::Contains((d / "fields.h5").string()));
    CHECK_FALSE(fs::exists(d / ".fields.h5.partial"));
  }
  if (::geteuid() != 0) {  // root writes anywhere: permissions prove nothing then
    SECTION("read-only folder") {
      fs::permissions(d, fs::perms::owner_read | fs::perms::owner_exec);
      const auto msg = io_error_of([&] { FieldSeriesWriter w(small_spec(d)); });
      fs::permissions(d, fs::perms::owner_all);
      CHECK_THAT(msg, Catch::Contains(d.string()));
    }
  }
}

// Lowers RLIMIT_FSIZE for a scope; SIGXFSZ is ignored meanwhile so that a
// write past the limit fails with EFBIG instead of killing the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::uintmax_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

// A full disk, without a full disk: the temporary name the writer is about to
// use is made a link to /dev/full, where every write fails with ENOSPC.
TEST_CASE("A full disk gives IoError naming the file and leaves no partial file", "[output]") {
  REQUIRE(fs::exists("/dev/full"));
  TestDir dir("full_disk");
  const fs::path& d = dir.path();
  Grid g = make_grid(3, {32, 32, 32}, {1, 1, 1}, {0, 0, 0});
  std::mt19937_64 rng(1);
  const auto big = random_values<double>(g.size(), rng);  // 256 KiB: beyond any buffer
  const std::vector<FieldView> fields{FieldView{"u", big.data(), Precision::Float64}};
  SECTION(".vti") {
    FieldSeriesWriter w(SeriesSpec{d, "case", g, Precision::Float64, true, false, "1.0"});
    fs::create_symlink("/dev/full", d / "vtk" / ".case_000000.vti.tmp");
    const auto msg = io_error_of([&] { w.write(0, 0.0, fields); });
    CHECK_THAT(msg, Catch::Contains((d / "vtk" / "case_000000.vti").string()));
    CHECK_FALSE(fs::exists(d / "vtk" / "case_000000.vti"));
    CHECK_FALSE(fs::exists(d / "case.pvd"));
  }
  SECTION("fields.h5, after a step it finished") {
    // HDF5 cannot be pointed at /dev/full (it writes on create); a file size
    // limit fails its writes the same way, mid-run (EFBIG instead of ENOSPC).
    FieldSeriesWriter w(SeriesSpec{d, "case", g, Precision::Float64, false, true, "1.0"});
    w.write(0, 0.0, fields);
    // The index appears only with the fields.h5 it names.
    CHECK_FALSE(fs::exists(d / "fields.xdmf"));
    std::string msg;
    {
      FileSizeLimit limit(fs::file_size(d / ".fields.h5.partial") + 4096);
      msg = io_error_of([&] { w.write(1, 0.1, fields); });
    }
    CHECK_THAT(msg, Catch::Contains((d / "fields.h5").string()) && Catch::Contains("step 1") &&
                        Catch::Contains("fields.h5 keeps the 1 step written before it"));
    // The last complete state is kept: step 0 in fields.h5, and an index naming it alone.
    w.finish();
    REQUIRE(fs::exists(d / "fields.h5"));
    CHECK(gf::io::h5_dataset_shape((d / "fields.h5").string(), "/steps/000000/u") ==
          std::vector<std::int64_t>{32, 32, 32});
    CHECK(gf::io::h5_read_dataset((d / "fields.h5").string(), "/steps/000000/u") ==
          std::vector<double>(big.begin(), big.end()));
    CHECK_THROWS_AS(gf::io::h5_dataset_shape((d / "fields.h5").string(), "/steps/000001/u"), gf::IoError);
    const std::string xdmf = read_text(d / "fields.xdmf");
    CHECK_THAT(xdmf, Catch::Contains("fields.h5:/steps/000000/u") &&
                         !Catch::Contains("/steps/000001"));
  }
  SECTION("text") {
    gf::io::write_text_atomic(d / "log.csv", "old\n");
    fs::create_symlink("/dev/full", d / ".log.csv.tmp");
    const auto msg = io_error_of([&] { gf::io::write_text_atomic(d / "log.csv", "new\n"); });
    CHECK_THAT(msg, Catch::Contains((d / "log.csv").string()) && Catch::Contains("No space left"));
    CHECK(read_text(d / "log.csv") == "old\n");
  }
  INFO("left behind: " << hidden_files(d).size());
  CHECK(hidden_files(d).empty());
}

// ------------------------------------------------------ atomic text and csv

TEST_CASE("write_text_atomic replaces a file whole and leaves no temporary", "[output]") {
  TestDir dir("atomic");
  const fs::path p = dir.path() / "run.txt";
  gf::io::write_text_atomic(p, "first\n");
  gf::io::write_text_atomic(p, "second, longer\n");
  CHECK(read_text(p) == "second, longer\n");
  CHECK(hidden_files(dir.path()).empty());
  SECTION("a failed write keeps the old file and names the path") {
    fs::create_directories(dir.path() / ".run.txt.tmp" / "blocker");
    const auto msg = io_error_of([&] { gf::io::write_text_atomic(p, "third\n"); });
    CHECK_THAT(msg, Catch::Contains(p.string()));
    CHECK(read_text(p) == "second, longer\n");
  }
  SECTION("a missing folder names the path") {
    const fs::path q = dir.path() / "missing" / "run.txt";
    CHECK_THAT(io_error_of([&] { gf::io::write_text_atomic(q, "x"); }),
               Catch::Contains(q.string()));
  }
}

TEST_CASE("start_writeback leaves a file as it was and ignores what it cannot open",
          "[output]") {
  TestDir dir("writeback");
  const fs::path p = dir.path() / "field.bin";
  std::string bytes(3 << 20, '\0');
  std::mt19937 gen(7);
  for (char& c : bytes) c = static_cast<char>(gen());
  { std::ofstream(p, std::ios::binary) << bytes; }
  gf::io::start_writeback(p);
  CHECK(fs::file_size(p) == bytes.size());
  CHECK(read_text(p) == bytes);
  // A hint, never an error: a missing file, a folder, an empty path.
  CHECK_NOTHROW(gf::io::start_writeback(dir.path() / "missing.bin"));
  CHECK_NOTHROW(gf::io::start_writeback(dir.path()));
  CHECK_NOTHROW(gf::io::start_writeback(fs::path()));
  CHECK(hidden_files(dir.path()).empty());
}

TEST_CASE("write_json_atomic pretty-prints with two spaces", "[output]") {
  TestDir dir("json");
  const fs::path p = dir.path() / "timing.json";
  const nlohmann::json j = {{"case", "heat"}, {"phases_s", {{"total", 0.78}}}, {"grid", {4, 5}}};
  gf::io::write_json_atomic(p, j);
  const std::string text = read_text(p);
  CHECK(nlohmann::json::parse(text) == j);
  CHECK(text.find("\n  \"case\": \"heat\"") != std::string::npos);
  CHECK(text.find("\n    \"total\": 0.78") != std::string::npos);
}

TEST_CASE("CsvLog writes a header and exact rows, rewritten whole on flush", "[output]") {
  TestDir dir("csv");
  const fs::path p = dir.path() / "log.csv";
  gf::io::CsvLog log(p, {"step", "time", "min"});
  log.row({0, 0.0, -1.5});
  log.flush();
  log.row({100, 0.1 + 0.2, 1e-300});
  log.flush();
  std::istringstream in(read_text(p));
  std::string header, r0, r1, extra;
  std::getline(in, header);
  std::getline(in, r0);
  std::getline(in, r1);
  CHECK_FALSE(std::getline(in, extra));  // not appended twice
  CHECK(header == "step,time,min");
  CHECK(r0 == "0,0,-1.5");
  // Every value reads back to the same double.
  std::istringstream row(r1);
  std::vector<double> values;
  for (std::string cell; std::getline(row, cell, ',');) values.push_back(std::stod(cell));
  CHECK(values == std::vector<double>{100, 0.1 + 0.2, 1e-300});
  CHECK_THROWS_AS(log.row({1, 2}), std::invalid_argument);
  CHECK(hidden_files(dir.path()).empty());
}

// ------------------------------------------------------------ HDF5 readers

TEST_CASE("h5_read_dataset converts integer datasets and reports what is missing", "[output]") {
  TestDir dir("h5read");
  const std::string path = (dir.path() / "in.h5").string();
  {
    H5Id file{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    H5Id group{H5Gcreate2(file.id, "/a", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
    const hsize_t dims[2] = {2, 3};
    H5Id space{H5Screate_simple(2, dims, nullptr), H5Sclose};
    H5Id ds{H5Dcreate2(group.id, "ints", H5T_STD_I32LE, space.id, H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT),
            H5Dclose};
    const std::int32_t v[6] = {-3, -2, -1, 0, 1, 2000000000};
    REQUIRE(H5Dwrite(ds.id, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  }
  CHECK(gf::io::h5_dataset_shape(path, "/a/ints") == std::vector<std::int64_t>{2, 3});
  CHECK(gf::io::h5_read_dataset(path, "a/ints") ==
        std::vector<double>{-3, -2, -1, 0, 1, 2000000000});

  using Catch::Contains;
  CHECK_THAT(io_error_of([&] { gf::io::h5_read_dataset(path, "/a/b"); }),
             Contains("no dataset '/a/b' in '" + path + "'"));
  CHECK_THAT(io_error_of([&] { gf::io::h5_dataset_shape(path, "/x/y/z"); }),
             Contains("no dataset '/x/y/z' in '" + path + "'"));
  CHECK_THAT(io_error_of([&] { gf::io::h5_read_dataset(path, "/a"); }),
             Contains("'/a' in '" + path + "' is not a dataset"));
  const std::string missing = (dir.path() / "x.h5").string();
  CHECK_THAT(io_error_of([&] { gf::io::h5_read_dataset(missing, "/a"); }),
             Contains("cannot open HDF5 file '" + missing + "'"));
  const std::string text = (dir.path() / "text.h5").string();
  std::ofstream(text) << "not hdf5";
  CHECK_THAT(io_error_of([&] { gf::io::h5_dataset_shape(text, "/a"); }),
             Contains("cannot open HDF5 file '" + text + "': not an HDF5 file"));
}
