// gridforge bench's pieces on the CPU: the cases it times, the bytes it
// counts, the timing loop, the row arithmetic and its files, and the two
// reference loads (copy, triad).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "kernels/backend.hpp"
#include "solvers/bench.hpp"
#include "solvers/laplace.hpp"
#include "solvers/stepper.hpp"

using namespace gf;

namespace {

// stop_ms() answers half a millisecond per step advanced since start().
struct FakeClock {
  std::int64_t advanced = 0;
};
class FakeTimer final : public Timer {
 public:
  explicit FakeTimer(FakeClock& c) : c_(c) {}
  void start() override { at_start_ = c_.advanced; }
  double stop_ms() override { return 0.5 * double(c_.advanced - at_start_); }

 private:
  FakeClock& c_;
  std::int64_t at_start_ = 0;
};

template <class T>
void check_bench_case(const std::string& workload, int dims) {
  BenchItem it{workload, default_bench_method(workload, dims), dims, cube_shape(dims, 12),
               precision_of<T>()};
  const Case c = bench_case(it);
  INFO(workload << " " << dims << "D float" << 8 * sizeof(T));
  CHECK(c.grid.ndim == dims);
  CHECK(c.grid.size() == (dims == 2 ? 144 : 1728));
  CHECK(c.precision == precision_of<T>());
  auto cpu = make_cpu_backend<T>();
  TimingPlan plan;
  plan.steps = 3;
  plan.repetitions = 2;
  const BenchTiming t = time_bench_case<T>(c, *cpu, plan);
  CHECK(t.steps == 3);
  REQUIRE(t.ms_per_step.size() == 2);
  for (double ms : t.ms_per_step) CHECK(ms > 0);
  CHECK(t.points == c.grid.size());
  // T_eff: u read once and written once a step (wave: uⁿ⁻¹ read as well); the
  // same count as timing.json's.
  const std::size_t fields = workload == "wave" ? 3 : 2;
  CHECK(t.bytes_per_step == fields * std::size_t(c.grid.size()) * sizeof(T));
}

}  // namespace

TEST_CASE("bench cases load for every workload and count the fields a step moves", "[bench]") {
  for (const std::string& w : bench_workloads())
    for (int dims : {2, 3}) {
      check_bench_case<float>(w, dims);
      check_bench_case<double>(w, dims);
    }
  CHECK(default_bench_method("stencil", 2) == "star5");
  CHECK(default_bench_method("stencil", 3) == "star7");
  CHECK(default_bench_method("laplace", 3) == "jacobi");
  CHECK(default_bench_method("heat", 3) == "explicit");
}

TEST_CASE("bench cases keep their values in [1, 2] (no subnormals on the CPU)", "[bench]") {
  for (const std::string& w : {"heat", "stencil"})
    for (const std::string& preset : {std::string(""), std::string("star13"), std::string("box27")}) {
      if (w == std::string("heat") && !preset.empty()) continue;
      BenchItem it{w, preset.empty() ? default_bench_method(w, 3) : preset, 3,
                   cube_shape(3, 9), Precision::Float32};
      const Case c = bench_case(it);
      auto cpu = make_cpu_backend<float>();
      auto s = make_stepper<float>(c, *cpu);
      s->advance(200);
      const FieldStats st = cpu->vec().stats(s->field());
      INFO(w << " " << it.method);
      CHECK(st.nonfinite == 0);
      CHECK(st.min >= 1.0 - 1e-3);
      CHECK(st.max <= 2.0 + 1e-3);
      CHECK(st.max > st.min);  // the walls' value has come in: not a constant field
    }
  const Case c = bench_case({"laplace", "jacobi", 2, cube_shape(2, 17), Precision::Float64});
  auto cpu = make_cpu_backend<double>();
  LaplaceSolver<double> s(c, *cpu);
  s.sweep(300);
  const FieldStats st = cpu->vec().stats(s.field());
  CHECK(st.min >= 1.0);
  CHECK(st.max <= 2.0);
}

TEST_CASE("LaplaceSolver::sweep runs the sweeps iterate runs, without the check", "[bench]") {
  const Case c = bench_case({"laplace", "jacobi", 2, cube_shape(2, 15), Precision::Float64});
  auto cpu = make_cpu_backend<double>();
  LaplaceSolver<double> a(c, *cpu), b(c, *cpu);
  a.iterate(7);
  b.sweep(7);
  CHECK(a.iterations() == 7);
  CHECK(b.iterations() == 7);
  std::vector<double> ha(a.field().size()), hb(b.field().size());
  cpu->download(a.field(), ha.data());
  cpu->download(b.field(), hb.data());
  CHECK(ha == hb);
  CHECK_FALSE(b.finished());  // sweep sets no status
}

