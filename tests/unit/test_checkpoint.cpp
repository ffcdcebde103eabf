// checkpoint.h5 read back exactly, what keeps a checkpoint from continuing a
// case, and the restart side of the writers: log.csv and the field series
// continued from a step, later entries dropped.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/checkpoint.hpp"
#include "io/output.hpp"
#include "tests/unit/case_test_util.hpp"

namespace fs = std::filesystem;
using gf::Precision;
using gf::io::Checkpoint;

namespace {

struct Dir {
  explicit Dir(const std::string& label)
      : path(fs::temp_directory_path() /
             ("gridforge-test-checkpoint-" + std::to_string(::getpid())) / label) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() {
    std::error_code ignored;
    fs::remove_all(path.parent_path(), ignored);
  }
  fs::path path;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kCase = R"(name: c
workload: heat
grid: {dims: [4, 3]}
heat: {alpha: 1.0, steps: 10}
)";

// Values as a field of the checkpoint holds them: raw floats or doubles.
std::vector<unsigned char> raw(const std::vector<double>& v, Precision p) {
  std::vector<unsigned char> out(v.size() * gf::bytes_of(p));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (p == Precision::Float32) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      std::memcpy(out.data() + 8 * i, &v[i], 8);
    }
  }
  return out;
}

Checkpoint checkpoint_of(const gf::Case& c) {
  Checkpoint ck;
  ck.version = "1.2.3";
  ck.workload = gf::to_string(c.workload);
  ck.precision = c.precision;
  ck.ndim = c.grid.ndim;
  for (int a = 0; a < 3; ++a) {
    ck.dims[a] = c.grid.n[a];
    ck.spacing[a] = a < c.grid.ndim ? c.grid.h[a] : 0;
    ck.origin[a] = a < c.grid.ndim ? c.grid.origin[a] : 0;
  }
  ck.case_yaml = c.resolved_yaml;
  ck.step = 5;
  ck.time = 0.1 * 5;
  ck.fields = {{"u", raw(std::vector<double>(std::size_t(c.grid.size()), 0.0), c.precision)}};
  return ck;
}

}  // namespace

TEST_CASE("checkpoint.h5 reads back every value bit for bit", "[checkpoint]") {
  Dir d("roundtrip");
  for (Precision p : {Precision::Float32, Precision::Float64}) {
    gf::Case c = gf::test::load(kCase, {std::string("precision=") + gf::to_string(p)});
    Checkpoint ck = checkpoint_of(c);
    std::vector<double> u(12), r(12, -1.0 / 3.0);
    for (int i = 0; i < 12; ++i) u[i] = 0.1 * i + 1e-17 * i;
    ck.fields = {{"u", raw(u, p)}, {"cg_r", raw(r, p)}};
    ck.reals = {{"dt", 1.0 / 3.0}, {"cg_rr", 1e-300}};
    ck.integers = {{"cg_iterations", (std::int64_t(1) << 40) + 1}};
    const fs::path path = d.path / "checkpoint.h5";
    gf::io::write_checkpoint(path, ck);
    CHECK_FALSE(fs::exists(d.path / ".checkpoint.h5.tmp"));
    const Checkpoint back = gf::io::read_checkpoint(path);
    CHECK(back.version == "1.2.3");
    CHECK(back.workload == "heat");
    CHECK(back.precision == p);
    CHECK(back.ndim == 2);
    CHECK(back.dims[0] == 4);
    CHECK(back.dims[1] == 3);
    CHECK(back.spacing[0] == c.grid.h[0]);
    CHECK(back.step == 5);
    CHECK(back.time == 0.1 * 5);
    CHECK(back.case_yaml == c.resolved_yaml);
    CHECK(back.field("u") == raw(u, p));
    CHECK(back.field("cg_r") == raw(r, p));
    CHECK(back.real("dt") == 1.0 / 3.0);
    CHECK(back.real("cg_rr") == 1e-300);
    CHECK(back.integer("cg_iterations") == (std::int64_t(1) << 40) + 1);
    CHECK_THROWS_AS(back.real("nothing"), gf::IoError);
    CHECK(gf::io::checkpoint_mismatch(back, c).empty());
  }
}

