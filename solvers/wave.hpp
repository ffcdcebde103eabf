// The wave workload: u_tt = c²·Δu + f(x) by the leapfrog step of
// kernels/wave/wave_ops.hpp, written once against Backend<T> and the wave
// executor. Three levels of u rotate (the one before, the current one, the
// next), so no kernel reads what it writes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/wave/wave_exec.hpp"
#include "solvers/stepper.hpp"

namespace gf {

// The CFL limit and the step in one line (the log, --dry-run).
std::string wave_setup_line(const Case& c);

template <class T>
class WaveSolver final : public Stepper<T> {
 public:
  WaveSolver(const Case& c, Backend<T>& backend);

  void advance(std::int64_t n) override;
  std::int64_t step() const override { return step_; }
  double time() const override { return double(step_) * case_.wave.dt; }
  std::int64_t total_steps() const override { return case_.wave.steps; }
  const Field<T>& field() const override { return u_; }
  // The level before the current one (uⁿ⁻¹): with field() the whole state.
  const Field<T>& previous() const { return u_prev_; }
  double upload_ms() const override { return upload_ms_; }
  // uⁿ and uⁿ⁻¹ read, uⁿ⁺¹ written, f read if it varies.
  std::size_t bytes_per_step() const override;
  void save(io::Checkpoint& ck) override;
  void restore(const io::Checkpoint& ck) override;
  static MemoryNeed memory_needed(const Case& c);

  // The leapfrog step's args (first: those of the level before the first,
  // u⁻¹ from u⁰ and v₀), w to be set to the earlier level's data.
  static WaveArgs<T> args(const Case& c, bool first);

 private:
  const Case& case_;
  Backend<T>& backend_;
  std::unique_ptr<WaveExec<T>> exec_;
  WaveArgs<T> args_;
  Field<T> u_prev_, u_, u_next_, source_;
  std::int64_t step_ = 0;
  double upload_ms_ = 0;
};

}  // namespace gf