TEST_CASE("bench timing: warm-up, auto steps, repetitions", "[bench]") {
  FakeClock clock;
  FakeTimer timer(clock);
  auto advance = [&](std::int64_t n) { clock.advanced += n; };
  TimingPlan plan;  // auto: 100 ms a repetition, 5 repetitions
  BenchTiming t = time_steps(advance, timer, plan);
  CHECK(t.steps == 200);  // 100 ms / 0.5 ms
  REQUIRE(t.ms_per_step.size() == 5);
  for (double ms : t.ms_per_step) CHECK(ms == Approx(0.5));
  // 1 warm-up step, 1 sizing step, 1 warm-up repetition, 5 timed ones
  CHECK(clock.advanced == 1 + 1 + 200 + 5 * 200);

  clock.advanced = 0;
  plan.steps = 3;
  plan.repetitions = 2;
  t = time_steps(advance, timer, plan);
  CHECK(t.steps == 3);
  CHECK(t.ms_per_step.size() == 2);
  CHECK(clock.advanced == 1 + 1 + 3 + 2 * 3);

  // a step longer than a repetition: one step a repetition, no warm-up repetition
  clock.advanced = 0;
  plan = TimingPlan{};
  plan.target_ms = 0.2;
  t = time_steps(advance, timer, plan);
  CHECK(t.steps == 1);
  CHECK(clock.advanced == 1 + 1 + 5);
  plan.target_ms = 1e9;  // capped
  t = time_steps(advance, timer, plan);
  CHECK(t.steps == plan.max_steps);

  // passes of 3 steps (time_block 3): every advance whole passes
  clock.advanced = 0;
  plan = TimingPlan{};
  plan.target_ms = 0.2;
  std::vector<std::int64_t> calls;
  t = time_steps([&](std::int64_t n) { calls.push_back(n); clock.advanced += n; }, timer, plan, 3);
  CHECK(t.steps == 3);
  for (std::int64_t n : calls) CHECK(n == 3);
  plan.target_ms = 100;  // 200 steps → 201, a whole number of passes
  t = time_steps(advance, timer, plan, 3);
  CHECK(t.steps == 201);
  for (double ms : t.ms_per_step) CHECK(ms == Approx(0.5));
}

TEST_CASE("bench rows: median, points/s, T_eff GB/s, fraction, speed-up", "[bench]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({}) == 0);

  BenchTiming t;
  t.steps = 10;
  t.ms_per_step = {2.0, 1.0, 3.0};
  t.points = 1'000'000;
  t.bytes_per_step = 8'000'000;
  const Bandwidth triad{"triad", 8.0, 1 << 20, 10};
  const BenchItem it{"heat", "explicit", 3, cube_shape(3, 100), Precision::Float32};
  BenchRow cpu = make_bench_row(it, "cpu", "cpu: test", t, triad);
  CHECK(cpu.ms_per_step == 2.0);
  CHECK(cpu.ms_per_step_min == 1.0);
  CHECK(cpu.ms_per_step_max == 3.0);
  CHECK(cpu.repetitions == 3);
  CHECK(cpu.points_per_s == Approx(5e8));
  CHECK(cpu.effective_GBps == Approx(4.0));  // 8e6 B / 2 ms
  CHECK(cpu.fraction_of_bandwidth == Approx(0.5));
  REQUIRE(cpu.speedup_vs_cpu);
  CHECK(*cpu.speedup_vs_cpu == 1.0);

  t.ms_per_step = {0.1};
  const Bandwidth copy{"copy", 1000.0, 1 << 30, 20};
  BenchRow gpu = make_bench_row(it, "cuda", "GPU", t, copy);
  CHECK_FALSE(gpu.speedup_vs_cpu);
  CHECK(gpu.effective_GBps == Approx(80.0));
  CHECK(gpu.fraction_of_bandwidth == Approx(0.08));
  BenchItem other = it;
  other.precision = Precision::Float64;  // no CPU row for it
  BenchRow lone = make_bench_row(other, "cuda", "GPU", t, copy);
  std::vector<BenchRow> rows = {cpu, gpu, lone};
  fill_speedups(rows);
  REQUIRE(rows[1].speedup_vs_cpu);
  CHECK(*rows[1].speedup_vs_cpu == Approx(20.0));
  CHECK_FALSE(rows[2].speedup_vs_cpu);

  // every field in JSON, the same columns in the CSV, one line a row
  for (const BenchRow& r : rows) {
    const nlohmann::json j = bench_row_json(r);
    for (const std::string& f : bench_row_fields()) CHECK(j.contains(f));
    CHECK(j.size() == bench_row_fields().size());
  }
  CHECK(bench_row_json(rows[2])["speedup_vs_cpu"].is_null());
  CHECK(bench_row_json(rows[0])["grid"] == "100^3");
  CHECK(bench_row_json(rows[0])["size"] == 100);
  CHECK(bench_row_json(rows[0])["shape"] == nlohmann::json::array({100, 100, 100}));
  const std::string csv = bench_csv(rows);
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::string want;
  for (const std::string& f : bench_row_fields()) want += (want.empty() ? "" : ",") + f;
  CHECK(header == want);
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    CHECK(std::count(line.begin(), line.end(), ',') == long(bench_row_fields().size()) - 1);
  }
  CHECK(lines == 3);

  const std::string table = bench_table(rows);
  CHECK(table.rfind("workload", 0) == 0);
  CHECK(table.find("vs cpu") != std::string::npos);
  CHECK(table.find("20x") != std::string::npos);
  CHECK(table.find("100^3") != std::string::npos);
}

