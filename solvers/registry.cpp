#include "solvers/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "solvers/heat.hpp"
#include "solvers/laplace.hpp"
#include "solvers/raymarch.hpp"
#include "solvers/stencil.hpp"

namespace gf {
namespace {

template <template <class> class S, class T>
std::unique_ptr<Stepper<T>> stepper_of(const Case& c, Backend<T>& be) {
  return std::make_unique<S<T>>(c, be);
}

int one_layer(const Case&) { return 1; }
int stencil_radius(const Case& c) { return std::max(c.stencil.radius, 1); }
double heat_cg_tolerance(const Case& c) { return c.heat.implicit() ? c.heat.solver_tolerance : 0; }
double laplace_tolerance(const Case& c) { return c.laplace.method == "fft" ? 0 : c.laplace.tolerance; }

// One entry a workload, in the order of Workload.
const WorkloadEntry kEntries[] = {
    {Workload::Heat, RunKind::Steps, "step", true, one_layer, heat_setup_line, heat_cg_tolerance,
     HeatSolver<float>::memory_needed, HeatSolver<double>::memory_needed,
     stepper_of<HeatSolver, float>, stepper_of<HeatSolver, double>},
    {Workload::Laplace, RunKind::Solve, "iteration", true, one_layer, laplace_setup_line,
     laplace_tolerance, LaplaceSolver<float>::memory_needed, LaplaceSolver<double>::memory_needed,
     nullptr, nullptr},
    {Workload::Stencil, RunKind::Steps, "step", true, stencil_radius, nullptr, nullptr,
     StencilSolver<float>::memory_needed, StencilSolver<double>::memory_needed,
     stepper_of<StencilSolver, float>, stepper_of<StencilSolver, double>},
    {Workload::Raymarch, RunKind::Render, "frame", false, one_layer, nullptr, nullptr,
     raymarch_memory_needed<float>, raymarch_memory_needed<double>, nullptr, nullptr},
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
