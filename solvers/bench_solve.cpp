#include "solvers/bench_solve.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "core/interrupt.hpp"
#include "solvers/laplace.hpp"
#include "solvers/prepare.hpp"

namespace gf {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::string shape_text(const BenchItem& it, char sep) {
  std::string s;
  for (std::int64_t n : it.shape) {
    if (!s.empty()) s += sep;  // two steps: GCC 12's false -Wrestrict (grid.hpp)
    s += std::to_string(n);
  }
  return s;
}

bool periodic_problem(const PoissonMethod& m) { return m.method == LaplaceMethod::Fft; }

// The analytic solution's factor of one axis at coordinate t.
double exact_factor(const Case& c, double t) {
  if (c.boundary[0].type == BcType::Periodic) return std::sin(2 * kPi * t);
  return std::exp(t) * std::sin(kPi * t);
}

// f = ∇²u of poisson_case's u. Walls: u = Π_a g(x_a), g(t) = e^t·sin(πt), so
// f = Σ_a g''(x_a)·Π_{b≠a} g(x_b), g''(t) = e^t·((1 − π²)·sin(πt) + 2π·cos(πt)).
// Periodic: −4dπ²·u.
std::string rhs_of(const PoissonMethod& m, int dims) {
  const char* axes[] = {"x", "y", "z"};
  if (periodic_problem(m)) {
    std::string s = fmt::format("-{}*pi^2", 4 * dims);
    for (int a = 0; a < dims; ++a) s += fmt::format("*sin(2*pi*{})", axes[a]);
    return s;
  }
  std::string sum = "x", terms;
  for (int a = 1; a < dims; ++a) sum += fmt::format("+{}", axes[a]);
  for (int a = 0; a < dims; ++a) {
    terms += a ? " + " : "";
    for (int b = 0; b < dims; ++b) {
      terms += b ? "*" : "";
      terms += b == a ? fmt::format("((1-pi^2)*sin(pi*{0})+2*pi*cos(pi*{0}))", axes[b])
                      : fmt::format("sin(pi*{})", axes[b]);
    }
  }
  return fmt::format("exp({})*({})", sum, terms);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const char* reason_of(LaplaceStatus s, bool limited) {
  switch (s) {
    case LaplaceStatus::Converged: return "converged";
    case LaplaceStatus::Direct: return "direct";
    case LaplaceStatus::Stalled: return "stalled";
    default: return limited ? "time_limit" : "max_iters";
  }
}

// max |u − u_exact| over every point of the grid (walls included: there both are 0).
template <class T>
double max_error(const Case& c, Backend<T>& be, const Field<T>& u) {
  const Grid& g = c.grid;
  std::vector<T> h(static_cast<std::size_t>(g.size()));
  be.download(u, h.data());
  // u_exact is a product of one factor an axis: each axis's factors once
  std::array<std::vector<double>, 3> e;
  for (int a = 0; a < 3; ++a) {
    e[a].assign(static_cast<std::size_t>(g.n[a]), 1.0);
    if (a < g.ndim)
      for (std::int64_t i = 0; i < g.n[a]; ++i) e[a][i] = exact_factor(c, g.coord(a, i));
  }
  double err = 0;
#pragma omp parallel for collapse(2) reduction(max : err)
  for (std::int64_t z = 0; z < g.n[2]; ++z)
    for (std::int64_t y = 0; y < g.n[1]; ++y)
      for (std::int64_t x = 0; x < g.n[0]; ++x) {
        const double d = double(h[std::size_t(g.index(x, y, z))]) - e[0][x] * e[1][y] * e[2][z];
        err = std::max(err, std::abs(d));
      }
  return err;
}

}  // namespace

const std::vector<PoissonMethod>& poisson_methods() {
  static const std::vector<PoissonMethod> m = {
      {"jacobi", LaplaceMethod::Jacobi},
      {"sor", LaplaceMethod::Sor},
      {"cg", LaplaceMethod::Cg},
      {"cg-jacobi", LaplaceMethod::Cg, LaplacePrecond::Jacobi},
      {"cg-multigrid", LaplaceMethod::Cg, LaplacePrecond::Multigrid},
      {"multigrid", LaplaceMethod::Multigrid},
      {"multigrid-f", LaplaceMethod::Multigrid, LaplacePrecond::None, MgCycle::F},
      {"multigrid-mixed", LaplaceMethod::Multigrid, LaplacePrecond::None, MgCycle::V, true},
      {"fft", LaplaceMethod::Fft},
  };
  return m;
}

const PoissonMethod* find_poisson_method(const std::string& name) {
  for (const PoissonMethod& m : poisson_methods())
    if (name == m.name) return &m;
  return nullptr;
}

std::string poisson_method_names() {
  std::string s;
  for (const PoissonMethod& m : poisson_methods()) {
    if (!s.empty()) s += ", ";
    s += m.name;
  }
  return s;
}

bool poisson_method_fits(const PoissonMethod& m, Precision p) {
  return !m.mixed || p == Precision::Float64;
}

Case poisson_case(const BenchItem& it, const SolveLimits& lim) {
  const PoissonMethod* m = find_poisson_method(it.method);
  if (!m) throw std::logic_error("poisson_case: unknown method " + it.method);
  if (int(it.shape.size()) != it.dims || it.dims < 2 || it.dims > 3)
    throw std::logic_error("poisson_case: the shape does not fit dims");
  std::string keys = fmt::format("method: {}", to_string(m->method));
  if (m->preconditioner != LaplacePrecond::None)
    keys += fmt::format(", preconditioner: {}", to_string(m->preconditioner));
  if (m->method == LaplaceMethod::Multigrid)
    keys += fmt::format(", cycle: {}, precision: {}", to_string(m->cycle),
                        m->mixed ? "mixed" : "uniform");
  if (periodic_problem(*m))
    keys += ", remove_mean: true";  // f's grid mean is 0 but for rounding
  std::string extent = "[1";
  for (int a = 1; a < it.dims; ++a) extent += ", 1";
  extent += ']';
  const std::string text = fmt::format(
      "name: bench-poisson-{}-{}d-{}\n"
      "workload: laplace\n"
      "precision: {}\n"
      "grid: {{dims: [{}], extent: {}}}\n"
      "initial: {{value: 0}}\n"
      "boundary: {{default: {{type: {}}}}}\n"
      "laplace: {{{}, rhs: \"{}\", tolerance: {:.17g}, max_iters: {}, check_every: 50}}\n"
      "output: {{every: 0}}\n",
      it.method, it.dims, shape_text(it, 'x'), to_string(it.precision), shape_text(it, ','),
      extent, periodic_problem(*m) ? "periodic" : "dirichlet, value: 0", keys,
      rhs_of(*m, it.dims), lim.tolerance, lim.max_iters);
  return prepare_case(load_case_text(text, "bench case"));
}

double poisson_exact(const Case& c, double x, double y, double z) {
  const double p[3] = {x, y, z};
  double u = 1;
  for (int a = 0; a < c.grid.ndim; ++a) u *= exact_factor(c, p[a]);
  return u;
}

template <class T>
SolveOutcome time_poisson_solve(const Case& c, Backend<T>& be, const SolveLimits& lim) {
  using Clock = std::chrono::steady_clock;
  const LaplaceSpec& L = c.laplace;
  SolveOutcome o;
  o.problem = c.boundary[0].type == BcType::Periodic ? "periodic" : "dirichlet";
  if (L.method == LaplaceMethod::Cg) o.preconditioner = to_string(L.preconditioner);
  if (L.method == LaplaceMethod::Multigrid) {
    o.cycle = to_string(L.cycle);
    o.laplace_precision = L.mixed ? "mixed" : "uniform";
  }
  o.tolerance = L.tolerance;
  // A solver of one iteration, thrown away: the pages' first touch and the
  // kernels' lazy loading are not the solve's; its iteration sizes the first chunk.
  double per_iter = 0;
  {
    // quiet: its setup would log the same lines as the timed solver's
    struct QuietLog {
      spdlog::level::level_enum was = spdlog::get_level();
      QuietLog() { spdlog::set_level(std::max(was, spdlog::level::warn)); }
      ~QuietLog() { spdlog::set_level(was); }
    } quiet;
    LaplaceSolver<T> warm(c, be);
    be.synchronize();
    const auto t = Clock::now();
    warm.iterate(1);
    be.synchronize();
    per_iter = seconds_since(t);
  }
  const auto t_setup = Clock::now();
  LaplaceSolver<T> s(c, be);
  be.synchronize();
  o.setup_s = seconds_since(t_setup);
  o.residual0 = s.residual();
  // As `gridforge run` solves: chunks of check_every iterations, each ending
  // in the method's residual check; a chunk that would run past the budget
  // is cut to what fits (at least one iteration), and the budget spent ends the row.
  bool limited = false;
  const auto t_solve = Clock::now();
  try {
    while (!s.finished()) {
      if (interrupt_requested()) throw InterruptedError("bench interrupted; nothing written");
      const double spent = seconds_since(t_solve);
      if (spent >= lim.max_seconds) {
        limited = true;
        break;
      }
      if (s.iterations() > 0) per_iter = spent / double(s.iterations());
      std::int64_t n = L.check_every;
      if (per_iter > 0 && double(n) * per_iter > lim.max_seconds - spent)
        n = std::max<std::int64_t>(1, std::int64_t((lim.max_seconds - spent) / per_iter));
      s.iterate(n);
    }
    s.finish();
    be.synchronize();
    o.reason = reason_of(s.status(), limited);
  } catch (const SolverError& e) {
    spdlog::warn("bench: {} failed: {}", c.name, e.what());
    o.reason = "failed";
  }
  o.solve_s = seconds_since(t_solve);
  o.iterations = s.iterations();
  o.residual = s.residual();
  o.time_block = s.time_block();
  o.bytes_per_iteration = s.bytes_per_iteration();
  // fft is a direct solve: done in one, its residual that of the transforms' rounding
  o.converged = o.reason == "converged" || o.reason == "direct";
  if (L.method != LaplaceMethod::Fft && o.iterations > 0 && o.residual0 > 0 && o.residual > 0)
    o.factor = std::pow(o.residual / o.residual0, 1.0 / double(o.iterations));
  o.max_error = max_error(c, be, s.field());
  return o;
}

BenchRow make_solve_row(const BenchItem& item, const std::string& device,
                        const std::string& device_name, std::int64_t points,
                        const SolveOutcome& s, const Bandwidth& bw) {
  BenchTiming t;
  t.steps = s.iterations;
  t.ms_per_step = {s.iterations > 0 ? s.solve_s * 1e3 / double(s.iterations) : 0.0};
  t.bytes_per_step = s.bytes_per_iteration;
  t.points = points;
  BenchItem it = item;
  it.time_block = s.time_block;
  BenchRow r = make_bench_row(it, device, device_name, t, bw);
  r.solve = s;
  return r;
}

std::string solve_label(const BenchItem& it) { return "poisson/" + it.method; }

std::string solve_table(const std::vector<BenchRow>& rows) {
  std::size_t work_w = 16, size_w = 8;
  for (const BenchRow& r : rows) {
    work_w = std::max(work_w, solve_label(r.item).size());
    size_w = std::max(size_w, r.item.cubic() ? std::to_string(r.item.size()).size() + 2
                                             : shape_text(r.item, 'x').size());
  }
  const std::string fmt_line = "{:<" + std::to_string(work_w) + "}  {:<4}  {:<" +
                               std::to_string(size_w) +
                               "}  {:<6}  {:<7}  {:>7}  {:>8}  {:>8}  {:>8}  {:>9}  {:<15}  "
                               "{:>9}  {:>6}  {:>7}\n";
  std::string s = fmt::format(fmt::runtime(fmt_line), "workload", "dims", "size", "device", "prec",
                              "iters", "setup s", "solve s", "ms/iter", "residual", "converged",
                              "max error", "factor", "vs cpu");
  for (const BenchRow& r : rows) {
    const SolveOutcome& o = *r.solve;
    const std::string size = r.item.cubic()
                                 ? fmt::format("{}^{}", r.item.size(), r.item.dims)
                                 : shape_text(r.item, 'x');
    const std::string conv = o.converged ? (o.reason == "direct" ? "yes (direct)" : "yes")
                                         : "no (" + o.reason + ")";
    s += fmt::format(fmt::runtime(fmt_line), solve_label(r.item), r.item.dims, size, r.device,
                     to_string(r.item.precision), o.iterations, fmt::format("{:.3g}", o.setup_s),
                     fmt::format("{:.3g}", o.solve_s), fmt::format("{:.3g}", r.ms_per_step),
                     fmt::format("{:.2e}", o.residual), conv, fmt::format("{:.2e}", o.max_error),
                     o.factor ? fmt::format("{:.3g}", *o.factor) : std::string("-"),
                     r.speedup_vs_cpu ? fmt::format("{:.3g}x", *r.speedup_vs_cpu)
                                      : std::string("-"));
  }
  return s;
}

template SolveOutcome time_poisson_solve<float>(const Case&, Backend<float>&, const SolveLimits&);
template SolveOutcome time_poisson_solve<double>(const Case&, Backend<double>&, const SolveLimits&);

}  // namespace gf
