#include "solvers/bench.hpp"
#include "solvers/bench_solve.hpp"
#include "solvers/registry.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "io/workload.hpp"
#include "core/threads.hpp"
#include "kernels/device.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/stepper.hpp"

namespace gf {

namespace {

std::string yaml_list(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t a = 0; a < v.size(); ++a) {
    if (a) s += ", ";
    s += std::to_string(v[a]);
  }
  s += ']';
  return s;
}

// The case's name: bench-heat-3d-64 for a cube, bench-heat-3d-509x263x391 otherwise.
std::string shape_name(const BenchItem& it) {
  if (it.cubic()) return std::to_string(it.size());
  std::string s;
  for (std::int64_t n : it.shape) {
    if (!s.empty()) s += 'x';  // two steps: GCC 12's false -Wrestrict (grid.hpp)
    s += std::to_string(n);
  }
  return s;
}

Grid grid_of(const BenchItem& it) {
  Grid g;
  g.ndim = it.dims;
  for (int a = 0; a < it.dims && a < int(it.shape.size()); ++a) g.n[a] = it.shape[a];
  return g;
}

std::string workload_label(const BenchItem& it) {
  std::string s = it.workload;
  if (workload_entry(workload_of(it.workload)).bench_label_method) s += "/" + it.method;
  if (it.time_block > 1) s += fmt::format("/tb{}", it.time_block);
  if (it.width > 0) s += fmt::format("@{}x{}", it.width, it.height);
  return s;
}

}  // namespace

bool BenchItem::cubic() const {
  return std::all_of(shape.begin(), shape.end(), [&](std::int64_t n) { return n == shape[0]; });
}

std::int64_t BenchItem::points() const {
  std::int64_t p = 1;
  for (std::int64_t n : shape) p *= n;
  return p;
}

std::vector<std::int64_t> cube_shape(int dims, std::int64_t n) {
  return std::vector<std::int64_t>(std::size_t(std::max(dims, 0)), n);
}

Workload workload_of(const std::string& name) {
  for (const WorkloadInfo& w : workloads())
    if (name == w.name) return w.workload;
  throw std::logic_error("bench: unknown workload " + name);
}

const std::vector<std::string>& bench_workloads() {
  static const std::vector<std::string> w = [] {
    std::vector<std::string> v;
    // raymarch's rows (a mode and an image each) and pde's are asked for by name only
    for (const WorkloadInfo& k : workloads())
      if (workload_entry(k.workload).bench_method && workload_entry(k.workload).bench_default)
        v.push_back(std::string(k.name));
    return v;
  }();
  return w;
}

std::string default_bench_method(const std::string& workload, int dims) {
  return workload_entry(workload_of(workload)).bench_method(dims);
}

