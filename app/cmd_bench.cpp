// gridforge bench: workloads × dims × sizes × precisions × devices, each
// device's bandwidth ceiling measured in the same run (SPEC §2); the table on
// stdout, bench.json and bench.csv in --out. The timing is solvers/bench's.
#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "core/interrupt.hpp"
#include "gf_version.hpp"
#include "io/output.hpp"
#include "kernels/device.hpp"
#include "io/case_schema.hpp"
#include "solvers/bench.hpp"
#include "solvers/bench_solve.hpp"
#include "solvers/registry.hpp"
#include "solvers/stepper.hpp"

namespace gf::app {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_list(const std::string& option, const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    item = a == std::string::npos ? "" : item.substr(a, b - a + 1);
    if (item.empty()) throw UsageError(option + ": '" + text + "' has an empty entry");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// One --sizes entry: N (a cube, a square in 2D) or the points per axis,
// NXxNYxNZ (3D) or NXxNY (2D).
struct SizeEntry {
  std::string text;             // as typed
  std::vector<std::int64_t> n;  // one number (every axis), or one per axis
  std::vector<std::int64_t> shape(int dims) const {
    return n.size() == 1 ? cube_shape(dims, n[0]) : n;
  }
};

const char* const kAxisNames = "xyz";

SizeEntry parse_size(const std::string& s) {
  SizeEntry e{s, {}};
  std::vector<std::string> axes;
  for (std::size_t start = 0;;) {
    const std::size_t x = s.find('x', start);
    axes.push_back(s.substr(start, x == std::string::npos ? x : x - start));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  const auto not_a_size = [&] {
    return UsageError("--sizes: '" + s + "' is not N or NXxNYxNZ (NXxNY in 2D), whole numbers "
                      "of points per axis, e.g. 512 or 509x263x391");
  };
  if (axes.size() > 3) throw not_a_size();
  for (const std::string& a : axes) {
    const bool digits = !a.empty() && a.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || a.size() > 7) throw not_a_size();
    e.n.push_back(std::stoll(a));
  }
  if (e.n.size() == 1 && e.n[0] < 5)
    throw UsageError("--sizes: " + s + " is too small; sizes are at least 5 points");
  for (std::size_t a = 0; a < e.n.size(); ++a)
    if (e.n.size() > 1 && e.n[a] < 5)
      throw UsageError(fmt::format("--sizes: {} has {} points along {}; sizes are at least 5 "
                                   "points per axis", s, e.n[a], kAxisNames[a]));
  return e;
}

// An entry for every dims asked: its axes match, its grid is at most 2^40 points.
void check_size(const SizeEntry& e, int dims) {
  if (e.n.size() > 1 && int(e.n.size()) != dims)
    throw UsageError(fmt::format("--sizes: {} has {} axes; --dims {} takes N or {}", e.text,
                                 e.n.size(), dims, dims == 2 ? "NXxNY" : "NXxNYxNZ"));
  double points = 1;
  for (std::int64_t n : e.shape(dims)) points *= double(n);
  if (points > double(std::int64_t(1) << 40))
    throw UsageError(e.n.size() == 1
                         ? fmt::format("--sizes: {}^{} is more than 2^40 points", e.text, dims)
                         : fmt::format("--sizes: {} is more than 2^40 points", e.text));
}

// The poisson rows' defaults are 2^k + 1 points (issue 22's 129³ to 513³):
// the sizes whose multigrid levels halve exactly.
std::vector<SizeEntry> default_sizes(int dims, bool poisson = false) {
  const std::vector<std::int64_t> n =
      poisson ? (dims == 2 ? std::vector<std::int64_t>{257, 1025, 4097}
                           : std::vector<std::int64_t>{129, 257, 513})
      : dims == 2 ? std::vector<std::int64_t>{256, 1024, 4096, 16384}
                  : std::vector<std::int64_t>{64, 128, 256, 512};
  std::vector<SizeEntry> out;
  for (std::int64_t x : n) out.push_back({std::to_string(x), {x}});
  return out;
}

// bench.json's settings.sizes: a number for N, an array [nx, ny(, nz)] otherwise.
nlohmann::json sizes_json(const std::vector<SizeEntry>& v) {
  nlohmann::json j = nlohmann::json::array();
  for (const SizeEntry& e : v)
    j.push_back(e.n.size() == 1 ? nlohmann::json(e.n[0]) : nlohmann::json(e.n));
  return j;
}

struct Plan {
  std::vector<std::string> workloads;
  std::vector<int> dims;
  std::optional<std::vector<SizeEntry>> sizes;  // given; else per dims
  std::vector<Precision> precisions;
  std::vector<std::string> devices;  // "cpu", "cuda", "cuda:N"
  std::vector<DeviceChoice> choices;
  TimingPlan timing;
  std::optional<std::string> stencil;
  std::vector<int> time_blocks;  // heat rows, one per depth
  std::vector<std::string> modes;                 // raymarch rows
  std::vector<std::pair<int, int>> images;        // raymarch rows: width, height
  std::vector<const PoissonMethod*> methods;      // poisson rows
  SolveLimits limits;                             // poisson rows
};

// --methods: names of poisson_methods(), each once.
std::vector<const PoissonMethod*> parse_methods(const std::optional<std::string>& text) {
  std::vector<const PoissonMethod*> out;
  if (!text) {
    for (const PoissonMethod& m : poisson_methods()) out.push_back(&m);
    return out;
  }
  std::vector<std::string_view> names;
  for (const PoissonMethod& m : poisson_methods()) names.push_back(m.name);
  for (const std::string& x : split_list("--methods", *text)) {
    const PoissonMethod* m = find_poisson_method(x);
    if (!m) {
      const std::string_view near = schema::nearest(x, names);
      throw UsageError("--methods: '" + x + "' is not one of " + poisson_method_names() +
                       (near.empty() ? std::string() : fmt::format("; did you mean '{}'?", near)));
    }
    if (std::find(out.begin(), out.end(), m) != out.end())
      throw UsageError("--methods: '" + x + "' is named twice");
    out.push_back(m);
  }
  return out;
}

// --images: WxH entries, 1 to 16384 pixels a side.
std::vector<std::pair<int, int>> parse_images(const std::string& text) {
  std::vector<std::pair<int, int>> out;
  for (const std::string& e : split_list("--images", text)) {
    const std::size_t x = e.find('x');
    const std::string w = e.substr(0, x), h = x == std::string::npos ? "" : e.substr(x + 1);
    auto number = [](const std::string& s) {
      return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == std::string::npos
                 ? std::stoi(s)
                 : 0;
    };
    const int wi = number(w), hi = number(h);
    if (wi < 1 || hi < 1 || wi > 16384 || hi > 16384)
      throw UsageError("--images: '" + e + "' is not WxH, 1 to 16384 pixels a side (e.g. 1920x1080)");
    out.emplace_back(wi, hi);
  }
  return out;
}

std::vector<std::string> resolve_devices(const std::optional<std::string>& asked) {
  const CudaStatus& st = cuda_status();
  if (!asked) {
    if (st.why_unusable.empty()) return {"cpu", "cuda"};
    spdlog::info("bench: no usable GPU ({}); timing the CPU only", st.why_unusable);
    return {"cpu"};
  }
  std::vector<std::string> out;
  for (const std::string& d : split_list("--device", *asked)) {
    if (d != "cpu" && d.rfind("cuda", 0) != 0)
      throw UsageError("--device: '" + d + "' is not one of cpu, cuda, cuda:N" +
                       device_name_hint(d));
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw UsageError("--device: '" + d + "' is named twice");
    out.push_back(d);
  }
  return out;
}

DeviceChoice choose_bench_device(const std::string& d) {
  try {
    return choose_device(d);
  } catch (const DeviceError&) {
    const CudaStatus& st = cuda_status();
    if (!st.why_unusable.empty())
      throw DeviceError("--device " + d + ": no usable GPU: " + st.why_unusable +
                        "; use --device cpu");
    throw;
  } catch (const UsageError&) {
    throw UsageError("--device: '" + d + "' is not one of cpu, cuda, cuda:N" +
                     device_name_hint(d));
  }
}

Plan make_plan(const BenchArgs& a) {
  Plan p;
  const auto& known = bench_workloads();
  for (const std::string& w : split_list("--workload", a.workload)) {
    if (w == "all") {
      p.workloads.insert(p.workloads.end(), known.begin(), known.end());
      continue;
    }
    if (std::find(known.begin(), known.end(), w) == known.end() && w != "raymarch" &&
        w != "pde" && w != "poisson") {
      std::string names;
      for (const std::string& k : known) names += k + ", ";
      throw UsageError("--workload: '" + w + "' is not one of " + names +
                       "pde, poisson, raymarch, all");
    }
    p.workloads.push_back(w);
  }
  for (const std::string& d : split_list("--dims", a.dims)) {
    if (d != "2" && d != "3") throw UsageError("--dims: '" + d + "' is not 2 or 3");
    p.dims.push_back(d[0] - '0');
  }
  if (a.sizes) {
    std::vector<SizeEntry> s;
    for (const std::string& x : split_list("--sizes", *a.sizes)) s.push_back(parse_size(x));
    p.sizes = s;
    for (int d : p.dims)
      for (const SizeEntry& e : s) check_size(e, d);
  }
  for (const std::string& x : split_list("--precision", a.precision)) {
    if (x == "float32") p.precisions.push_back(Precision::Float32);
    else if (x == "float64") p.precisions.push_back(Precision::Float64);
    else throw UsageError("--precision: '" + x + "' is not float32 or float64");
  }
  if (a.steps) {
    if (*a.steps < 1) throw UsageError("--steps: must be at least 1");
    p.timing.steps = *a.steps;
  }
  if (a.repeat < 1) throw UsageError("--repeat: must be at least 1");
  p.timing.repetitions = a.repeat;
  p.stencil = a.stencil;
  for (const std::string& x : split_list("--time-block", a.time_block)) {
    const std::int64_t k = std::all_of(x.begin(), x.end(), ::isdigit) && x.size() < 3 ? std::stoll(x) : -1;
    if (k < 1 || k > kMaxTimeBlock)
      throw UsageError(fmt::format("--time-block: '{}' is not a whole number of steps from 1 to {}",
                                   x, kMaxTimeBlock));
    p.time_blocks.push_back(int(k));
  }
  // A preset that does not fit a dimension asked for is a command-line error.
  if (p.stencil && std::find(p.workloads.begin(), p.workloads.end(), "stencil") != p.workloads.end())
    for (int d : p.dims) {
      try {
        bench_case(BenchItem{"stencil", *p.stencil, d, cube_shape(d, 9), Precision::Float32});
      } catch (const CaseError& e) {
        throw UsageError("--stencil " + *p.stencil + ": " + e.message());
      }
    }
  for (const std::string& m : split_list("--modes", a.modes)) {
    if (m != "emission-absorption" && m != "mip" && m != "isosurface")
      throw UsageError("--modes: '" + m + "' is not one of emission-absorption, mip, isosurface");
    p.modes.push_back(m);
  }
  p.images = parse_images(a.images);
  p.methods = parse_methods(a.methods);
  if (!(a.max_seconds > 0))
    throw UsageError(fmt::format("--max-seconds: {} is not a number of seconds > 0", a.max_seconds));
  if (!(a.tolerance > 0 && a.tolerance < 1))
    throw UsageError(fmt::format("--tolerance: {} is not a relative residual in (0, 1)", a.tolerance));
  p.limits.max_seconds = a.max_seconds;
  p.limits.tolerance = a.tolerance;
  if (std::find(p.workloads.begin(), p.workloads.end(), "raymarch") != p.workloads.end() &&
      std::find(p.dims.begin(), p.dims.end(), 3) == p.dims.end())
    throw UsageError("--workload raymarch: its rows are 3D volumes; add --dims 3");
  p.devices = resolve_devices(a.devices);
  for (const std::string& d : p.devices) p.choices.push_back(choose_bench_device(d));
  return p;
}

std::string device_label(const DeviceChoice& d, const std::string& asked) {
  return d.gpu < 0 ? std::string("cpu") : asked;
}

std::string cpu_name() {
  return fmt::format("{} ({} threads)", cpu_model_name(), omp_get_max_threads());
}

// The device's ceiling: the GPU's device-to-device copy, the CPU's triad.
Bandwidth measure_bandwidth(const DeviceChoice& d) {
  auto be = make_backend<float>(d);
  if (d.gpu < 0) return measure_triad_bandwidth<float>(*be, triad_array_bytes(), 10);
  return measure_copy_bandwidth<float>(*be, copy_array_bytes(cuda_status().gpus.at(d.gpu).memory_free),
                                       20);
}

std::size_t memory_available(const DeviceChoice& d) {
  return d.gpu < 0 ? host_memory_available() : cuda_status().gpus.at(d.gpu).memory_free;
}

template <class T>
std::optional<BenchRow> run_row(const BenchItem& it, const std::string& label,
                                const DeviceChoice& d, Backend<T>& be, const Bandwidth& bw,
                                const TimingPlan& plan) {
  const Case c = bench_case(it);
  // The CPU also holds the initial state on the host while uploading it.
  std::size_t needed = stepper_memory_needed<T>(c).bytes;
  if (d.gpu < 0) needed += std::size_t(c.grid.size()) * sizeof(T);
  const std::size_t avail = memory_available(d);
  if (avail > 0 && needed > avail) {
    spdlog::warn("bench: skipping {} {} {} on {}: needs {}, {} free", it.workload,
                 c.grid.shape_str(), to_string(it.precision), label, human_bytes(double(needed)),
                 human_bytes(double(avail)));
    return std::nullopt;
  }
  const BenchTiming t = time_bench_case<T>(c, be, plan);
  std::string name = be.name();
  if (d.gpu < 0) name = cpu_name();
  BenchRow r = make_bench_row(it, label, name, t, bw);
  spdlog::info("bench: {:<14} {:<8} {:<7} {:<5} {:.4g} ms/step ({} steps × {}), {:.2f} of {} BW",
               it.workload + (workload_entry(c.workload).bench_label_method ? "/" + it.method : ""),
               c.grid.shape_str(),
               to_string(it.precision), label, r.ms_per_step, r.steps, r.repetitions,
               r.fraction_of_bandwidth, bw.kind);
  return r;
}

// A poisson row: the case's solve on the device, when it fits in memory.
template <class T>
std::optional<BenchRow> run_solve_row(const BenchItem& it, const std::string& label,
                                      const DeviceChoice& d, Backend<T>& be, const Bandwidth& bw,
                                      const SolveLimits& lim) {
  const Case c = poisson_case(it, lim);
  std::size_t needed = stepper_memory_needed<T>(c).bytes;
  if (d.gpu < 0) needed += std::size_t(c.grid.size()) * sizeof(T);  // the error's download
  const std::size_t avail = memory_available(d);
  if (avail > 0 && needed > avail) {
    spdlog::warn("bench: skipping poisson/{} {} {} on {}: needs {}, {} free", it.method,
                 c.grid.shape_str(), to_string(it.precision), label, human_bytes(double(needed)),
                 human_bytes(double(avail)));
    return std::nullopt;
  }
  const SolveOutcome o = time_poisson_solve<T>(c, be, lim);
  const std::string name = d.gpu < 0 ? cpu_name() : be.name();
  BenchRow r = make_solve_row(it, label, name, c.grid.size(), o, bw);
  spdlog::info("bench: poisson/{:<15} {:<8} {:<7} {:<5} {} iterations in {:.3g} s (setup {:.3g} s), "
               "residual {:.2e}, {}, max error {:.2e}",
               it.method, c.grid.shape_str(), to_string(it.precision), label, o.iterations,
               o.solve_s, o.setup_s, o.residual, o.reason, o.max_error);
  return r;
}

nlohmann::json bench_json(const Plan& p, const BenchArgs& a,
                          const std::map<std::string, Bandwidth>& bws,
                          const std::vector<BenchRow>& rows) {
  nlohmann::json devices = nlohmann::json::array();
  nlohmann::json copy = nullptr, triad = nullptr;
  for (std::size_t i = 0; i < p.devices.size(); ++i) {
    const std::string label = device_label(p.choices[i], p.devices[i]);
    const Bandwidth& bw = bws.at(label);
    const std::string name = p.choices[i].gpu < 0
                                 ? cpu_name()
                                 : cuda_status().gpus.at(p.choices[i].gpu).name +
                                       fmt::format(" (GPU {})", p.choices[i].gpu);
    devices.push_back({{"device", label},
                       {"name", name},
                       {"bandwidth_kind", bw.kind},
                       {"bandwidth_GBps", bw.GBps},
                       {"bandwidth_array_bytes", bw.array_bytes},
                       {"bandwidth_repetitions", bw.repetitions}});
    if (bw.kind == "copy" && copy.is_null()) copy = bw.GBps;
    if (bw.kind == "triad" && triad.is_null()) triad = bw.GBps;
  }
  nlohmann::json dims = p.dims, precisions = nlohmann::json::array(), sizes;
  for (Precision x : p.precisions) precisions.push_back(to_string(x));
  if (p.sizes) {
    sizes = sizes_json(*p.sizes);
  } else {
    sizes = nlohmann::json::object();
    for (int d : p.dims) sizes[std::to_string(d)] = sizes_json(default_sizes(d));
  }
  nlohmann::json poisson = nullptr;
  if (std::find(p.workloads.begin(), p.workloads.end(), "poisson") != p.workloads.end()) {
    nlohmann::json methods = nlohmann::json::array(), psizes = sizes;
    for (const PoissonMethod* m : p.methods) methods.push_back(m->name);
    if (!p.sizes) {
      psizes = nlohmann::json::object();
      for (int d : p.dims) psizes[std::to_string(d)] = sizes_json(default_sizes(d, true));
    }
    poisson = {{"methods", methods},
               {"sizes", psizes},
               {"tolerance", p.limits.tolerance},
               {"max_seconds", p.limits.max_seconds},
               {"max_iters", p.limits.max_iters}};
  }
  nlohmann::json rj = nlohmann::json::array();
  for (const BenchRow& r : rows) rj.push_back(bench_row_json(r));
  return {
      {"version", GF_VERSION},
      {"git_commit", GF_GIT_COMMIT},
      {"build", GF_BUILD_TYPE},
      {"compiler", GF_COMPILER},
      {"command_line", a.command_line},
      {"date", now_iso8601()},
      {"host", {{"cpu", cpu_model_name()}, {"cpu_threads", omp_get_max_threads()},
                {"cpu_threads_from", threads_json(a.threads)["from"]}}},
      {"devices", devices},
      {"copy_GBps", copy},
      {"triad_GBps", triad},
      {"settings",
       {{"workloads", p.workloads},
        {"dims", dims},
        {"sizes", sizes},
        {"precisions", precisions},
        {"steps", p.timing.steps > 0 ? nlohmann::json(p.timing.steps) : nlohmann::json("auto")},
        {"repetitions", p.timing.repetitions},
        {"auto_target_ms", p.timing.target_ms},
        {"raymarch_modes", p.modes},
        {"raymarch_images", [&] {
           nlohmann::json j = nlohmann::json::array();
           for (const auto& [w, h] : p.images) j.push_back({w, h});
           return j;
         }()},
        {"poisson", poisson},
        {"statistic", "median of the repetitions' ms per step"}}},
      {"bytes_counted",
       "T_eff: each field a step reads or writes, counted once, x points x bytes per value "
       "(heat explicit, stencil, laplace jacobi: u read and u written)"},
      {"rows", rj},
  };
}

}  // namespace

int cmd_bench(const BenchArgs& a) {
  const Plan p = make_plan(a);
  const fs::path out = a.out;

  // The ceilings first, one per device, in this run.
  std::map<std::string, Bandwidth> bws;
  for (std::size_t i = 0; i < p.devices.size(); ++i) {
    const std::string label = device_label(p.choices[i], p.devices[i]);
    const Bandwidth bw = measure_bandwidth(p.choices[i]);
    spdlog::info("bench: {} {} bandwidth {:.4g} GB/s ({} of {}, median of {})", label, bw.kind,
                 bw.GBps, bw.kind == "copy" ? "2 buffers" : "3 arrays",
                 human_bytes(double(bw.array_bytes)), bw.repetitions);
    bws[label] = bw;
  }

  std::vector<BenchRow> rows;
  auto run_solve = [&](auto zero, const BenchItem& it) {
    using T = decltype(zero);
    for (std::size_t i = 0; i < p.devices.size(); ++i) {
      if (interrupt_requested()) throw InterruptedError("bench interrupted; nothing written");
      const std::string label = device_label(p.choices[i], p.devices[i]);
      auto be = make_backend<T>(p.choices[i]);
      if (auto r = run_solve_row<T>(it, label, p.choices[i], *be, bws.at(label), p.limits))
        rows.push_back(*r);
    }
  };
  auto run_typed = [&](auto zero, const BenchItem& it) {
    using T = decltype(zero);
    for (std::size_t i = 0; i < p.devices.size(); ++i) {
      if (interrupt_requested()) throw InterruptedError("bench interrupted; nothing written");
      const std::string label = device_label(p.choices[i], p.devices[i]);
      auto be = make_backend<T>(p.choices[i]);
      if (auto r = run_row<T>(it, label, p.choices[i], *be, bws.at(label), p.timing))
        rows.push_back(*r);
    }
  };
  for (const std::string& w : p.workloads)
    for (int d : p.dims)
      for (Precision prec : p.precisions)
        for (const SizeEntry& size : p.sizes ? *p.sizes : default_sizes(d, w == "poisson")) {
          if (w == "poisson") {  // a row a method (multigrid-mixed: float64 only)
            for (const PoissonMethod* m : p.methods) {
              if (!poisson_method_fits(*m, prec)) continue;
              const BenchItem it{w, m->name, d, size.shape(d), prec};
              if (prec == Precision::Float32)
                run_solve(float{}, it);
              else
                run_solve(double{}, it);
            }
            continue;
          }
          if (w == "raymarch") {  // a row a mode and image, 3D only
            if (d != 3) continue;
            for (const std::string& mode : p.modes)
              for (const auto& [width, height] : p.images) {
                BenchItem it{w, mode, d, size.shape(d), prec};
                it.width = width;
                it.height = height;
                if (prec == Precision::Float32)
                  run_typed(float{}, it);
                else
                  run_typed(double{}, it);
              }
            continue;
          }
          std::string method = default_bench_method(w, d);
          if (w == "stencil" && p.stencil) method = *p.stencil;
          // depths for heat, for the stencils the blocked passes run (star5,
          // star7) and Jacobi
          const bool blocks = workload_entry(workload_of(w)).time_block &&
                              (w != "stencil" || method == "star5" || method == "star7");
          for (int tb : blocks ? p.time_blocks : std::vector<int>{1}) {
            BenchItem it{w, method, d, size.shape(d), prec, tb};
            if (prec == Precision::Float32)
              run_typed(float{}, it);
            else
              run_typed(double{}, it);
          }
        }
  if (interrupt_requested()) throw InterruptedError("bench interrupted; nothing written");
  fill_speedups(rows);

  set_json_stdout(a.json);
  table_out() << bench_table(rows) << std::flush;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw IoError("cannot create output folder '" + out.string() + "': " + ec.message());
  const nlohmann::json j = bench_json(p, a, bws, rows);
  io::write_json_atomic(out / "bench.json", j);
  io::write_text_atomic(out / "bench.csv", bench_csv(rows));
  spdlog::info("bench: {} rows; {} and {}", rows.size(), (out / "bench.json").string(),
               (out / "bench.csv").string());
  if (a.json) print_json_summary(j);
  return kExitOk;
}

}  // namespace gf::app
