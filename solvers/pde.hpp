// The pde workload: several fields, each with ∂f/∂t = rhs, advanced by an
// explicit Runge–Kutta method in Shu–Osher form (forward Euler, SSP-RK2,
// SSP-RK3, RK4), each stage one pass of the pde executor over every point
// (kernels/pde/). Written once against Backend<T>.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/pde/pde_exec.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// The integrator, the stability estimate and the step in one line.
std::string pde_setup_line(const Case& c);

// The stages of a step of the integrator (Shu–Osher form, pde_ops.hpp), with
// the arrays each reads and writes: 0 the state u, 1 and 2 stage values, 3
// the accumulator of RK4.
struct PdeStageCoef {
  double a0, a1, a2, c;  // out = a0·u0 + a1·in + a2·acc + c·dt·rhs(in)
  double e0, e1, e2, d;  // acc = e0·u0 + e1·in + e2·acc + d·dt·rhs(in)
  int keep_acc;
  double t_in, t_out;    // as fractions of dt
};
struct PdeStagePlan {
  PdeStageCoef st;
  int in, out, u0, acc;  // arrays (u0/acc: −1 when not read)
};
std::vector<PdeStagePlan> pde_stages(PdeIntegrator i);
// The terms of pde_combine the integrator's stages have, their
// coefficients in T (PdeTerms: the GPU kernel is compiled for them).
template <class T>
PdeTerms pde_terms(PdeIntegrator i);
// Whether every axis of g has the same 1/h² in T (PdeArgs::equal_h: lap's
// factored form, on both executors, and the kernel source's Eq::kEqualH).
template <class T>
bool pde_equal_spacings(const Grid& g);
// How many arrays a field needs: u and the stage values (and acc).
int pde_arrays(PdeIntegrator i);

template <class T>
class PdeSolver final : public Stepper<T> {
 public:
  PdeSolver(const Case& c, Backend<T>& backend);

  void advance(std::int64_t n) override;
  std::int64_t step() const override { return step_; }
  double time() const override { return t_; }
  std::int64_t total_steps() const override { return case_.pde.steps; }
  const Field<T>& field() const override { return arrays_[0][0]; }
  std::vector<NamedField<T>> fields() const override;
  double upload_ms() const override { return upload_ms_; }
  // Each stage reads its input and writes its output once a field (plus
  // the u0 and acc it reads, and the coefficients).
  std::size_t bytes_per_step() const override;
  void add_timing(nlohmann::json& timing) const override;
  void save(io::Checkpoint& ck) override;
  void restore(const io::Checkpoint& ck) override;
  static MemoryNeed memory_needed(const Case& c);

 private:
  const Case& case_;
  Backend<T>& backend_;
  std::unique_ptr<PdeExec<T>> exec_;
  PdeArgs<T> args_;
  std::vector<PdeStagePlan> stages_;
  // arrays_[a][f]: array a (0 the state) of field f.
  std::vector<std::vector<Field<T>>> arrays_;
  std::vector<Field<T>> coefficients_;
  std::int64_t step_ = 0;
  double t_ = 0;
  double upload_ms_ = 0;
};

}  // namespace gf