Case bench_case(const BenchItem& it) {
  if (it.dims < 1 || it.dims > 3) throw std::logic_error("bench_case: dims must be 1, 2 or 3");
  if (int(it.shape.size()) != it.dims)
    throw std::logic_error("bench_case: shape has " + std::to_string(it.shape.size()) +
                           " axes, dims is " + std::to_string(it.dims));
  const WorkloadEntry& e = workload_entry(workload_of(it.workload));
  if (!e.bench_section) throw std::logic_error("bench_case: no bench rows for " + it.workload);
  const std::string body = e.bench_section(it);
  // A cube (square) of unit extent; another box has the spacing of its longest
  // axis (of most points, unit length) on every axis, as the box presets need.
  std::string lengths = "extent: " + yaml_list(cube_shape(it.dims, 1));
  if (!it.cubic()) {
    const std::int64_t most = *std::max_element(it.shape.begin(), it.shape.end());
    const std::string h = fmt::format("{:.17g}", 1.0 / double(most - 1));
    lengths = "spacing: [" + h;
    for (int a = 1; a < it.dims; ++a) {
      lengths += ", ";
      lengths += h;
    }
    lengths += ']';
  }
  if (it.workload == "raymarch") {
    const std::string text =
        fmt::format("name: bench-raymarch-{}-{}x{}-{}\nworkload: raymarch\nprecision: {}\n"
                    "grid: {{dims: {}, {}}}\n{}",
                    it.method, it.width, it.height, shape_name(it), to_string(it.precision),
                    yaml_list(it.shape), lengths, body);
    return prepare_case(load_case_text(text, "bench case"));
  }
  const std::string text = fmt::format(
      "name: bench-{}-{}d-{}\n"
      "workload: {}\n"
      "precision: {}\n"
      "grid: {{dims: {}, {}}}\n"
      "initial: {{value: 1}}\n"
      "boundary: {{default: {{type: dirichlet, value: 2}}}}\n"
      "{}"
      "output: {{every: 0}}\n",
      it.workload, it.dims, shape_name(it), it.workload, to_string(it.precision),
      yaml_list(it.shape), lengths, body);
  return prepare_case(load_case_text(text, "bench case"));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

BenchTiming time_steps(const std::function<void(std::int64_t)>& advance, Timer& timer,
                       const TimingPlan& plan, int granule) {
  const std::int64_t g = std::max(granule, 1);
  BenchTiming t;
  timer.start();
  advance(g);  // first touch of the pages, kernels' lazy loading, constant uploads
  timer.stop_ms();
  timer.start();
  advance(g);
  const double one_ms = timer.stop_ms() / double(g);
  t.steps = plan.steps;
  if (t.steps <= 0) {
    const double want = plan.target_ms / std::max(one_ms, 1e-4);
    t.steps = std::clamp<std::int64_t>(std::int64_t(std::ceil(want)), 1, plan.max_steps);
  }
  t.steps = (t.steps + g - 1) / g * g;  // whole passes
  // A short repetition gets one more run, untimed, to settle clocks and
  // caches; a long one (a big grid on the CPU) has had its two warm-up steps.
  if (t.steps > 1 && double(t.steps) * one_ms <= 2 * plan.target_ms) {
    timer.start();
    advance(t.steps);
    timer.stop_ms();
  }
  for (int r = 0; r < std::max(plan.repetitions, 1); ++r) {
    timer.start();
    advance(t.steps);
    t.ms_per_step.push_back(timer.stop_ms() / double(t.steps));
  }
  return t;
}

template <class T>
BenchTiming time_bench_case(const Case& c, Backend<T>& backend, const TimingPlan& plan) {
  auto timer = backend.make_timer();
  BenchTiming t;
  if (c.workload == Workload::Raymarch) return time_raymarch_frames<T>(c, backend, plan);
  if (workload_entry(c.workload).run == RunKind::Solve) {
    LaplaceSolver<T> solver(c, backend);
    t = time_steps([&](std::int64_t n) { solver.sweep(n); }, *timer, plan, solver.time_block());
    t.bytes_per_step = solver.bytes_per_iteration();
  } else {
    const std::unique_ptr<Stepper<T>> stepper = make_stepper<T>(c, backend);
    t = time_steps([&](std::int64_t n) { stepper->advance(n); }, *timer, plan,
                   stepper->time_block());
    t.bytes_per_step = stepper->bytes_per_step();
  }
  t.points = c.grid.size();
  return t;
}

template <class T>
Bandwidth measure_copy_bandwidth(Backend<T>& be, std::size_t array_bytes, int repetitions) {
  Grid g;
  g.n[0] = std::int64_t(std::max<std::size_t>(array_bytes / sizeof(T), 1));
  Field<T> a = be.make_field(g, "the copy bandwidth's source");
  Field<T> b = be.make_field(g, "the copy bandwidth's destination");
  // The values are not interpreted, but copying unwritten memory is what
  // compute-sanitizer's initcheck reports, so the source is written first.
  {
    const std::vector<T> ones(a.size(), T(1));
    be.upload(ones.data(), a);
  }
  auto timer = be.make_timer();
  be.copy(a, b);  // warm-up
  be.synchronize();
  std::vector<double> ms;
  for (int r = 0; r < std::max(repetitions, 1); ++r) {
    timer->start();
    be.copy(a, b);
    ms.push_back(timer->stop_ms());
  }
  const double s = median(ms) / 1e3;
  return {"copy", s > 0 ? 2.0 * double(a.bytes()) / s / 1e9 : 0.0, a.bytes(), int(ms.size())};
}

template <class T>
Bandwidth measure_triad_bandwidth(Backend<T>& be, std::size_t array_bytes, int repetitions) {
  Grid g;
  g.n[0] = std::int64_t(std::max<std::size_t>(array_bytes / sizeof(T), 1));
  Field<T> a = be.make_field(g, "the triad's a");
  Field<T> b = be.make_field(g, "the triad's b");
  Field<T> c = be.make_field(g, "the triad's c");
  {
    const std::vector<T> ones(b.size(), T(1));
    be.upload(ones.data(), b);
    be.upload(ones.data(), c);
  }
  auto timer = be.make_timer();
  be.vec().triad(a, b, T(0.5), c);  // warm-up, and the first touch of a
  be.synchronize();
  std::vector<double> ms;
  for (int r = 0; r < std::max(repetitions, 1); ++r) {
    timer->start();
    be.vec().triad(a, b, T(0.5), c);
    ms.push_back(timer->stop_ms());
  }
  const double s = median(ms) / 1e3;
  return {"triad", s > 0 ? 3.0 * double(a.bytes()) / s / 1e9 : 0.0, a.bytes(), int(ms.size())};
}

std::size_t triad_array_bytes() {
  const std::size_t MiB = std::size_t(1) << 20;
  std::size_t b = std::max(last_level_cache_bytes(), 64 * MiB);
  const std::size_t avail = host_memory_available();
  if (avail > 0) b = std::min(b, avail / 8);
  return std::max(b, MiB);
}

std::size_t copy_array_bytes(std::size_t device_free) {
  const std::size_t GiB = std::size_t(1) << 30;
  std::size_t b = 2 * GiB;
  if (device_free > 0) b = std::min(b, device_free / 4);
  return std::max(b, std::size_t(1) << 20);
}

BenchRow make_bench_row(const BenchItem& item, const std::string& device,
                        const std::string& device_name, const BenchTiming& t,
                        const Bandwidth& bw) {
  BenchRow r;
  r.item = item;
  r.device = device;
  r.device_name = device_name;
  r.points = t.points;
  r.steps = t.steps;
  r.repetitions = int(t.ms_per_step.size());
  r.ms_per_step = median(t.ms_per_step);
  if (!t.ms_per_step.empty()) {
    const auto [lo, hi] = std::minmax_element(t.ms_per_step.begin(), t.ms_per_step.end());
    r.ms_per_step_min = *lo;
    r.ms_per_step_max = *hi;
  }
  r.bytes_per_step = t.bytes_per_step;
  const double s = r.ms_per_step / 1e3;
  r.points_per_s = s > 0 ? double(t.points) / s : 0.0;
  r.effective_GBps = s > 0 ? double(t.bytes_per_step) / s / 1e9 : 0.0;
  r.bandwidth = bw;
  r.fraction_of_bandwidth = bw.GBps > 0 ? r.effective_GBps / bw.GBps : 0.0;
  if (device == "cpu") r.speedup_vs_cpu = 1.0;
  if (t.rays > 0 && s > 0) {
    r.rays_per_s = double(t.rays) / s;
    r.samples_per_s = t.samples / s;
  }
  return r;
}

void fill_speedups(std::vector<BenchRow>& rows) {
  auto same = [](const BenchItem& a, const BenchItem& b) {
    return a.workload == b.workload && a.method == b.method && a.dims == b.dims &&
           a.shape == b.shape && a.precision == b.precision && a.width == b.width &&
           a.height == b.height;
  };
  for (BenchRow& r : rows) {
    if (r.device == "cpu") continue;
    r.speedup_vs_cpu.reset();
    for (const BenchRow& c : rows) {
      if (c.device != "cpu" || !same(c.item, r.item) || bool(c.solve) != bool(r.solve)) continue;
      // a solve: the times to solution, when both converged
      if (r.solve && r.solve->converged && c.solve->converged && r.solve->solve_s > 0)
        r.speedup_vs_cpu = c.solve->solve_s / r.solve->solve_s;
      else if (!r.solve && r.ms_per_step > 0)
        r.speedup_vs_cpu = c.ms_per_step / r.ms_per_step;
    }
  }
}

const std::vector<std::string>& bench_row_fields() {
  static const std::vector<std::string> f = {
      "workload",       "method",          "dims",           "size",
      "grid",           "points",          "device",         "device_name",
      "precision",      "steps",           "repetitions",    "ms_per_step",
      "ms_per_step_min", "ms_per_step_max", "Gpts_per_s",     "points_per_s",
      "bytes_per_step", "effective_GBps",  "bandwidth_kind", "bandwidth_GBps",
      "fraction_of_bandwidth", "speedup_vs_cpu", "time_block", "threads",
      "image", "rays_per_s", "samples_per_s", "shape",
      // poisson rows (null on the others)
      "problem", "preconditioner", "cycle", "laplace_precision", "tolerance", "iterations",
      "setup_s", "time_to_solution_s", "residual", "converged", "reason", "max_error",
      "convergence_factor"};
  return f;
}

namespace {

// A poisson row's solve; the same keys, null, on every other row.
void add_solve_keys(nlohmann::json& j, const std::optional<SolveOutcome>& s) {
  const auto text = [](const std::string& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); };
  const nlohmann::json null;
  j["problem"] = s ? text(s->problem) : null;
  j["preconditioner"] = s ? text(s->preconditioner) : null;
  j["cycle"] = s ? text(s->cycle) : null;
  j["laplace_precision"] = s ? text(s->laplace_precision) : null;
  j["tolerance"] = s ? nlohmann::json(s->tolerance) : null;
  j["iterations"] = s ? nlohmann::json(s->iterations) : null;
  j["setup_s"] = s ? nlohmann::json(s->setup_s) : null;
  j["time_to_solution_s"] = s ? nlohmann::json(s->solve_s) : null;
  j["residual"] = s ? nlohmann::json(s->residual) : null;
  j["converged"] = s ? nlohmann::json(s->converged) : null;
  j["reason"] = s ? nlohmann::json(s->reason) : null;
  j["max_error"] = s ? nlohmann::json(s->max_error) : null;
  j["convergence_factor"] = s && s->factor ? nlohmann::json(*s->factor) : null;
}

}  // namespace

