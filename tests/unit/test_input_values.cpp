// Input values that make a run meaningless are case errors (exit 2) where
// they are given, not a divergence at step 0 (issue 23, items 14 and 18):
// lengths whose spacing squared over- or underflows, values that do not fit
// the run's precision, NaN/Inf in an initial dataset.
#include <catch2/catch.hpp>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "case_test_util.hpp"
#include "io/case.hpp"
#include "io/output.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/stepper.hpp"

using namespace gf;
namespace fs = std::filesystem;

namespace {

const std::string kPlate =
    "workload: heat\nprecision: {prec}\ngrid: {dims: [9, 7], extent: [1.0, 1.0]}\n"
    "initial: {value: 0}\nboundary: {default: {type: dirichlet, value: 0}}\n"
    "heat: {alpha: 1, steps: 3}\n";

std::string plate(const std::string& prec) {
  std::string t = kPlate;
  return t.replace(t.find("{prec}"), 6, prec);
}

// The CaseError that making the initial state throws, or "(no error)".
template <class T>
std::string state_error(const std::string& text, const std::vector<std::string>& overrides,
                        const fs::path& dir = fs::temp_directory_path()) {
  const Case c = prepare_case(load_case_text(text, "case.yaml", overrides, dir.string()));
  try {
    initial_state<T>(c);
    AxisBc<T> bc[3];
    axis_boundaries<T>(c, bc);
  } catch (const CaseError& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("grid lengths whose spacing squared leaves the doubles are case errors", "[case]") {
  CHECK_THAT(test::error_of(plate("float64"), {"grid.extent=[1e-300, 1]"}),
             Catch::Contains("grid.extent[0]: 1e-300 is outside [1e-100, 1e+100]"));
  CHECK_THAT(test::error_of(plate("float64"), {"grid.extent=[1, 1e300]"}),
             Catch::Contains("grid.extent[1]: 1e+300 is outside"));
  CHECK_THAT(test::error_of(plate("float64"), {"grid={dims: [9, 7], spacing: [1e-120, 0.1]}"}),
             Catch::Contains("grid.spacing[0]: 1e-120 is outside"));
  CHECK_THAT(test::error_of(plate("float64"), {"grid.origin=[0, -1e200]"}),
             Catch::Contains("grid.origin[1]: -1e+200 is outside"));
  CHECK(test::error_of(plate("float64"), {"grid.extent=[1e-90, 1e90]"}) == "(no error)");
}

TEST_CASE("an initial value or a boundary value that does not fit the precision is a case error",
          "[case]") {
  CHECK_THAT(state_error<float>(plate("float32"), {"initial.value=1e39"}),
             Catch::Contains("initial.value: 1e+39 does not fit in float32"));
  CHECK(state_error<double>(plate("float64"), {"initial.value=1e39"}) == "(no error)");
  CHECK_THAT(state_error<float>(plate("float32"), {"boundary.x+={type: dirichlet, value: -1e39}"}),
             Catch::Contains("boundary.x+.value: the value at (x, y) = (1, 0): -1e+39 does not "
                             "fit in float32"));
  CHECK_THAT(state_error<double>(plate("float64"), {"boundary.x-={type: dirichlet, value: 1/(y-0.5)}"}),
             Catch::Contains("boundary.x-.value: the value at (x, y) = (0, 0.5): inf is not a "
                             "finite number"));
  CHECK_THAT(state_error<float>(plate("float32"),
                                {"boundary={default: {type: neumann, gradient: 1e40}}"}),
             Catch::Contains("boundary.x-.gradient: the gradient 1e+40 times twice the spacing"));
}

TEST_CASE("NaN, Inf or a float32 overflow in an initial dataset is a case error", "[case]") {
  const fs::path dir = fs::temp_directory_path() / "gf_input_values";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Grid g;
  g.ndim = 2;
  g.n = {9, 7, 1};
  std::vector<double> v(63, 0.5);
  v[2 + 9 * 3] = std::numeric_limits<double>::quiet_NaN();  // point (2, 3)
  v[5] = 1e300;                                               // point (5, 0)
  io::FieldSeriesWriter w({dir, "src", g, Precision::Float64, false, true, "test"});
  w.write(0, 0.0, {{"u", v.data(), Precision::Float64}});
  w.finish();
  const std::string file = "initial={file: {path: fields.h5, dataset: /steps/000000/u}}";
  CHECK_THAT(state_error<float>(plate("float32"), {file}, dir),
             Catch::Contains("initial.file: dataset '/steps/000000/u'") &&
                 Catch::Contains("the value at point (5, 0): 1e+300 does not fit in float32"));
  CHECK_THAT(state_error<double>(plate("float64"), {file}, dir),
             Catch::Contains("the value at point (2, 3): nan is not a finite number"));
  fs::remove_all(dir);
}

TEST_CASE("an initial dataset that is not numbers, or whose raw data file is missing, is a case error",
          "[case]") {
  const fs::path dir = fs::temp_directory_path() / "gf_input_types";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "types.h5").string();
  {
    const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[2] = {7, 9};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    auto make = [&](const char* name, hid_t type, hid_t dcpl = H5P_DEFAULT) {
      const hid_t d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      H5Dclose(d);
    };
    const hid_t boolean = H5Tenum_create(H5T_NATIVE_INT8);  // as h5py stores bool
    std::int8_t no = 0, yes = 1;
    H5Tenum_insert(boolean, "FALSE", &no);
    H5Tenum_insert(boolean, "TRUE", &yes);
    make("bool", boolean);
    const hid_t complex = H5Tcreate(H5T_COMPOUND, 16);
    H5Tinsert(complex, "r", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(complex, "i", 8, H5T_NATIVE_DOUBLE);
    make("complex", complex);
    const hid_t text = H5Tcopy(H5T_C_S1);
    H5Tset_size(text, 3);
    make("text", text);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, (dir / "gone.raw").c_str(), 0, 7 * 9 * 8);
    make("external", H5T_NATIVE_DOUBLE, dcpl);
    make("fine", H5T_NATIVE_DOUBLE);
    for (hid_t t : {boolean, complex, text}) H5Tclose(t);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(f);
  }
  auto error_for = [&](const std::string& dataset) {
    return test::error_of(plate("float64"),
                          {"initial={file: {path: " + path + ", dataset: " + dataset + "}}"});
  };
  CHECK_THAT(error_for("bool"), Catch::Contains("initial.file.dataset: dataset 'bool'") &&
                                    Catch::Contains("holds booleans or another enumeration"));
  CHECK_THAT(error_for("complex"), Catch::Contains("holds compound values"));
  CHECK_THAT(error_for("text"), Catch::Contains("holds text"));
  CHECK_THAT(error_for("external"),
             Catch::Contains("keeps its values in the external file") &&
                 Catch::Contains("gone.raw', which is missing"));
  CHECK(error_for("fine") == "(no error)");
  fs::remove_all(dir);
}

TEST_CASE("NaN or a float32 overflow in a raymarch volume file is a case error", "[case]") {
  const fs::path dir = fs::temp_directory_path() / "gf_input_volume";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Grid g;
  g.ndim = 3;
  g.n = {5, 4, 3};
  std::vector<double> v(60, 0.25);
  v[1 + 5 * (2 + 4 * 1)] = std::numeric_limits<double>::quiet_NaN();  // point (1, 2, 1)
  {
    io::FieldSeriesWriter w({dir, "src", g, Precision::Float64, false, true, "test"});
    w.write(0, 0.0, {{"u", v.data(), Precision::Float64}});
    w.finish();
  }
  const std::string text =
      "workload: raymarch\nprecision: {prec}\ngrid: {dims: [5, 4, 3]}\nraymarch:\n"
      "  volume: {file: {path: " + (dir / "fields.h5").string() +
      ", dataset: /steps/000000/u}}\n  mode: mip\n"
      "  camera: {position: [0.5, -1.5, 0.6], width: 16, height: 12}\n";
  auto volume_error = [&](const std::string& prec, auto tag) {
    using T = decltype(tag);
    std::string t = text;
    t.replace(t.find("{prec}"), 6, prec);
    try {
      raymarch_volume<T>(test::load(t));
    } catch (const CaseError& e) {
      CHECK(e.exit_code() == 2);
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(volume_error("float64", double{}),
             Catch::Contains("raymarch.volume.file: dataset '/steps/000000/u'") &&
                 Catch::Contains("the value at point (1, 2, 1): nan is not a finite number"));
  fs::remove_all(dir);
}
