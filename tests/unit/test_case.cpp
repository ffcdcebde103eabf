// The case loader on valid cases: every default, the grid spacing, boundary
// resolution, the resolved step, overrides and the resolved YAML.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/case.hpp"
#include "io/output.hpp"

namespace {


using Catch::Matchers::Contains;
using gf::BcType;

gf::Case load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return gf::load_case_text(text, "cases/case.yaml", overrides);
}

const char* kMinimal = R"Y(workload: heat
grid:
  dims: [11, 21]
heat:
  alpha: 0.5
  steps: 10
)Y";

// A scratch folder, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("gf_case_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
};

}  // namespace

TEST_CASE("a minimal case gets every default", "[case]") {
  const gf::Case c = load(kMinimal);
  CHECK(c.file == "cases/case.yaml");
  CHECK(c.name == "case");
  CHECK(c.workload == gf::Workload::Heat);
  CHECK(std::string(gf::to_string(c.workload)) == "heat");
  CHECK(c.precision == gf::Precision::Float64);
  CHECK(c.device == "auto");
  CHECK(c.parameters.empty());

  CHECK(c.grid.ndim == 2);
  CHECK(c.grid.n == std::array<std::int64_t, 3>{11, 21, 1});
  CHECK(c.grid.h[0] == Approx(0.1));
  CHECK(c.grid.h[1] == Approx(0.05));
  CHECK(c.grid.origin == std::array<double, 3>{0, 0, 0});
  CHECK(c.grid.periodic == std::array<bool, 3>{false, false, false});

  CHECK(c.initial.kind == gf::InitialSpec::Kind::Value);
  CHECK(c.initial.value == 0);
  for (int f = 0; f < 4; ++f) {
    CHECK(c.boundary[f].type == BcType::Dirichlet);
    CHECK(c.boundary[f].value.text == "0");
  }

  CHECK(c.heat.alpha == 0.5);
  CHECK(c.heat.scheme == gf::HeatScheme::Explicit);
  CHECK(c.heat.dt_auto);
  // 1/(2·α·(1/0.1² + 1/0.05²)) = 1/(2·0.5·500)
  CHECK(c.heat.dt_limit == Approx(0.002));
  CHECK(c.heat.dt == Approx(0.9 * 0.002));
  CHECK_FALSE(c.heat.use_t_end);
  CHECK(c.heat.steps == 10);
  CHECK(c.heat.last_dt == c.heat.dt);
  CHECK(c.heat.source.text == "0");

  CHECK(c.output.dir == "out/case");
  CHECK(c.output.every == 0);
  CHECK(c.output.check_every == 100);
  CHECK(c.output.vtk);
  CHECK(c.output.hdf5);
  CHECK(c.output.checkpoint_every == 0);
}