nlohmann::json bench_row_json(const BenchRow& r) {
  nlohmann::json j = {
      {"workload", r.item.workload},
      {"method", r.item.method},
      {"time_block", r.item.time_block},
      // a CPU row's loops: the threads its grid feeds (core/threads.hpp)
      {"threads", r.device != "cpu" ? nlohmann::json()
                  : r.item.width > 0
                      ? nlohmann::json(cpu::threads_for_rays(std::int64_t(r.item.width) * r.item.height))
                      : nlohmann::json(cpu::threads_for(r.points))},
      {"dims", r.item.dims},
      {"size", r.item.size()},  // nx, as before there were non-cubic rows
      {"shape", r.item.shape},
      {"grid", grid_of(r.item).shape_str()},
      {"points", r.points},
      {"device", r.device},
      {"device_name", r.device_name},
      {"precision", to_string(r.item.precision)},
      {"steps", r.steps},
      {"repetitions", r.repetitions},
      {"ms_per_step", r.ms_per_step},
      {"ms_per_step_min", r.ms_per_step_min},
      {"ms_per_step_max", r.ms_per_step_max},
      {"Gpts_per_s", r.points_per_s / 1e9},
      {"points_per_s", r.points_per_s},
      {"bytes_per_step", r.bytes_per_step},
      {"effective_GBps", r.effective_GBps},
      {"bandwidth_kind", r.bandwidth.kind},
      {"bandwidth_GBps", r.bandwidth.GBps},
      {"fraction_of_bandwidth", r.fraction_of_bandwidth},
      {"speedup_vs_cpu", nullptr},
      // raymarch rows: the image, rays and samples a second (null on others)
      {"image", r.item.width > 0 ? nlohmann::json{r.item.width, r.item.height} : nlohmann::json()},
      {"rays_per_s", r.rays_per_s ? nlohmann::json(*r.rays_per_s) : nlohmann::json()},
      {"samples_per_s", r.samples_per_s ? nlohmann::json(*r.samples_per_s) : nlohmann::json()},
  };
  if (r.speedup_vs_cpu) j["speedup_vs_cpu"] = *r.speedup_vs_cpu;
  add_solve_keys(j, r.solve);
  return j;
}

