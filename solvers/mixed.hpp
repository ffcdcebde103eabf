// Mixed-precision iterative refinement for ∇²u = f (laplace.precision:
// mixed, method multigrid, precision float64): u, f and the residual in
// float64, each correction by two float32 multigrid cycles on a float32
// backend of the same device. An iteration: the float64 defect d = f − L u
// (kernels/mixed/: scaled to order 1 and rounded to float32 in the same
// pass that sums the solver's residual), e ≈ L₀⁻¹ d by two cycles from e = 0
// in float32, u += e in float64. Each float32 cycle reduces the error of the
// correction as a float64 cycle would (about 0.05 a V-cycle); two take it
// to about 0.002, near float32's floor for the correction (its residual
// stops falling at 1e-3 relative), and a third gains little: so the
// float64 residual falls by about 1e-3 an iteration to the float64 floor,
// and the float64 defect and correction passes come once every two cycles
// (docs/performance.md: 0.69-0.76 of float64 multigrid's time to 1e-10 at
// 257³-513³ on an H100, where one cycle an iteration gave 0.79-0.84).
#pragma once
#include <cstdint>
#include <memory>

#include "io/case.hpp"
#include "kernels/backend.hpp"
#include "kernels/mixed/mixed_exec.hpp"
#include "solvers/multigrid.hpp"

namespace gf {

class MixedRefinement {
 public:
  // Float32 cycles an iteration.
  static constexpr int kCycles = 2;
  // a: the solver's float64 args (f, boundary values); the correction's
  // float32 hierarchy is made from the case (homogeneous boundaries).
  MixedRefinement(const Case& c, Backend<double>& be, const LaplaceArgs<double>& a);
  ~MixedRefinement();
  // Σ (W·(f − L u))² of u, and u's defect kept for the next step.
  double start(const Field<double>& u);
  // One refinement of u, whose relative residual is r, towards `tolerance`:
  // cycles_for(r, the last two-cycle refinement's factor, tolerance) float32
  // cycles (none measured after start(): two). Returns Σ (W·(f − L u))² of
  // the new u.
  double step(Field<double>& u, double r, double tolerance);
  // The cycles of a refinement: one when a cycle is expected to reach the
  // tolerance from the relative residual r (the geometric mean of the last
  // two-cycle refinement's cycles, factor = its residual's factor, counts for
  // one: r·factor^(1/kCycles) ≤ tolerance), else kCycles. The last
  // refinement of a solve then costs a cycle instead of two where its first
  // one suffices (docs/performance.md: 0.081 s against 0.089 s at 513³ with
  // a Neumann face to 1e-10).
  static int cycles_for(double r, double factor, double tolerance);
  // Float32 cycles run so far.
  std::int64_t cycles() const { return cycles_; }
  // Device bytes beyond the float64 solver's u and f: the float32 defect,
  // correction and hierarchy.
  static std::size_t extra_bytes(const Grid& g);
  // Bytes an iteration reads and writes, of a float64 field of fb64 bytes:
  // the defect pass (u, f in float64, d out in float32), the float32
  // cycles, the correction.
  static std::size_t bytes_per_iteration(std::size_t fb64, bool f_field);

 private:
  Backend<double>& be_;
  LaplaceArgs<double> a_;
  std::unique_ptr<Backend<float>> be32_;
  std::unique_ptr<MixedExec> exec_;
  Field<float> d_, e_;
  std::unique_ptr<Multigrid<float>> mg_;
  double scale_ = 1;  // s of the defect held in d_
  double points_ = 1;
  std::int64_t cycles_ = 0;
  double rr_ = 0;      // the sum start() or step() returned last
  double factor_ = 1;  // the residual's factor over the last two-cycle refinement (1: none)
};

// A float32 backend on the device of be (the CPU, or be's GPU).
std::unique_ptr<Backend<float>> float32_backend_beside(Backend<double>& be);

}  // namespace gf
