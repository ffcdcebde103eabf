// The run driver (solvers/drive.cpp) on a driven thing of the tests' own: the
// stops it makes, what it writes at each, and a Ctrl-C that cuts an advance
// short before its first step.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "case_test_util.hpp"
#include "core/interrupt.hpp"
#include "io/checkpoint.hpp"
#include "kernels/backend.hpp"
#include "solvers/drive.hpp"

using namespace gf;
namespace fs = std::filesystem;

namespace {

// Counts to `last`, the field holding the count at every point. Records the
// advances it was asked for; raises SIGINT in the advance that starts at
// `interrupt_at` and returns from it without a step (as a stepper does when
// the signal comes before its first step).
class Counter final : public Driven<double> {
 public:
  Counter(Backend<double>& be, const Grid& g, std::int64_t last, std::int64_t interrupt_at)
      : be_(be), u_(be.make_field(g, "u")), last_(last), interrupt_at_(interrupt_at) {
    fill();
  }
  std::int64_t count() const override { return n_; }
  std::int64_t last() const override { return last_; }
  bool finished() const override { return n_ >= last_; }
  void advance(std::int64_t k) override {
    advances.push_back(k);
    if (n_ == interrupt_at_ && !raised_) {
      raised_ = true;
      std::raise(SIGINT);
      return;
    }
    n_ += k;
    fill();
  }
  double time() const override { return 0.5 * double(n_); }
  const Field<double>& field() const override { return u_; }
  Observation observe() override {
    ++observations;
    return {{double(n_), time(), 0.0, double(n_), double(n_), double(n_)}, "", ""};
  }
  double upload_ms() const override { return 0; }
  std::size_t bytes_per_count() const override { return 16; }
  void save(io::Checkpoint& ck) override { ck.step = n_; }
  void restore(const io::Checkpoint& ck) override { n_ = ck.step; }
  std::string stopped_at() const override { return "count " + std::to_string(n_); }
  void add_timing(nlohmann::json&, std::int64_t, bool) const override {}

  std::vector<std::int64_t> advances;
  int observations = 0;

 private:
  void fill() {
    std::vector<double> v(std::size_t(u_.grid().size()), double(n_));
    be_.upload(v.data(), u_);
  }
  Backend<double>& be_;
  Field<double> u_;
  std::int64_t n_ = 0, last_, interrupt_at_;
  bool raised_ = false;
};

Case counter_case(const std::string& output) {
  return test::load("workload: heat\nprecision: float64\ngrid: {dims: [6, 5]}\n"
                    "initial: {value: 0}\nheat: {alpha: 0.01, steps: 10}\n"
                    "output: {" + output + "}\n");
}

std::vector<std::string> lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

fs::path fresh(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("the driver stops where a schedule is due and writes each output once", "[drive]") {
  const Case c = counter_case("every: 4, formats: [hdf5], check_every: 3");
  auto be = make_cpu_backend<double>();
  Counter run(*be, c.grid, 10, -1);
  DrivePlan plan;
  plan.log_columns = {"step", "time", "wall_s", "min", "max", "mean"};
  plan.output = Schedule::at_steps({0, 4, 8, 10});
  plan.check = Schedule::every_k(3);
  plan.progress_total = 10;
  const fs::path dir = fresh("gf_test_drive_stops");
  const RunOptions opts{dir, false, "test", nullptr};
  drive<double>(c, *be, opts, run, plan, std::chrono::steady_clock::now());
  // stops 0, 3, 4, 6, 8, 9, 10
  CHECK(run.advances == std::vector<std::int64_t>{3, 1, 2, 2, 1, 1});
  CHECK(run.observations == 7);
  // rows at the outputs and the end only
  CHECK(lines(dir / "log.csv") == std::vector<std::string>{"step,time,wall_s,min,max,mean",
                                                            "0,0,0,0,0,0", "4,2,0,4,4,4",
                                                            "8,4,0,8,8,8", "10,5,0,10,10,10"});
}

TEST_CASE("Ctrl-C that cuts an advance short before its first step writes the stop once",
          "[drive]") {
  // The stop at 6 is an output; the advance from it is interrupted at once,
  // so the loop comes to 6 again, now at the end: before, it wrote the output
  // of step 6 a second time and failed ("steps must increase").
  install_interrupt_handlers();
  const Case c = counter_case("every: 2, formats: [vtk, hdf5], checkpoint_every: 100");
  auto be = make_cpu_backend<double>();
  Counter run(*be, c.grid, 10, 6);
  DrivePlan plan;
  plan.log_columns = {"step", "time", "wall_s", "min", "max", "mean"};
  plan.output = Schedule::at_steps({0, 2, 4, 6, 8, 10});
  plan.checkpoint = Schedule::every_k(100);
  plan.progress_total = 10;
  const fs::path dir = fresh("gf_test_drive_interrupt");
  const RunOptions opts{dir, false, "test", nullptr};
  CHECK_THROWS_AS(drive<double>(c, *be, opts, run, plan, std::chrono::steady_clock::now()),
                  InterruptedError);
  CHECK(run.count() == 6);
  CHECK(lines(dir / "log.csv") == std::vector<std::string>{"step,time,wall_s,min,max,mean",
                                                            "0,0,0,0,0,0", "2,1,0,2,2,2",
                                                            "4,2,0,4,4,4", "6,3,0,6,6,6"});
  CHECK(fs::exists(dir / "timing.json"));
  CHECK(fs::exists(dir / "checkpoint.h5"));
  CHECK(io::read_checkpoint(dir / "checkpoint.h5").step == 6);
  int vti = 0;
  for (const auto& e : fs::directory_iterator(dir / "vtk")) vti += e.path().extension() == ".vti";
  CHECK(vti == 4);  // 0, 2, 4, 6
}
