// Explicit heat (FTCS): the time loop, written once against Backend<T>.
#pragma once
#include <cstdint>
#include <vector>

#include "io/case.hpp"
#include "kernels/backend.hpp"

namespace gf {

// The host values a heat run starts from: the initial condition with the
// Dirichlet values written onto their faces (faces in the order x- x+ y- y+ z- z+,
// so where two Dirichlet faces meet the later one's value stands).
template <class T>
std::vector<T> heat_initial_state(const Case& c);

template <class T>
class HeatSolver {
 public:
  HeatSolver(const Case& c, Backend<T>& backend);

  // Advances n steps (never past the case's last step), fewer when interrupted.
  void advance(std::int64_t n);
  std::int64_t step() const { return step_; }
  double time() const { return time_; }
  std::int64_t total_steps() const { return case_.heat.steps; }

  const Field<T>& field() const { return u_; }
  void download(std::vector<T>& host) {
    host.resize(u_.size());
    backend_.download(u_, host.data());
  }
  FieldStats stats() { return backend_.stats(u_); }
  double upload_ms() const { return upload_ms_; }

  // Bytes one step must move: u read once, u written once, s(x) read if it varies.
  std::size_t bytes_per_step() const;
  // Device memory a run of this case needs (fields + reduction scratch).
  static std::size_t memory_needed(const Case& c);

 private:
  HeatArgs<T> args_for(double dt) const;

  const Case& case_;
  Backend<T>& backend_;
  Field<T> u_, u_next_, source_;
  bool has_source_field_ = false;
  double source_const_ = 0;
  std::int64_t step_ = 0;
  double time_ = 0;
  double upload_ms_ = 0;
};

// The steps at which a run writes its fields: 0, every, 2·every, ... and the
// last step (only the last when every is 0).
std::vector<std::int64_t> output_steps(std::int64_t total_steps, std::int64_t every);

}  // namespace gf
