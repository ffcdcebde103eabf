// gridforge validate: the same resolved case on the CPU and on the GPU, in
// lockstep, every field compared at every output step (SPEC §2).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "app/validate_images.hpp"
#include "core/interrupt.hpp"
#include "io/output.hpp"
#include "kernels/device.hpp"
#include "solvers/laplace.hpp"
#include "solvers/raymarch.hpp"
#include "io/workload.hpp"
#include "solvers/registry.hpp"
#include "solvers/stepper.hpp"

namespace gf::app {

namespace fs = std::filesystem;

namespace {

bool json_summary = false;  // --json

// SPEC §2: float64 1e-9, float32 1e-4; for iterative solvers at least 10× the
// solver's tolerance (the CPU and the GPU each stop within it).
double default_rtol(const Case& c) {
  double r = c.precision == Precision::Float64 ? 1e-9 : 1e-4;
  if (const auto tol = workload_entry(c.workload).solver_tolerance)
    r = std::max(r, 10 * tol(c));
  return r;
}

void write_validation(const Case& c, const nlohmann::json& j) {
  const fs::path out = c.output.dir;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw IoError("cannot create output folder '" + out.string() + "': " + ec.message());
  io::write_json_atomic(out / "validation.json", j);
  if (json_summary) {  // validation.json, with the outcome and where it is
    nlohmann::json s = j;
    const bool pass = j["pass"].get<bool>();
    s["status"] = pass ? "pass" : "mismatch";
    s["exit_code"] = pass ? kExitOk : kExitMismatch;
    s["validation_json"] = (out / "validation.json").string();
    print_json_summary(s);
  }
  if (!j["pass"].get<bool>())
    throw MismatchError("validate: the GPU result differs from the CPU reference (" +
                        (out / "validation.json").string() + ")");
  spdlog::info("validate: all fields agree; {}", (out / "validation.json").string());
}

// The solution with its mean removed when it is only fixed up to a constant
// (LaplaceSolver::finish does the same), so that iterates compare before it.
template <class T>
std::vector<T> solution_on_host(const Case& c, Backend<T>& be, const LaplaceSolver<T>& s) {
  std::vector<T> h(s.field().points());
  be.download(s.field(), h.data());
  if (c.laplace.singular && !h.empty()) {
    double mean = 0;
    for (T v : h) mean += double(v);
    mean /= double(h.size());
    for (T& v : h) v = static_cast<T>(double(v) - mean);
  }
  return h;
}

// laplace: the CPU and the GPU iterate in lockstep, check_every iterations at
// a time; when the first of them finishes, the two iterates are compared
// (for jacobi and sor after the same number of sweeps, so that what differs
// is the executor, not where each run happened to cross the tolerance: in
// float32, slowly converging runs cross it hundreds of sweeps apart). Then
// the other runs to its own end, and both must end the same way (converged
// or max_iters).
template <class T>
int validate_laplace(const Case& c, const ValidateArgs& a, const DeviceChoice& d) {
  const double rtol = a.rtol.value_or(default_rtol(c));
  const double atol = a.atol.value_or(0.0);
  auto cpu_be = make_cpu_backend<T>();
  auto gpu_be = make_backend<T>(d);
  LaplaceSolver<T> cpu(c, *cpu_be), gpu(c, *gpu_be);
  spdlog::info("validate {}: {} {} {}, cpu vs {}; pass when rel-L2 <= {:g} or max-abs <= {:g}",
               c.name, c.grid.shape_str(), to_string(c.precision), to_string(c.laplace.method),
               gpu_be->name(), rtol, atol);
  auto check_interrupt = [] {
    if (interrupt_requested()) throw InterruptedError("validate interrupted; nothing written");
  };
  while (!cpu.finished() && !gpu.finished()) {
    check_interrupt();
    cpu.iterate(c.laplace.check_every);
    gpu.iterate(c.laplace.check_every);
  }
  const std::int64_t common = std::min(cpu.iterations(), gpu.iterations());
  const std::vector<T> hc = solution_on_host(c, *cpu_be, cpu);
  const std::vector<T> hg = solution_on_host(c, *gpu_be, gpu);
  for (LaplaceSolver<T>* s : {&cpu, &gpu}) {
    while (!s->finished()) {
      check_interrupt();
      s->iterate(c.laplace.check_every);
    }
    s->finish();
  }
  const FieldDiff df = field_diff(hg, hc);
  const bool same_end = cpu.status() == gpu.status();
  const bool pass = (df.rel_l2 <= rtol || df.max_abs <= atol) && same_end;
  table_out() << fmt::format("{:<6} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12} {:>12}  {}\n",
                           "field", "compared", "cpu iters", "gpu iters", "cpu resid",
                           "gpu resid", "max_abs", "rel_l2", "result");
  table_out() << fmt::format(
      "{:<6} {:>10} {:>10} {:>10} {:>12.3e} {:>12.3e} {:>12.3e} {:>12.3e}  {}\n", "u", common,
      cpu.iterations(), gpu.iterations(), cpu.residual(), gpu.residual(), df.max_abs, df.rel_l2,
      pass ? "pass" : (same_end ? "FAIL" : "FAIL (the runs ended differently)"));
  nlohmann::json row = {{"field", "u"},
                        {"step", common},
                        {"compared_at_iteration", common},
                        {"cpu_iterations", cpu.iterations()},
                        {"gpu_iterations", gpu.iterations()},
                        {"cpu_residual", cpu.residual()},
                        {"gpu_residual", gpu.residual()},
                        {"cpu_reason", to_string(cpu.status())},
                        {"gpu_reason", to_string(gpu.status())},
                        {"max_abs", df.max_abs},
                        {"rel_l2", df.rel_l2},
                        {"pass", pass}};
  write_validation(c, {{"case", c.name}, {"precision", to_string(c.precision)},
                       {"method", to_string(c.laplace.method)}, {"tolerance", c.laplace.tolerance},
                       {"cpu", cpu_be->name()}, {"gpu", gpu_be->name()}, {"rtol", rtol},
                       {"atol", atol}, {"pass", pass}, {"rows", nlohmann::json::array({row})}});
  return kExitOk;
}

template <class T>
int validate_typed(const Case& c, const ValidateArgs& a, const DeviceChoice& d) {
  const RunKind kind = workload_entry(c.workload).run;
  if (kind == RunKind::Solve) return validate_laplace<T>(c, a, d);
  if (kind == RunKind::Render) {
    auto cpu_be = make_cpu_backend<T>();
    auto gpu_be = make_backend<T>(d);
    write_validation(c, validate_raymarch<T>(c, *cpu_be, *gpu_be));
    return kExitOk;
  }
  const double rtol = a.rtol.value_or(default_rtol(c));
  const double atol = a.atol.value_or(0.0);
  auto cpu_be = make_cpu_backend<T>();
  auto gpu_be = make_backend<T>(d);
  const auto cpu_s = make_stepper<T>(c, *cpu_be);
  const auto gpu_s = make_stepper<T>(c, *gpu_be);
  Stepper<T>& cpu = *cpu_s;
  Stepper<T>& gpu = *gpu_s;
  spdlog::info("validate {}: {} {} {} steps, cpu vs {}; pass when rel-L2 <= {:g} or max-abs <= {:g}",
               c.name, c.grid.shape_str(), to_string(c.precision), cpu.total_steps(),
               gpu_be->name(), rtol, atol);
  std::vector<T> hc, hg;
  nlohmann::json rows = nlohmann::json::array();
  bool all_pass = true;
  table_out() << fmt::format("{:<6} {:>8} {:>12} {:>12} {:>12}  {}\n", "field", "step", "time",
                           "max_abs", "rel_l2", "result");
  // The output steps, and the in-situ frames' steps when the case renders.
  const std::int64_t total = cpu.total_steps();
  const Schedule outs = output_schedule(total, c.output.every);
  const Every frames_at{c.render.enabled ? c.render.every : 0};
  nlohmann::json frame_rows = nlohmann::json::array();
  for (std::int64_t s = 0; s <= total; s = next_stop(s, total + 1, outs, frames_at)) {
    if (!outs.due(s) && !frames_at.due(s)) continue;
    cpu.advance(s - cpu.step());
    gpu.advance(s - gpu.step());
    if (interrupt_requested()) throw InterruptedError("validate interrupted; nothing written");
    if (c.render.enabled && s % c.render.every == 0) {
      // The field the frames draw (render.field), on each side.
      frame_rows.push_back(validate_frame<T>(c, s, *cpu_be,
                                             *frame_field(c.render, cpu.fields()).field, *gpu_be,
                                             *frame_field(c.render, gpu.fields()).field));
      all_pass = all_pass && frame_rows.back()["pass"].get<bool>();
    }
    if (!outs.due(s)) continue;
    const std::vector<NamedField<T>> fc = cpu.fields(), fg = gpu.fields();
    for (std::size_t k = 0; k < fc.size(); ++k) {
      hc.resize(fc[k].field->points());
      hg.resize(fg[k].field->points());
      cpu_be->download(*fc[k].field, hc.data());
      gpu_be->download(*fg[k].field, hg.data());
      const FieldDiff df = field_diff(hg, hc);
      const bool pass = df.rel_l2 <= rtol || df.max_abs <= atol;
      all_pass = all_pass && pass;
      table_out() << fmt::format("{:<6} {:>8} {:>12.6g} {:>12.3e} {:>12.3e}  {}\n", fc[k].name, s,
                                 cpu.time(), df.max_abs, df.rel_l2, pass ? "pass" : "FAIL");
      rows.push_back({{"field", fc[k].name}, {"step", s}, {"time", cpu.time()},
                      {"max_abs", df.max_abs}, {"rel_l2", df.rel_l2}, {"pass", pass}});
    }
  }
  if (!frame_rows.empty()) print_frame_rows(frame_rows);
  for (auto& r : frame_rows) rows.push_back(r);
  write_validation(c, {{"case", c.name}, {"precision", to_string(c.precision)},
                       {"cpu", cpu_be->name()}, {"gpu", gpu_be->name()}, {"rtol", rtol},
                       {"atol", atol}, {"pass", all_pass}, {"rows", rows}});
  return kExitOk;
}

}  // namespace

int cmd_validate(const ValidateArgs& a) {
  json_summary = a.json;
  set_json_stdout(a.json);
  Case c = load_case_with(a.case_path, a.overrides, a.time_block);
  if (a.out) c.output.dir = *a.out;
  // The GPU side: --device, else the case's device when it names a GPU.
  if (a.device && (*a.device == "cpu" || *a.device == "auto"))
    throw UsageError("--device " + *a.device +
                     ": validate runs the CPU side always; --device names the GPU side, cuda "
                     "or cuda:N");
  if (a.steps) {
    if (*a.steps < 0) throw UsageError("--steps: must be >= 0");
    const WorkloadInfo& w = workload_info(c.workload);
    if (!w.time_steps && w.set_steps && *a.steps < 1)
      throw UsageError(fmt::format("--steps: a {} case needs at least 1 iteration", w.name));
    if (w.set_steps) w.set_steps(c, *a.steps);  // an iterative solve's: iterations, at most
  }
  // validate compares against the GPU, so it needs one whatever the case says.
  if (!cuda_status().why_unusable.empty())
    throw DeviceError("validate compares the CPU with the GPU and needs a usable GPU: " +
                      cuda_status().why_unusable);
  std::string want = a.device.value_or(c.device);
  if (want == "auto" || want == "cpu") want = "cuda";
  const DeviceChoice d = choose_device(want);
  return c.precision == Precision::Float32 ? validate_typed<float>(c, a, d)
                                           : validate_typed<double>(c, a, d);
}

}  // namespace gf::app