TEST_CASE("a checkpoint that cannot be read says why", "[checkpoint]") {
  Dir d("unreadable");
  auto message = [](const fs::path& p) {
    try {
      gf::io::read_checkpoint(p);
    } catch (const gf::IoError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(message(d.path / "none.h5"), Catch::Contains("no such file"));
  std::ofstream(d.path / "text.h5") << "hello\n";
  CHECK_THAT(message(d.path / "text.h5"), Catch::Contains("not an HDF5 file"));
  // An HDF5 file that is not a checkpoint: a field series.
  gf::Case c = gf::test::load(kCase);
  {
    gf::io::FieldSeriesWriter w(gf::io::SeriesSpec{d.path, "c", c.grid, c.precision, false, true,
                                                   "1.0", std::nullopt});
  }
  CHECK_THAT(message(d.path / "fields.h5"), Catch::Contains("not a gridforge checkpoint"));
}

TEST_CASE("checkpoint_mismatch names the first key that differs", "[checkpoint]") {
  const gf::Case c = gf::test::load(kCase);
  const Checkpoint ck = checkpoint_of(c);
  using gf::io::checkpoint_mismatch;
  using gf::test::load;
  CHECK(checkpoint_mismatch(ck, load(kCase, {"grid.dims=[4,4]"})) ==
        "grid.dims [4, 3] in the checkpoint, [4, 4] in the case");
  CHECK(checkpoint_mismatch(ck, load(kCase, {"grid.dims=[4,3,3]"})) ==
        "grid.dims [4, 3] in the checkpoint, [4, 3, 3] in the case");
  CHECK(checkpoint_mismatch(ck, load(kCase, {"precision=float32"})) ==
        "precision float64 in the checkpoint, float32 in the case");
  CHECK(checkpoint_mismatch(ck, load(kCase, {"grid.origin=[1,0]"})) ==
        "grid.origin [0, 0] in the checkpoint, [1, 0] in the case");
  CHECK(checkpoint_mismatch(ck, load(kCase, {"heat.alpha=2"})) ==
        "heat.alpha 1 in the checkpoint, 2 in the case");
  CHECK(checkpoint_mismatch(ck, load(kCase, {"heat.scheme=implicit", "heat.dt=0.001"}))
            .starts_with("heat.scheme explicit in the checkpoint, implicit in the case"));
  CHECK(checkpoint_mismatch(ck, load(kCase, {"boundary.x-={type: neumann, gradient: 0}"})) ==
        "boundary.x-.type dirichlet in the checkpoint, neumann in the case");
  CHECK(checkpoint_mismatch(ck, load(kCase, {"heat.steps=4"})) ==
        "the checkpoint is at step 5, past the case's last step 4 (raise heat.steps)");
  // Keys a restart may change.
  CHECK(checkpoint_mismatch(ck, load(kCase, {"heat.steps=100", "name=other", "output.every=3",
                                             "output.checkpoint_every=2", "initial.value=7",
                                             "device=cpu", "output.formats=[hdf5]"}))
            .empty());
  // The workload comes first.
  const gf::Case stencil = load("workload: stencil\ngrid: {dims: [4, 3]}\nstencil: {preset: "
                                "star5, steps: 10}\nboundary: {default: {type: periodic}}\n");
  CHECK(checkpoint_mismatch(ck, stencil) == "workload heat in the checkpoint, stencil in the case");
  // A laplace method's state does not continue another method.
  const char* lap = "workload: laplace\ngrid: {dims: [8, 8]}\nlaplace: {method: jacobi}\n";
  Checkpoint lck = checkpoint_of(load(lap));
  CHECK(checkpoint_mismatch(lck, load(lap, {"laplace.method=cg"})) ==
        "laplace.method jacobi in the checkpoint, cg in the case");
  CHECK(checkpoint_mismatch(lck, load(lap, {"laplace.max_iters=7", "laplace.tolerance=1e-3",
                                            "laplace.check_every=3"}))
            .empty());
}

TEST_CASE("CsvLog::resume keeps the rows before the checkpoint", "[checkpoint]") {
  Dir d("csv");
  const fs::path p = d.path / "log.csv";
  {
    gf::io::CsvLog log(p, {"step", "x"});
    for (int s = 0; s <= 50; s += 10) log.row({double(s), 0.5 * s});
    log.flush();
  }
  gf::io::CsvLog a(p, {"step", "x"});
  a.resume(30, false);
  a.row({30, 1});
  a.flush();
  CHECK(slurp(p) == "step,x\n0,0\n10,5\n20,10\n30,1\n");
  gf::io::CsvLog b(p, {"step", "x"});
  b.resume(30, true);
  b.flush();
  CHECK(slurp(p) == "step,x\n0,0\n10,5\n20,10\n30,1\n");
  gf::io::CsvLog other(p, {"iteration", "residual"});
  CHECK_THROWS_WITH(other.resume(30, true), Catch::Contains("its columns are 'step,x'"));
  gf::io::CsvLog none(d.path / "none.csv", {"step", "x"});
  none.resume(30, false);  // no file: a new log
  none.flush();
  CHECK(slurp(d.path / "none.csv") == "step,x\n");
}

TEST_CASE("a resumed series drops the steps from the checkpoint on and appends", "[checkpoint]") {
  Dir d("series");
  const gf::Case c = gf::test::load(kCase);
  std::vector<double> u(12, 1.0);
  const std::vector<gf::io::FieldView> fields{{"u", u.data(), Precision::Float64}};
  gf::io::SeriesSpec spec{d.path, "c", c.grid, c.precision, true, true, "1.0", std::nullopt};
  {
    gf::io::FieldSeriesWriter w(spec);
    for (int s = 0; s <= 30; s += 10) w.write(s, 0.1 * s, fields);
  }
  for (bool partial : {false, true}) {
    if (partial) fs::rename(d.path / "fields.h5", d.path / ".fields.h5.partial");  // a killed run
    spec.resume_before = 20;
    {
      gf::io::FieldSeriesWriter w(spec);
      w.write(20, 0.1 * 20, fields);
      w.write(40, 0.1 * 40, fields);
    }
    const std::string pvd = slurp(d.path / "c.pvd");
    CHECK(pvd.find("c_000010.vti") != std::string::npos);
    CHECK(pvd.find("c_000020.vti") != std::string::npos);
    CHECK(pvd.find("c_000030.vti") == std::string::npos);
    CHECK(pvd.find("c_000040.vti") != std::string::npos);
    CHECK(pvd.find("c_000020.vti") == pvd.rfind("c_000020.vti"));
    CHECK_FALSE(fs::exists(d.path / "vtk" / "c_000030.vti"));
    const std::string xdmf = slurp(d.path / "fields.xdmf");
    CHECK(xdmf.find("step_000030") == std::string::npos);
    CHECK(xdmf.find("step_000020") == xdmf.rfind("step_000020"));
    CHECK(xdmf.find("step_000000") < xdmf.find("step_000040"));
    CHECK(gf::io::h5_dataset_shape((d.path / "fields.h5").string(), "/steps/000040/u").size() == 2);
    CHECK_THROWS_AS(gf::io::h5_read_dataset((d.path / "fields.h5").string(), "/steps/000030/u"),
                    gf::IoError);
    CHECK_FALSE(fs::exists(d.path / ".fields.h5.partial"));
  }
}

// Issue 23: what a restart reads is refused when it is not a plain file (a
// device never ends, a pipe never opens), and the case text a checkpoint
// holds is checked as a case file's is.
TEST_CASE("a restart reads no device, pipe or looping case text", "[checkpoint]") {
  Dir d("devices");
  CHECK_THROWS_WITH(gf::io::read_checkpoint("/dev/zero"),
                    "cannot open HDF5 file '/dev/zero': it is not a regular file (a device, a "
                    "pipe or a socket)");
  fs::create_symlink("/dev/zero", d.path / "log.csv");
  gf::io::CsvLog log(d.path / "log.csv", {"step", "x"});
  CHECK_THROWS_WITH(log.resume(30, false),
                    "cannot read '" + (d.path / "log.csv").string() +
                        "': it is not a regular file (a device, a pipe or a socket)");
  const gf::Case c = gf::test::load(kCase);
  Checkpoint ck = checkpoint_of(c);
  ck.case_yaml = "heat: &h {alpha: [*h]}\n";
  CHECK(gf::io::checkpoint_mismatch(ck, c) ==
        "the case in the checkpoint cannot be read: case:1:19: alias *h is inside the node it "
        "names (a loop)");
}

TEST_CASE("a checkpoint without the fields its case needs, with a negative step or NaN is refused",
          "[checkpoint]") {
  Dir d("faults");
  gf::Case c = gf::test::load(kCase);
  const std::vector<double> u(12, 0.5);
  const fs::path path = d.path / "checkpoint.h5";
  auto read_error = [&](const Checkpoint& ck) {
    gf::io::write_checkpoint(path, ck);
    try {
      gf::io::read_checkpoint(path);
    } catch (const gf::IoError& e) {
      CHECK_THAT(e.what(), Catch::Contains(path.string()));
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // No /fields/u: what restore() would fail on is found with the other mismatches
  // (--restart then exits 2 before anything is written).
  Checkpoint none = checkpoint_of(c);
  none.fields = {{"v", raw(u, c.precision)}};
  CHECK(gf::io::checkpoint_mismatch(none, c) == "the checkpoint has no field 'u' (/fields/u)");
  Checkpoint negative = checkpoint_of(c);
  negative.fields = {{"u", raw(u, c.precision)}};
  negative.step = -5;
  CHECK_THAT(read_error(negative), Catch::Contains("step -5 is negative"));
  Checkpoint nan = checkpoint_of(c);
  std::vector<double> bad = u;
  bad[7] = std::numeric_limits<double>::infinity();
  nan.fields = {{"u", raw(bad, c.precision)}};
  CHECK_THAT(read_error(nan), Catch::Contains("dataset '/fields/u' holds a NaN or Inf (value 7 of 12)"));
  Checkpoint good = checkpoint_of(c);
  good.fields = {{"u", raw(u, c.precision)}};
  CHECK(read_error(good) == "(no error)");
}