TEST_CASE("a complete case resolves grid, boundary and step", "[case]") {
  const gf::Case c = load(R"Y(name: hot-spot
workload: heat
precision: float32
device: cuda:1
parameters: {A: 2.0, w: 0.1}
grid:
  dims: [11, 21, 5]
  extent: [1.0, 2.0, 0.5]
  origin: [-0.5, 0, 1]
initial:
  expr: "A*exp(-(x^2+y^2)/w^2)"
boundary:
  default: {type: neumann, gradient: 0.5}
  x: {type: dirichlet, value: "sin(pi*y)"}
  x+: {type: dirichlet, value: 1}
  z: {type: periodic}
heat:
  alpha: 0.01
  scheme: explicit
  t_end: 1.0
  source: "x*y"
  solver: {tolerance: 1.0e-10, max_iters: 1000}
output:
  dir: results/hot
  every: 5
  check_every: 7
  formats: [vtk]
  checkpoint_every: 0
)Y");
  CHECK(c.name == "hot-spot");
  CHECK(c.precision == gf::Precision::Float32);
  CHECK(c.device == "cuda:1");
  REQUIRE(c.parameters.size() == 2);
  CHECK(c.parameters[0] == std::pair<std::string, double>{"A", 2.0});
  CHECK(c.parameters[1] == std::pair<std::string, double>{"w", 0.1});

  // Walled axes: extent/(n−1); the periodic z axis: extent/n.
  CHECK(c.grid.ndim == 3);
  CHECK(c.grid.h[0] == Approx(0.1));
  CHECK(c.grid.h[1] == Approx(0.1));
  CHECK(c.grid.h[2] == Approx(0.1));
  CHECK(c.grid.origin == std::array<double, 3>{-0.5, 0, 1});
  CHECK(c.grid.periodic == std::array<bool, 3>{false, false, true});

  CHECK(c.initial.kind == gf::InitialSpec::Kind::Expr);
  CHECK(c.initial.expr.text == "A*exp(-(x^2+y^2)/w^2)");
  CHECK(c.initial.expr.key == "initial.expr");
  CHECK(c.initial.expr.loc.str() == "cases/case.yaml:11:9");

  // face > axis > default
  CHECK(c.boundary[0].type == BcType::Dirichlet);
  CHECK(c.boundary[0].value.text == "sin(pi*y)");
  CHECK(c.boundary[0].value.key == "boundary.x.value");
  CHECK(c.boundary[1].type == BcType::Dirichlet);
  CHECK(c.boundary[1].value.text == "1");
  CHECK(c.boundary[1].value.loc.str() == "cases/case.yaml:15:32");
  for (int f : {2, 3}) {
    CHECK(c.boundary[f].type == BcType::Neumann);
    CHECK(c.boundary[f].gradient == 0.5);
  }
  CHECK(c.boundary[4].type == BcType::Periodic);
  CHECK(c.boundary[5].type == BcType::Periodic);

  // Equal spacing 0.1 in 3D: h²/(2·3·α) = 0.01/0.06; 1.0/0.15 = 6.67 → 7 steps.
  CHECK(c.heat.dt_limit == Approx(1.0 / 6.0));
  CHECK(c.heat.dt == Approx(0.15));
  CHECK(c.heat.use_t_end);
  CHECK(c.heat.t_end == 1.0);
  CHECK(c.heat.steps == 7);
  CHECK(c.heat.last_dt == Approx(0.1));
  CHECK(6 * c.heat.dt + c.heat.last_dt == Approx(1.0));
  CHECK(c.heat.source.text == "x*y");

  CHECK(c.output.dir == "results/hot");
  CHECK(c.output.every == 5);
  CHECK(c.output.check_every == 7);
  CHECK_THAT(c.resolved_yaml, Contains("check_every: 7"));
  CHECK(c.output.vtk);
  CHECK_FALSE(c.output.hdf5);
}

TEST_CASE("spacing is taken as given, on walled and periodic axes", "[case]") {
  const gf::Case c = load(R"Y(workload: heat
grid: {dims: [5, 8], spacing: [0.5, 0.25]}
boundary: {y: {type: periodic}}
heat: {alpha: 1, steps: 1}
)Y");
  CHECK(c.grid.h[0] == 0.5);
  CHECK(c.grid.h[1] == 0.25);
  CHECK(c.grid.periodic[1]);
  CHECK_THAT(c.resolved_yaml, Contains("spacing: [0.5, 0.25]"));
}

TEST_CASE("a periodic axis does not store its last point", "[case]") {
  const gf::Case walled = load("workload: heat\ngrid: {dims: [10]}\nheat: {alpha: 1, steps: 1}\n");
  const gf::Case periodic = load(
      "workload: heat\ngrid: {dims: [10]}\nboundary: {default: {type: periodic}}\n"
      "heat: {alpha: 1, steps: 1}\n");
  CHECK(walled.grid.h[0] == Approx(1.0 / 9));
  CHECK(periodic.grid.h[0] == Approx(1.0 / 10));
  CHECK(periodic.boundary[0].type == BcType::Periodic);
  CHECK(periodic.boundary[1].type == BcType::Periodic);
}

TEST_CASE("the most specific boundary key wins", "[case]") {
  const std::string text = R"Y(workload: heat
grid: {dims: [5, 5]}
boundary:
  y-: {type: neumann, gradient: -2}
  default: {type: neumann}
  y: {type: dirichlet, value: 3}
heat: {alpha: 1, steps: 1}
)Y";
  const gf::Case c = load(text);
  CHECK(c.boundary[0].type == BcType::Neumann);  // default
  CHECK(c.boundary[0].gradient == 0);            // gradient defaults to 0
  CHECK(c.boundary[1].type == BcType::Neumann);
  CHECK(c.boundary[2].type == BcType::Neumann);  // face beats axis, whatever the order
  CHECK(c.boundary[2].gradient == -2);
  CHECK(c.boundary[3].type == BcType::Dirichlet);  // axis beats default
  CHECK(c.boundary[3].value.text == "3");
  CHECK(c.boundary[3].value.key == "boundary.y.value");
}

