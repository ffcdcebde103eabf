// initial.file: a dataset of an HDF5 file (e.g. a fields.h5 gridforge wrote)
// as the initial state, checked against the grid when the case loads.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <vector>

#include "io/case.hpp"
#include "io/output.hpp"
#include "solvers/stepper.hpp"

using namespace gf;
namespace fs = std::filesystem;

namespace {

// Writes a 2D float64 series with one step of random values; returns them.
std::vector<double> write_fields(const fs::path& dir, int nx, int ny) {
  fs::create_directories(dir);
  Grid g;
  g.ndim = 2;
  g.n = {nx, ny, 1};
  std::vector<double> v(static_cast<std::size_t>(nx * ny));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1, 1);
  for (auto& x : v) x = d(rng);
  io::FieldSeriesWriter w({dir, "src", g, Precision::Float64, false, true, "test"});
  w.write(0, 0.0, {{"u", v.data(), Precision::Float64}});
  w.finish();
  return v;
}

std::string case_text(int nx, int ny, const std::string& dataset) {
  return "workload: heat\ngrid: {dims: [" + std::to_string(nx) + ", " + std::to_string(ny) +
         "]}\ninitial:\n  file: {path: fields.h5, dataset: " + dataset +
         "}\nboundary: {default: {type: neumann}}\nheat: {alpha: 1, steps: 1}\n";
}

}  // namespace

TEST_CASE("initial.file reads the dataset a run wrote, point for point", "[initial]") {
  const fs::path dir = fs::temp_directory_path() / "gf_initial_file_ok";
  const auto v = write_fields(dir, 13, 7);
  const Case c = load_case_text(case_text(13, 7, "/steps/000000/u"), "init.yaml", {}, dir.string());
  REQUIRE(c.initial.kind == InitialSpec::Kind::File);
  const auto u = initial_state<double>(c);
  REQUIRE(u.size() == v.size());
  for (std::size_t k = 0; k < v.size(); ++k) CHECK(u[k] == v[k]);
  fs::remove_all(dir);
}

TEST_CASE("initial.file: a dataset of another shape, or none, is a case error", "[initial]") {
  const fs::path dir = fs::temp_directory_path() / "gf_initial_file_bad";
  write_fields(dir, 13, 7);
  try {
    load_case_text(case_text(7, 13, "/steps/000000/u"), "init.yaml", {}, dir.string());
    FAIL("a transposed grid was accepted");
  } catch (const CaseError& e) {
    CHECK(e.key() == "initial.file.dataset");
    CHECK(std::string(e.what()).find("has shape [7, 13]; the grid needs [13, 7]") !=
          std::string::npos);
    CHECK(e.loc().line == 4);
  }
  try {
    load_case_text(case_text(13, 7, "/steps/000100/u"), "init.yaml", {}, dir.string());
    FAIL("a missing dataset was accepted");
  } catch (const CaseError& e) {
    CHECK(e.key() == "initial.file.dataset");
    CHECK(std::string(e.what()).find("/steps/000100/u") != std::string::npos);
  }
  fs::remove_all(dir);
}
