#include "solvers/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "solvers/drive.hpp"
#include "solvers/laplace.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/registry.hpp"
#include "solvers/stepper.hpp"

namespace gf {

namespace {

using Clock = std::chrono::steady_clock;

// A time stepper (heat, stencil, wave) as the driver sees it: a log row of
// the field's statistics, which are also its NaN/Inf check.
template <class T>
class StepperRun final : public Driven<T> {
 public:
  // render: the case's (its field is the one whose range the observation keeps).
  StepperRun(Stepper<T>& s, Backend<T>& backend, const RaySpec& render, Clock::time_point t_start)
      : s_(s), be_(backend), frame_(frame_field(render, s.fields()).name), t_start_(t_start) {}
  std::int64_t count() const override { return s_.step(); }
  std::int64_t last() const override { return s_.total_steps(); }
  bool finished() const override { return s_.step() >= s_.total_steps(); }
  void advance(std::int64_t n) override { s_.advance(n); }
  double time() const override { return s_.time(); }
  const Field<T>& field() const override { return s_.field(); }
  std::vector<NamedField<T>> fields() const override { return s_.fields(); }
  // A row of each field's min, max and mean; the first field with NaN/Inf
  // values stops the run.
  Observation observe() override {
    const double wall = std::chrono::duration<double>(Clock::now() - t_start_).count();
    Observation ob;
    ob.row = {double(s_.step()), s_.time(), wall};
    for (const NamedField<T>& f : s_.fields()) {
      const FieldStats st = be_.vec().stats(*f.field);
      ob.row.insert(ob.row.end(), {st.min, st.max, st.mean});
      ob.note += fmt::format("{}{} in [{:.4g}, {:.4g}]", ob.note.empty() ? "" : ", ", f.name,
                             st.min, st.max);
      // The range of the field an in-situ frame draws (render.field).
      if (f.name == frame_) ob.range = std::array<double, 2>{st.min, st.max};
      if (st.nonfinite > 0 && ob.diverged.empty())
        ob.diverged = fmt::format("field {} has {} NaN/Inf values at step {} (t = {:.6g})", f.name,
                                  st.nonfinite, s_.step(), s_.time());
    }
    return ob;
  }
  double upload_ms() const override { return s_.upload_ms(); }
  std::size_t bytes_per_count() const override { return s_.bytes_per_step(); }
  void save(io::Checkpoint& ck) override { s_.save(ck); }
  void restore(const io::Checkpoint& ck) override { s_.restore(ck); }
  std::string stopped_at() const override {
    return fmt::format("step {} of {} (t = {:.6g}); the state reached", s_.step(),
                       s_.total_steps(), s_.time());
  }
  void add_timing(nlohmann::json& timing, std::int64_t start, bool) const override {
    if (restarted) timing["restarted_at_step"] = start;
    s_.add_timing(timing);
  }
  bool restarted = false;

 private:
  Stepper<T>& s_;
  Backend<T>& be_;
  std::string frame_;  // the name of the field the frames draw
  Clock::time_point t_start_;
};

// An iterative solve (laplace) as the driver sees it: chunks of
// check_every iterations, each ending in a residual check and a log row;
// the final iterate is written whether or not it converged, and not
// converging is a SolverError (exit 1).
template <class T>
class SolveRun final : public Driven<T> {
 public:
  SolveRun(const Case& c, LaplaceSolver<T>& s) : c_(c), s_(s) {}
  std::int64_t count() const override { return s_.iterations(); }
  std::int64_t last() const override { return kNever; }  // max_iters: the solver's
  bool finished() const override { return s_.finished(); }
  void advance(std::int64_t n) override { s_.iterate(n); }
  void finish() override { s_.finish(); }
  double time() const override { return double(s_.iterations()); }
  const Field<T>& field() const override { return s_.field(); }
  Observation observe() override {
    // The relative residual falls from 1 toward the tolerance about
    // geometrically: the progress is its fall on a log scale, or the share
    // of max_iters spent, whichever is further.
    const double r = s_.residual(), tol = c_.laplace.tolerance;
    double f = r <= tol || s_.finished() ? 1.0 : r >= 1 ? 0.0 : std::log(r) / std::log(tol);
    f = std::max(f, double(s_.iterations()) / double(std::max<std::int64_t>(1, c_.laplace.max_iters)));
    return {{double(s_.iterations()), r}, fmt::format("residual {:.3g}", r), {}, f, std::nullopt};
  }
  double upload_ms() const override { return s_.upload_ms(); }
  std::size_t bytes_per_count() const override { return s_.bytes_per_iteration(); }
  void save(io::Checkpoint& ck) override { s_.save(ck); }
  void restore(const io::Checkpoint& ck) override { s_.restore(ck); }
  std::string stopped_at() const override {
    return fmt::format("iteration {} (residual {:.3g}); the iterate reached", s_.iterations(),
                       s_.residual());
  }
  void add_timing(nlohmann::json& timing, std::int64_t start, bool interrupted) const override {
    const LaplaceSpec& spec = c_.laplace;
    if (restarted) timing["restarted_at_iteration"] = start;
    timing["method"] = to_string(spec.method);
    if (spec.method == LaplaceMethod::Jacobi) {
      timing["time_block"] = s_.time_block();
      if (s_.time_block_auto()) add_time_block_pick(timing, *s_.time_block_auto());
    }
    timing["iterations"] = s_.iterations();
    timing["residual"] = s_.residual();
    timing["tolerance"] = spec.tolerance;
    timing["reason"] = interrupted ? "interrupted" : to_string(s_.status());
    if (spec.singular) timing["mean_removed"] = s_.mean_removed();
  }
  void check_outcome(const std::filesystem::path& out_dir,
                     const std::string& resume) const override {
    if (s_.status() == LaplaceStatus::Stalled)
      throw SolverError(fmt::format("{}; the last iterate is written in {}", s_.stall_message(),
                                    out_dir.string()));
    if (s_.status() == LaplaceStatus::MaxIters)
      throw SolverError(fmt::format(
          "{} did not converge in {} iterations: residual {:.3g} > tolerance {:.3g}; the last "
          "iterate is written in {}{}",
          to_string(c_.laplace.method), s_.iterations(), s_.residual(), c_.laplace.tolerance,
          out_dir.string(),
          resume.empty() ? std::string()
                         : fmt::format("; continue with: {} laplace.max_iters={}", resume,
                                       2 * c_.laplace.max_iters)));
  }
  bool restarted = false;