TEST_CASE("t_end that is a whole number of steps gives exactly that many", "[case]") {
  // 1.1 / 0.1 = 11.000000000000002 in floating point: a plain ceil says 12.
  const gf::Case c =
      load("workload: heat\ngrid: {dims: [11]}\nheat: {alpha: 0.01, dt: 0.1, t_end: 1.1}\n");
  CHECK_FALSE(c.heat.dt_auto);
  CHECK(c.heat.dt == 0.1);
  CHECK(c.heat.steps == 11);
  CHECK(c.heat.last_dt == Approx(0.1));

  const gf::Case d =
      load("workload: heat\ngrid: {dims: [11]}\nheat: {alpha: 0.01, dt: 0.1, t_end: 0.25}\n");
  CHECK(d.heat.steps == 3);
  CHECK(d.heat.last_dt == Approx(0.05));

  // Shorter than one step: one shortened step.
  const gf::Case e =
      load("workload: heat\ngrid: {dims: [11]}\nheat: {alpha: 0.01, dt: 0.1, t_end: 0.01}\n");
  CHECK(e.heat.steps == 1);
  CHECK(e.heat.last_dt == Approx(0.01));
}

TEST_CASE("dt exactly at the stability limit is accepted", "[case]") {
  // 1D, h = 0.1, α = 0.5: limit = h²/(2·α) = 0.01
  const gf::Case c =
      load("workload: heat\ngrid: {dims: [11]}\nheat: {alpha: 0.5, dt: 0.01, steps: 3}\n");
  CHECK(c.heat.dt == 0.01);
  CHECK(c.heat.dt_limit == Approx(0.01));
}

TEST_CASE("numbers stand for expressions and initial values", "[case]") {
  const gf::Case c = load(R"Y(workload: heat
grid: {dims: [5]}
initial: {value: 2.5}
boundary: {x-: {type: dirichlet, value: 1.5e-3}}
heat: {alpha: 1, steps: 0, source: 3}
)Y");
  CHECK(c.initial.kind == gf::InitialSpec::Kind::Value);
  CHECK(c.initial.value == 2.5);
  CHECK(c.boundary[0].value.text == "1.5e-3");
  CHECK(c.heat.source.text == "3");
  CHECK(c.heat.steps == 0);
}

TEST_CASE("the resolved YAML loads back into the same case", "[case]") {
  const gf::Case a = load(R"Y(workload: heat
parameters: {A: 3}
grid: {dims: [9, 7], extent: [1.0, 0.3], origin: [0.1, 0.2]}
initial: {expr: "max(x, y)*A"}
boundary:
  x: {type: periodic}
  y+: {type: neumann, gradient: 0.25}
heat: {alpha: 0.02, t_end: 0.37}
output: {every: 3, formats: [hdf5, vtk]}
)Y");
  INFO(a.resolved_yaml);
  CHECK_THAT(a.resolved_yaml, Contains("name: case"));
  CHECK_THAT(a.resolved_yaml, Contains("x-: {type: periodic}"));
  CHECK_THAT(a.resolved_yaml, Contains("y-: {type: dirichlet, value: 0}"));
  CHECK_THAT(a.resolved_yaml, Contains("checkpoint_every: 0"));

  const gf::Case b = gf::load_case_text(a.resolved_yaml, "resolved.yaml");
  CHECK(b.name == a.name);
  CHECK(b.parameters == a.parameters);
  CHECK(b.grid.n == a.grid.n);
  CHECK(b.grid.h == a.grid.h);
  CHECK(b.grid.origin == a.grid.origin);
  CHECK(b.grid.periodic == a.grid.periodic);
  CHECK(b.initial.expr.text == a.initial.expr.text);
  for (int f = 0; f < 4; ++f) {
    CHECK(b.boundary[f].type == a.boundary[f].type);
    CHECK(b.boundary[f].value.text == a.boundary[f].value.text);
    CHECK(b.boundary[f].gradient == a.boundary[f].gradient);
  }
  CHECK(b.heat.dt == a.heat.dt);  // bit for bit: the number is written in full
  CHECK(b.heat.steps == a.heat.steps);
  CHECK(b.heat.last_dt == a.heat.last_dt);
  CHECK(b.output.dir == a.output.dir);
  CHECK(b.output.every == a.output.every);
  // Only the note that dt was automatic is lost: b gives dt as a number.
  std::string a_yaml = a.resolved_yaml;
  a_yaml.erase(a_yaml.find("auto: 0.9 × "), std::string("auto: 0.9 × ").size());
  CHECK(b.resolved_yaml == a_yaml);
}

