#include "solvers/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/core.h>

#include "solvers/heat.hpp"
#include "solvers/heat_var.hpp"
#include "solvers/laplace.hpp"
#include "solvers/laplace_setup.hpp"
#include "solvers/pde.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/stencil.hpp"
#include "solvers/wave.hpp"

namespace gf {
namespace {

template <template <class> class S, class T>
std::unique_ptr<Stepper<T>> stepper_of(const Case& c, Backend<T>& be) {
  return std::make_unique<S<T>>(c, be);
}

// Heat with a variable alpha runs on the pde executor (solvers/heat_var.hpp).
template <class T>
std::unique_ptr<Stepper<T>> heat_stepper(const Case& c, Backend<T>& be) {
  if (c.heat.variable_alpha()) return std::make_unique<HeatVarSolver<T>>(c, be);
  return std::make_unique<HeatSolver<T>>(c, be);
}

void heat_check_ranks(const Case& c, int nranks) {
  if (c.heat.variable_alpha())
    throw CaseError(c.heat.alpha_field.loc, "heat.alpha",
                    fmt::format("a variable alpha runs on the pde executor, on one rank for now; "
                                "{} ranks were started: run it without mpirun, or give a number",
                                nranks));
}

int one_layer(const Case&) { return 1; }
std::string stencil_setup(const Case& c) { return stencil_setup_line(c.stencil, c.grid.ndim); }
int stencil_radius(const Case& c) { return std::max(c.stencil.radius, 1); }
double heat_cg_tolerance(const Case& c) { return c.heat.implicit() ? c.heat.solver_tolerance : 0; }
double laplace_tolerance(const Case& c) {
  return c.laplace.method == LaplaceMethod::Fft ? 0 : c.laplace.tolerance;
}

void laplace_check_ranks(const Case& c, int nranks) {
  const SourceLoc file{c.file};
  if (c.laplace.method == LaplaceMethod::Fft)
    throw CaseError(file, "laplace.method",
                    fmt::format("fft runs on one rank only (no distributed FFT); {} ranks were "
                                "started: run it without mpirun, or use jacobi, sor or cg",
                                nranks));
  // Multigrid runs over ranks (the fine level split, the coarse levels on
  // rank 0: solvers/multigrid.cpp), but not its float32 cycles: those run on
  // a float32 backend beside the float64 one, which has no distributed form.
  if (c.laplace.method == LaplaceMethod::Multigrid && c.laplace.mixed)
    throw CaseError(file, "laplace.precision",
                    fmt::format("mixed runs on one rank only for now (its float32 cycles have "
                                "no backend split over ranks); {} ranks were started: run it "
                                "without mpirun, or use precision: uniform",
                                nranks));
  if (c.laplace.singular)
    throw CaseError(file, "boundary",
                    fmt::format("a laplace case without a Dirichlet face runs on one rank only "
                                "for now; {} ranks were started", nranks));
}

const char* heat_bench_method(int) { return "explicit"; }
const char* laplace_bench_method(int) { return "jacobi"; }
const char* stencil_bench_method(int dims) { return dims == 2 ? "star5" : "star7"; }
const char* no_method(int) { return ""; }

std::string heat_bench(const BenchItem& it) {
  return fmt::format("heat: {{alpha: 1.0, scheme: {}, dt: auto, steps: {}, time_block: {}}}\n",
                     it.method, kUnlimitedSteps, it.time_block);
}
std::string stencil_bench(const BenchItem& it) {
  // coeff·Σ|w| ≤ 0.4 for every preset (Σ|w| ≤ 20/h²): a stable update. h is
  // the spacing of every axis, 1/(n − 1) of the axis of most points (bench_case).
  const double h = 1.0 / double(*std::max_element(it.shape.begin(), it.shape.end()) - 1);
  return fmt::format(
      "stencil: {{preset: {}, form: update, coeff: {:.17g}, steps: {}, time_block: {}}}\n",
      it.method, 0.02 * h * h, kUnlimitedSteps, it.time_block);
}
std::string laplace_bench(const BenchItem& it) {
  return fmt::format("laplace: {{method: {}, max_iters: {}, check_every: {}, time_block: {}}}\n",
                     it.method, kUnlimitedSteps, kUnlimitedSteps, it.time_block);
}
const char* raymarch_bench_method(int) { return "emission-absorption"; }
// The cloud of cases/raymarch_cloud.yaml and ../shared/bench/raymarch_peer.py's camera.
std::string raymarch_bench(const BenchItem& it) {
  return fmt::format(
      "parameters: {{w: 0.025}}\n"
      "raymarch:\n"
      "  volume:\n"
      "    expr: \"max(0, exp(-((x-0.4)^2+(y-0.5)^2+(z-0.5)^2)/w)"
      " + 0.8*exp(-((x-0.62)^2+(y-0.38)^2+(z-0.6)^2)/(0.6*w))"
      " + 0.7*exp(-((x-0.55)^2+(y-0.66)^2+(z-0.36)^2)/(0.5*w)) - 0.2)"
      " * (0.75 + 0.25*sin(23*x)*sin(19*y+1)*sin(21*z+2))\"\n"
      "  mode: {}\n{}"
      "  camera: {{position: [1.27, -0.24, 1.06], look_at: [0.5, 0.5, 0.5], up: [0, 0, 1], "
      "fov_deg: 32, width: {}, height: {}}}\n"
      "  step: 0.5\n"
      "  transfer: {{colormap: inferno, range: auto, density: 30}}\n",
      it.method, it.method == "isosurface" ? "  isovalue: 0.3\n" : "", it.width, it.height);
}
std::string wave_bench(const BenchItem&) {
  return fmt::format("wave: {{c: 1.0, dt: auto, steps: {}}}\n", kUnlimitedSteps);
}

const char* pde_bench_method(int) { return "grayscott"; }
// Gray–Scott (peers.py --problem grayscott3d): two fields, one forward Euler
// step reads u and v and writes both (4 values a point).
std::string pde_bench(const BenchItem&) {
  return fmt::format(
      "parameters: {{Du: 2.0e-5, Dv: 1.0e-5, F: 0.035, k: 0.065}}\n"
      "pde:\n"
      "  fields:\n"
      "    u: {{initial: {{expr: \"1 - 0.5*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)\"}},"
      " boundary: {{default: {{type: dirichlet, value: 1}}}}}}\n"
      "    v: {{initial: {{expr: \"0.25*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)\"}},"
      " boundary: {{default: {{type: dirichlet, value: 0}}}}}}\n"
      "  equations:\n"
      "    u: \"Du*lap(u) - u*v^2 + F*(1 - u)\"\n"
      "    v: \"Dv*lap(v) + u*v^2 - (F + k)*v\"\n"
      "  integrator: euler\n  dt: auto\n  steps: {}\n",
      kUnlimitedSteps);
}

// One entry a workload, in the order of Workload.
const WorkloadEntry kEntries[] = {
    {Workload::Heat, RunKind::Steps, "step", true, one_layer, heat_setup_line, heat_cg_tolerance,
     HeatSolver<float>::memory_needed, HeatSolver<double>::memory_needed, heat_bench_method, false,
     heat_bench, heat_stepper<float>, heat_stepper<double>, nullptr, heat_check_ranks},
    {Workload::Laplace, RunKind::Solve, "iteration", true, one_layer, laplace_setup_line,
     laplace_tolerance, LaplaceSolver<float>::memory_needed, LaplaceSolver<double>::memory_needed,
     laplace_bench_method, true, laplace_bench, nullptr, nullptr, resolve_laplace,
     laplace_check_ranks},
    {Workload::Stencil, RunKind::Steps, "step", true, stencil_radius, stencil_setup, nullptr,
     StencilSolver<float>::memory_needed, StencilSolver<double>::memory_needed,
     stencil_bench_method, true, stencil_bench, stepper_of<StencilSolver, float>, stepper_of<StencilSolver, double>},
    {Workload::Raymarch, RunKind::Render, "frame", false, one_layer, nullptr, nullptr,
     raymarch_memory_needed<float>, raymarch_memory_needed<double>, raymarch_bench_method, true,
     raymarch_bench, nullptr, nullptr, nullptr, nullptr, false},
    {Workload::Wave, RunKind::Steps, "step", false, one_layer, wave_setup_line, nullptr,
     WaveSolver<float>::memory_needed, WaveSolver<double>::memory_needed, no_method, false,
     wave_bench, stepper_of<WaveSolver, float>, stepper_of<WaveSolver, double>},
    {Workload::Pde, RunKind::Steps, "step", false, one_layer, pde_setup_line, nullptr,
     PdeSolver<float>::memory_needed, PdeSolver<double>::memory_needed, pde_bench_method, true,
     pde_bench,
     stepper_of<PdeSolver, float>, stepper_of<PdeSolver, double>, nullptr, nullptr, false},
};

}  // namespace

const WorkloadEntry& workload_entry(Workload w) {
  for (const WorkloadEntry& e : kEntries)
    if (e.workload == w) return e;
  throw std::logic_error(std::string("no registry entry for workload ") + to_string(w));
}

template <class T>
std::unique_ptr<Stepper<T>> make_stepper(const Case& c, Backend<T>& backend) {
  const WorkloadEntry& e = workload_entry(c.workload);
  auto make = [&] {
    if constexpr (std::is_same_v<T, float>) return e.stepper_f32;
    else return e.stepper_f64;
  }();
  if (!make) throw std::logic_error(std::string("no time stepper for workload ") + to_string(c.workload));
  return make(c, backend);
}

template <class T>
MemoryNeed workload_memory_needed(const Case& c) {
  const WorkloadEntry& e = workload_entry(c.workload);
  if constexpr (std::is_same_v<T, float>) return e.memory_f32(c);
  else return e.memory_f64(c);
}

template std::unique_ptr<Stepper<float>> make_stepper<float>(const Case&, Backend<float>&);
template std::unique_ptr<Stepper<double>> make_stepper<double>(const Case&, Backend<double>&);
template MemoryNeed workload_memory_needed<float>(const Case&);
template MemoryNeed workload_memory_needed<double>(const Case&);

}  // namespace gf