TEST_CASE("bench takes non-cubic grids: the case, the row's shape, CSV and table", "[bench]") {
  CHECK(cube_shape(3, 7) == std::vector<std::int64_t>{7, 7, 7});
  CHECK(cube_shape(2, 9) == std::vector<std::int64_t>{9, 9});
  // every workload, 2D and 3D, on a box: the grid has the shape, and the spacing of its
  // longest axis (unit length) on every axis
  for (const std::string& w : bench_workloads())
    for (int dims : {2, 3}) {
      const std::vector<std::int64_t> shape =
          dims == 3 ? std::vector<std::int64_t>{13, 9, 7} : std::vector<std::int64_t>{17, 6};
      const BenchItem it{w, default_bench_method(w, dims), dims, shape, Precision::Float32};
      CHECK_FALSE(it.cubic());
      CHECK(it.size() == shape[0]);
      const Case c = bench_case(it);
      INFO(w << " " << dims << "D");
      REQUIRE(c.grid.ndim == dims);
      for (int a = 0; a < dims; ++a) {
        CHECK(c.grid.n[a] == shape[a]);
        CHECK(c.grid.h[a] == Approx(1.0 / double(shape[0] - 1)));
      }
      CHECK(c.grid.size() == it.points());
      auto cpu = make_cpu_backend<float>();
      TimingPlan plan;
      plan.steps = 2;
      plan.repetitions = 1;
      const BenchTiming t = time_bench_case<float>(c, *cpu, plan);
      CHECK(t.points == it.points());
      CHECK(t.bytes_per_step == (w == "wave" ? 3u : 2u) * std::size_t(it.points()) * 4);
    }
  // the box presets need equal spacing; the stencil's coeff is stable: values stay in [1, 2]
  {
    const Case c = bench_case({"stencil", "box27", 3, {33, 6, 9}, Precision::Float32});
    auto cpu = make_cpu_backend<float>();
    auto s = make_stepper<float>(c, *cpu);
    s->advance(300);
    const FieldStats st = cpu->vec().stats(s->field());
    CHECK(st.nonfinite == 0);
    CHECK(st.min >= 1.0 - 1e-3);
    CHECK(st.max <= 2.0 + 1e-3);
  }
  CHECK_THROWS_AS(bench_case({"heat", "explicit", 3, {9, 9}, Precision::Float32}),
                  std::logic_error);

  BenchTiming t;
  t.steps = 10;
  t.ms_per_step = {1.0};
  t.points = 509 * 263 * 391;
  t.bytes_per_step = 2 * std::size_t(t.points) * 4;
  const Bandwidth triad{"triad", 8.0, 1 << 20, 10};
  const BenchItem box{"heat", "explicit", 3, {509, 263, 391}, Precision::Float32};
  BenchItem cube = box;
  cube.shape = cube_shape(3, 509);  // the same nx: not the same grid
  std::vector<BenchRow> rows = {make_bench_row(box, "cpu", "cpu: test", t, triad),
                                make_bench_row(cube, "cuda", "GPU", t, triad)};
  fill_speedups(rows);
  CHECK_FALSE(rows[1].speedup_vs_cpu);  // no CPU row of its shape

  const nlohmann::json j = bench_row_json(rows[0]);
  CHECK(j["shape"] == nlohmann::json::array({509, 263, 391}));
  CHECK(j["size"] == 509);  // nx, for readers from before shape
  CHECK(j["grid"] == "509x263x391");
  CHECK(j["points"] == 509 * 263 * 391);
  CHECK(bench_row_json(rows[1])["grid"] == "509^3");
  const BenchItem flat{"laplace", "jacobi", 2, {16385, 1025}, Precision::Float64};
  CHECK(bench_row_json(make_bench_row(flat, "cpu", "cpu", t, triad))["shape"] ==
        nlohmann::json::array({16385, 1025}));

  // the CSV's shape column (the poisson rows' keys after it): 509x263x391
  const std::string csv = bench_csv(rows);
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  const auto column = [](const std::string& text, std::size_t n) {  // no quoted commas here
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) at = text.find(',', at) + 1;
    return text.substr(at, text.find(',', at) - at);
  };
  const auto& fields = bench_row_fields();
  const std::size_t shape_col = std::size_t(std::find(fields.begin(), fields.end(), "shape") - fields.begin());
  CHECK(shape_col == 27);  // where it has been since issue 21
  CHECK(column(header, shape_col) == "shape");
  std::getline(in, line);
  CHECK(column(line, shape_col) == "509x263x391");
  CHECK(line.find(",509,") != std::string::npos);  // size
  std::getline(in, line);
  CHECK(column(line, shape_col) == "509x509x509");

  // the table's size column is the shape, as wide as the widest
  const std::string table = bench_table(rows);
  std::istringstream tin(table);
  std::string head, first, second;
  std::getline(tin, head);
  std::getline(tin, first);
  std::getline(tin, second);
  CHECK(first.find(" 509x263x391 ") != std::string::npos);
  CHECK(second.find(" 509^3 ") != std::string::npos);
  CHECK(head.find("device") == first.find("cpu"));
  CHECK(head.find("device") == second.find("cuda"));
  rows[1].item.workload = "stencil";  // a label wider than 16: stencil/star7/tb2
  rows[1].item.method = "star7";
  rows[1].item.time_block = 2;
  std::istringstream wide(bench_table(rows));
  std::getline(wide, head);
  std::getline(wide, first);
  std::getline(wide, second);
  CHECK(second.rfind("stencil/star7/tb2  3 ", 0) == 0);
  CHECK(head.find("dims") == first.find("3 "));
  CHECK(head.find("size") == second.find("509^3"));
}