TEST_CASE("load_case reads a file and names the case after it", "[case]") {
  const gf::Case c = gf::load_case(GF_TEST_DATA_DIR "/cases/heat2d.yaml");
  CHECK(c.name == "heat2d");
  CHECK(c.file == GF_TEST_DATA_DIR "/cases/heat2d.yaml");
  CHECK(c.grid.h[0] == Approx(2.0 / 32));
  CHECK(c.grid.h[1] == Approx(1.0 / 17));
  CHECK(c.grid.periodic == std::array<bool, 3>{false, true, false});
  CHECK(c.heat.dt_limit == Approx(1.0 / (2 * 0.01 * (256 + 289))));
  CHECK(c.heat.steps == 7);
  CHECK(c.heat.dt * 6 + c.heat.last_dt == Approx(0.5));
  CHECK(c.output.dir == "out/heat2d");
  CHECK_FALSE(c.output.vtk);
  CHECK(c.initial.expr.loc.str() == GF_TEST_DATA_DIR "/cases/heat2d.yaml:10:9");
}

TEST_CASE("initial.file resolves against the case file's folder", "[case]") {
  const TempDir dir;
  {  // a real 4 x 4 dataset at /steps/000000/u, saved as u0.h5
    gf::Grid g;
    g.ndim = 2;
    g.n = {4, 4, 1};
    const std::vector<double> v(16, 1.5);
    gf::io::FieldSeriesWriter w({dir.path, "u0", g, gf::Precision::Float64, false, true, "test"});
    w.write(0, 0.0, {{"u", v.data(), gf::Precision::Float64}});
    w.finish();
    std::filesystem::rename(dir.path / "fields.h5", dir.path / "u0.h5");
  }
  const auto path = dir.write("c.yaml", R"Y(workload: heat
grid: {dims: [4, 4]}
initial:
  file: {path: u0.h5, dataset: /steps/000000/u}
heat: {alpha: 1, steps: 1}
)Y");
  const gf::Case c = gf::load_case(path.string());
  CHECK(c.initial.kind == gf::InitialSpec::Kind::File);
  CHECK(c.initial.path == (dir.path / "u0.h5").lexically_normal().string());
  CHECK(c.initial.dataset == "/steps/000000/u");
  CHECK_THAT(c.resolved_yaml, Contains("dataset: /steps/000000/u"));

  // load_case_text resolves against base_dir.
  const gf::Case t = gf::load_case_text(
      "workload: heat\ngrid: {dims: [4, 4]}\n"
      "initial: {file: {path: u0.h5, dataset: /steps/000000/u}}\n"
      "heat: {alpha: 1, steps: 1}\n",
      "text.yaml", {}, dir.path.string());
  CHECK(t.initial.path == c.initial.path);
}

TEST_CASE("overrides replace keys, add keys and create sections", "[case]") {
  const gf::Case c =
      load(kMinimal, {"grid.dims=[64,32]", "heat.steps=25", "output.every=5",
                      "boundary.x-={type: neumann, gradient: 1}", "parameters.A=4", "name=run-2"});
  CHECK(c.grid.n[0] == 64);
  CHECK(c.grid.n[1] == 32);
  CHECK(c.grid.h[0] == Approx(1.0 / 63));
  CHECK(c.heat.steps == 25);
  CHECK(c.output.every == 5);
  CHECK(c.output.dir == "out/run-2");
  CHECK(c.boundary[0].type == BcType::Neumann);
  CHECK(c.boundary[0].gradient == 1);
  CHECK(c.boundary[1].type == BcType::Dirichlet);
  REQUIRE(c.parameters.size() == 1);
  CHECK(c.parameters[0].second == 4);
}

TEST_CASE("a later override wins, and overrides can fill an empty file", "[case]") {
  const gf::Case c = load(kMinimal, {"heat.steps=3", "heat.steps=4"});
  CHECK(c.heat.steps == 4);

  const gf::Case d = load("", {"workload=heat", "grid.dims=[7]", "heat={alpha: 2, steps: 1}"});
  CHECK(d.grid.n[0] == 7);
  CHECK(d.heat.alpha == 2);
}

