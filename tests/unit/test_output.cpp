// Output writers (SPEC §4): series written here are read back with the
// libraries' own readers (vtkXMLImageDataReader, the HDF5 C API), and the
// .pvd/.xdmf texts are parsed enough to check times and axis order.
//
// Set GF_KEEP_TEST_OUTPUT=DIR to keep the files in DIR (for instance to run
// postprocess/paraview_check.py on them).
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataReader.h>

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
    const fs::path root = keep_ ? fs::path(keep)
                                : fs::temp_directory_path() /
                                      ("gridforge-test-output-" + std::to_string(::getpid()));
    path_ = root / label;
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ignored;
    if (!keep_) fs::remove_all(path_, ignored);
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

struct H5Id {
  hid_t id;
  herr_t (*closer)(hid_t);
  ~H5Id() {
    if (id >= 0) closer(id);
  }
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

std::string vti_name(const std::string& name, std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "_%06lld.vti", static_cast<long long>(step));
  return "vtk/" + name + buf;
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
  CHECK(refs.back() == "fields.h5:/steps/" + vti_name("", steps.back().step).substr(5, 6) + "/" +
                           names.back());
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
              const std::vector<Step>& steps, const std::vector<std::vector<std::vector<T>>>& data) {
  H5Id file{H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  REQUIRE(file.id >= 0);
  check_h5_root(file.id, g, gf::precision_of<T>());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string group = "/steps/" + vti_name("", steps[i].step).substr(5, 6);
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
  round_trip<double>("series1d", make_grid(1, {11, 1, 1}, {0.1, 1.0, 1.0}, {3.0, 0.0, 0.0}),
                     {"u"});
}