TEMPLATE_TEST_CASE("CPU copy and triad write every point", "[bench]", float, double) {
  using T = TestType;
  auto cpu = make_cpu_backend<T>();
  Grid g;
  g.n[0] = 1003;
  Field<T> a = cpu->make_field(g, "a"), b = cpu->make_field(g, "b"), c = cpu->make_field(g, "c");
  std::vector<T> hb(g.n[0]), hc(g.n[0]), poison(g.n[0], std::numeric_limits<T>::quiet_NaN());
  for (std::size_t i = 0; i < hb.size(); ++i) {
    hb[i] = T(i % 17) - T(3);
    hc[i] = T(0.25) * T(i % 5);
  }
  cpu->upload(hb.data(), b);
  cpu->upload(hc.data(), c);
  cpu->upload(poison.data(), a);
  cpu->vec().triad(a, b, T(2), c);
  std::vector<T> ha(hb.size());
  cpu->download(a, ha.data());
  for (std::size_t i = 0; i < ha.size(); ++i) REQUIRE(ha[i] == hb[i] + T(2) * hc[i]);
  cpu->upload(poison.data(), a);
  cpu->copy(b, a);
  cpu->download(a, ha.data());
  CHECK(ha == hb);

  const Bandwidth bw = measure_triad_bandwidth<T>(*cpu, 1 << 20, 3);
  CHECK(bw.kind == "triad");
  CHECK(bw.GBps > 0);
  CHECK(bw.array_bytes == (std::size_t(1) << 20) / sizeof(T) * sizeof(T));
  CHECK(bw.repetitions == 3);
  const Bandwidth cp = measure_copy_bandwidth<T>(*cpu, 1 << 20, 2);
  CHECK(cp.kind == "copy");
  CHECK(cp.GBps > 0);
}

TEST_CASE("bench array sizes", "[bench]") {
  CHECK(triad_array_bytes() >= (std::size_t(64) << 20));
  CHECK(copy_array_bytes(std::size_t(80) << 30) == (std::size_t(2) << 30));
  CHECK(copy_array_bytes(std::size_t(4) << 30) == (std::size_t(1) << 30));
}