namespace {

// A CSV field: text quoted when it holds a comma or a quote; numbers in full;
// an array of numbers (the shape) joined by x: 509x263x391.
std::string csv_field(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_array()) {
    std::string s;
    for (const nlohmann::json& e : v) {
      if (!s.empty()) s += 'x';  // two steps: GCC 12's false -Wrestrict (grid.hpp)
      s += e.dump();
    }
    return s;
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  }
  if (v.is_number_float()) return fmt::format("{:.9g}", v.get<double>());
  return v.dump();
}

}  // namespace

std::string bench_csv(const std::vector<BenchRow>& rows) {
  const auto& fields = bench_row_fields();
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) s += ',';
    s += fields[i];
  }
  s += '\n';
  for (const BenchRow& r : rows) {
    const nlohmann::json j = bench_row_json(r);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) s += ',';
      s += csv_field(j[fields[i]]);
    }
    s += '\n';
  }
  return s;
}

namespace {

// The raymarch rows' table: a step is a frame; rays and samples a second.
std::string raymarch_table(const std::vector<BenchRow>& rows) {
  std::size_t work_w = 16, size_w = 8;
  for (const BenchRow& r : rows) {
    work_w = std::max(work_w, workload_label(r.item).size());
    size_w = std::max(size_w, grid_of(r.item).shape_str().size());
  }
  const std::string fmt_line = "{:<" + std::to_string(work_w) + "}  {:<" + std::to_string(size_w) +
                               "}  {:<6}  {:<7}  {:>10}  {:>9}  {:>11}  {:>7}\n";
  std::string s = fmt::format(fmt::runtime(fmt_line), "workload", "size", "device", "prec",
                              "ms/frame", "Grays/s", "Gsamples/s", "vs cpu");
  for (const BenchRow& r : rows)
    s += fmt::format(fmt::runtime(fmt_line), workload_label(r.item), grid_of(r.item).shape_str(),
                     r.device, to_string(r.item.precision), fmt::format("{:.4g}", r.ms_per_step),
                     fmt::format("{:.3g}", r.rays_per_s.value_or(0) / 1e9),
                     fmt::format("{:.3g}", r.samples_per_s.value_or(0) / 1e9),
                     r.speedup_vs_cpu ? fmt::format("{:.3g}x", *r.speedup_vs_cpu) : std::string("-"));
  return s;
}

// The table of the timed steps (heat, stencil, laplace, wave, pde).
std::string steps_table(const std::vector<BenchRow>& rows) {
  // The fraction's column says of what (SPEC's "of copy BW" for GPU rows);
  // a table of CPU and GPU rows says "of BW": copy for GPU rows, triad for CPU.
  bool any_cpu = false, any_gpu = false;
  for (const BenchRow& r : rows) (r.device == "cpu" ? any_cpu : any_gpu) = true;
  const char* of = any_cpu && any_gpu ? "of BW" : any_cpu ? "of triad BW" : "of copy BW";
  // the workload and size (512^3 for a cube, 509x263x391 otherwise) columns as
  // wide as their widest entry
  std::size_t work_w = 16, size_w = 8;
  for (const BenchRow& r : rows) {
    work_w = std::max(work_w, workload_label(r.item).size());
    size_w = std::max(size_w, grid_of(r.item).shape_str().size());
  }
  const std::string fmt_line = "{:<" + std::to_string(work_w) + "}  {:<4}  {:<" +
                               std::to_string(size_w) +
                               "}  {:<6}  {:<7}  {:>10}  {:>8}  {:>9}  {:>11}  {:>7}\n";
  std::string s = fmt::format(fmt::runtime(fmt_line), "workload", "dims", "size", "device", "prec",
                              "ms/step", "Gpts/s", "GB/s eff", of, "vs cpu");
  for (const BenchRow& r : rows) {
    const std::string speedup =
        r.speedup_vs_cpu ? fmt::format("{:.3g}x", *r.speedup_vs_cpu) : std::string("-");
    s += fmt::format(fmt::runtime(fmt_line), workload_label(r.item), r.item.dims,
                     grid_of(r.item).shape_str(), r.device, to_string(r.item.precision),
                     fmt::format("{:.4g}", r.ms_per_step),
                     fmt::format("{:.3g}", r.points_per_s / 1e9),
                     fmt::format("{:.4g}", r.effective_GBps),
                     fmt::format("{:.2f}", r.fraction_of_bandwidth), speedup);
  }
  return s;
}

}  // namespace