TEST_CASE("an override value is YAML: expressions with ':' need quotes", "[case]") {
  const gf::Case c = load(kMinimal, {R"Y(initial.expr="x < 0.5 ? 1 : 0")Y"});
  CHECK(c.initial.expr.text == "x < 0.5 ? 1 : 0");
  CHECK(c.initial.expr.loc.str() == "command line");
}

TEST_CASE("heat.time_block: auto by default, a depth when given, kept in the resolved case", "[case]") {
  const std::string text = R"Y(workload: heat
grid: {dims: [9, 9, 9]}
heat: {alpha: 1.0, steps: 10}
)Y";
  CHECK(load(text).heat.time_block == 0);
  CHECK(load(text, {"heat.time_block=auto"}).heat.time_block == 0);
  const gf::Case c = load(text, {"heat.time_block=3"});
  CHECK(c.heat.time_block == 3);
  CHECK_THAT(c.resolved_yaml, Contains("time_block: 3"));
  CHECK(load(c.resolved_yaml).heat.time_block == 3);
  CHECK_THROWS_AS(load(text, {"heat.time_block=0"}), gf::CaseError);
  CHECK_THROWS_AS(load(text, {"heat.time_block=9"}), gf::CaseError);
  CHECK_THROWS_AS(load(text, {"heat.time_block=2.5"}), gf::CaseError);
}

TEST_CASE("output.hdf5_compression: none by default, none or zlib:L, kept in the resolved case",
          "[case]") {
  using M = gf::io::Compression::Method;
  const gf::Case d = load(kMinimal);
  CHECK(d.output.hdf5_compression == gf::io::Compression{M::None});
  CHECK(d.output.hdf5_compression == *gf::io::parse_hdf5_compression("none"));
  CHECK_THAT(d.resolved_yaml, Contains("hdf5_compression: none"));
  const auto with = [](const std::string& v) {
    return load(kMinimal, {"output.hdf5_compression=" + v}).output.hdf5_compression;
  };
  CHECK(with("none").method == M::None);
  CHECK(with("zlib") == gf::io::Compression{M::Zlib, 1});
  CHECK(with("zlib:9") == gf::io::Compression{M::Zlib, 9});
  for (const char* v : {"none", "zlib:6"}) {
    const gf::Case a = load(kMinimal, {std::string("output.hdf5_compression=") + v});
    CHECK_THAT(a.resolved_yaml, Contains(std::string("hdf5_compression: ") + v));
    CHECK(gf::load_case_text(a.resolved_yaml, "resolved.yaml").output.hdf5_compression ==
          a.output.hdf5_compression);
  }
  // The .vti's key is its own.
  CHECK(load(kMinimal, {"output.hdf5_compression=none"}).output.compression ==
        gf::io::Compression{M::Lz4, 9});
}

TEST_CASE("output.compression: lz4:9 by default, a method and its level, kept in the resolved case",
          "[case]") {
  using M = gf::io::Compression::Method;
  const gf::Case d = load(kMinimal);
  CHECK(d.output.compression.method == M::Lz4);
  CHECK(d.output.compression.level == 9);
  CHECK_THAT(d.resolved_yaml, Contains("compression: lz4:9"));
  const auto with = [](const std::string& v) {
    return load(kMinimal, {"output.compression=" + v}).output.compression;
  };
  CHECK(with("none").method == M::None);
  CHECK(with("lz4") == gf::io::Compression{M::Lz4, 9});
  CHECK(with("lz4:1") == gf::io::Compression{M::Lz4, 1});
  CHECK(with("zlib") == gf::io::Compression{M::Zlib, 1});
  CHECK(with("zlib:9") == gf::io::Compression{M::Zlib, 9});
  for (const char* v : {"none", "lz4:3", "zlib:6"}) {
    const gf::Case a = load(kMinimal, {std::string("output.compression=") + v});
    CHECK_THAT(a.resolved_yaml, Contains(std::string("compression: ") + v));
    CHECK(gf::load_case_text(a.resolved_yaml, "resolved.yaml").output.compression ==
          a.output.compression);
  }
  const gf::Case f = load(std::string(kMinimal) + "output:\n  compression: zlib:4\n");
  CHECK(f.output.compression == gf::io::Compression{M::Zlib, 4});
}