 private:
  const Case& c_;
  LaplaceSolver<T>& s_;
};

}  // namespace

template <class T>
nlohmann::json run_case(const Case& c, Backend<T>& backend, const RunOptions& opts) {
  const RunKind kind = workload_entry(c.workload).run;
  if (kind == RunKind::Render) return run_raymarch(c, backend, opts);
  const auto t_start = Clock::now();
  const std::int64_t ck_every = c.output.checkpoint_every;
  DrivePlan plan;
  plan.checkpoint = Schedule::every_k(ck_every);
  if (kind == RunKind::Solve) {
    const LaplaceSpec& spec = c.laplace;
    LaplaceSolver<T> solver(c, backend);
    if (spec.singular && spec.remove_mean)
      spdlog::info("laplace: removed the mean {:.6g} of the right-hand side (remove_mean: true; "
                   "with no Dirichlet face f must balance the boundaries)",
                   solver.mean_removed());
    SolveRun<T> run(c, solver);
    run.restarted = opts.restart != nullptr;
    plan.log_columns = {"iteration", "residual"};
    plan.output = Schedule::every_k(c.output.every);
    // Chunks end at multiples of check_every, so that a restarted run checks
    // the residual at the same iterations; each one's residual is a row.
    plan.check = Schedule::every_k(spec.check_every);
    plan.log_every_stop = true;
    plan.progress_total = spec.method == LaplaceMethod::Fft ? 1 : spec.max_iters;
    return drive(c, backend, opts, run, plan, t_start);
  }
  const std::unique_ptr<Stepper<T>> stepper = make_stepper<T>(c, backend);
  StepperRun<T> run(*stepper, backend, c.render, t_start);
  run.restarted = opts.restart != nullptr;
  const std::int64_t total = stepper->total_steps();
  // One field: min, max, mean; several: <name>_min, ... for each.
  plan.log_columns = {"step", "time", "wall_s"};
  const std::vector<NamedField<T>> fields = stepper->fields();
  for (const NamedField<T>& f : fields)
    for (const char* what : {"min", "max", "mean"})
      plan.log_columns.push_back(fields.size() == 1 ? std::string(what) : f.name + "_" + what);
  plan.output = output_schedule(total, c.output.every);
  // log.csv gets a row about every 1 % of the run (every whole number of
  // temporally blocked passes, so that short runs take them too); NaN/Inf
  // are looked for every output.check_every steps as well (a reduction on
  // the device, a few numbers read back), so a diverged run stops soon after
  // it diverges.
  const std::int64_t pass = std::max(1, stepper->time_block());
  plan.log = Schedule::every_k((std::max<std::int64_t>(1, total / 100) + pass - 1) / pass * pass);
  plan.check = Schedule::every_k(c.output.check_every);
  plan.progress_total = total;
  return drive(c, backend, opts, run, plan, t_start);
}

template nlohmann::json run_case<float>(const Case&, Backend<float>&, const RunOptions&);
template nlohmann::json run_case<double>(const Case&, Backend<double>&, const RunOptions&);

}  // namespace gf