// A table of step rows, one of raymarch frames and one of solves (poisson),
// those that have rows, a blank line between.
std::string bench_table(const std::vector<BenchRow>& all) {
  std::vector<BenchRow> rows, rays, solves;
  for (const BenchRow& r : all) (r.solve ? solves : r.item.width > 0 ? rays : rows).push_back(r);
  std::string s;
  const auto add = [&](const std::string& t) { s += (s.empty() ? "" : "\n") + t; };
  if (!rows.empty() || (rays.empty() && solves.empty())) add(steps_table(rows));
  if (!rays.empty()) add(raymarch_table(rays));
  if (!solves.empty()) add(solve_table(solves));
  return s;
}

template BenchTiming time_bench_case<float>(const Case&, Backend<float>&, const TimingPlan&);
template BenchTiming time_bench_case<double>(const Case&, Backend<double>&, const TimingPlan&);
template Bandwidth measure_copy_bandwidth<float>(Backend<float>&, std::size_t, int);
template Bandwidth measure_copy_bandwidth<double>(Backend<double>&, std::size_t, int);
template Bandwidth measure_triad_bandwidth<float>(Backend<float>&, std::size_t, int);
template Bandwidth measure_triad_bandwidth<double>(Backend<double>&, std::size_t, int);

}  // namespace gf
