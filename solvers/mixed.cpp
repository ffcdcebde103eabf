#include "solvers/mixed.hpp"

#include <cmath>
#include <stdexcept>

#include "kernels/device.hpp"
#include "solvers/laplace.hpp"

namespace gf {

std::unique_ptr<Backend<float>> float32_backend_beside(Backend<double>& be) {
  switch (be.kind()) {
    case BackendKind::Cpu: return make_cpu_backend<float>();
    case BackendKind::Cuda: return make_cuda_backend<float>(be.device_index());
    case BackendKind::Distributed: break;
  }
  throw std::logic_error("mixed precision on several ranks (laplace_check_ranks refuses it)");
}

MixedRefinement::MixedRefinement(const Case& c, Backend<double>& be, const LaplaceArgs<double>& a)
    : be_(be), a_(a), be32_(float32_backend_beside(be)), exec_(make_mixed_exec(be)) {
  const Grid& g = c.grid;
  d_ = be32_->make_field(g, "the float32 defect");
  e_ = be32_->make_field(g, "the float32 correction");
  LaplaceArgs<float> a32 = laplace_args<float>(c, true);  // the correction's: homogeneous
  a32.f = d_.data();
  MgOptions opt;
  opt.cycle = c.laplace.cycle;
  mg_ = std::make_unique<Multigrid<float>>(*be32_, g, a32, false, opt);
  points_ = double(g.size());
}

MixedRefinement::~MixedRefinement() = default;

double MixedRefinement::start(const Field<double>& u) {
  be32_->synchronize();  // d_ may still be read by the last cycle
  const double rr = exec_->defect(a_, u, 1.0, d_);
  // scaled again so that the defect is of order 1 (rms of W·d about 1)
  const double rms = std::sqrt(rr / points_);
  scale_ = rms > 0 && std::isfinite(rms) ? 1.0 / rms : 1.0;
  if (scale_ != 1.0) exec_->defect(a_, u, scale_, d_);
  be_.synchronize();
  rr_ = rr;
  factor_ = 1;  // none measured from here
  return rr;
}

int MixedRefinement::cycles_for(double r, double factor, double tolerance) {
  if (!(factor > 0 && factor < 1)) return kCycles;
  return r * std::pow(factor, 1.0 / kCycles) <= tolerance ? 1 : kCycles;
}

double MixedRefinement::step(Field<double>& u, double r, double tolerance) {
  const int cycles = cycles_for(r, factor_, tolerance);
  // e ≈ L₀⁻¹ (s·d) by `cycles` cycles, float32, on the float32 backend's stream
  mg_->cycle_from_zero(e_);
  for (int c = 1; c < cycles; ++c) mg_->cycle(e_);
  cycles_ += cycles;
  be32_->synchronize();
  exec_->correct(e_, scale_, u);
  // the next defect, with the scale of the first: s·d falls by about the
  // cycle's factor a step (1e-10 in some 8 steps), far above float32's
  // smallest normal numbers (1e-38); re-scaled (a second pass) only if it
  // ever nears them
  const double rr = exec_->defect(a_, u, scale_, d_, true);
  const double rms = std::sqrt(rr / points_);
  if (rms > 0 && std::isfinite(rms) && (rms * scale_ < 1e-20 || rms * scale_ > 1e20)) {
    // the new scale from the sum in the reductions' order, as start()'s
    const double rms2 = std::sqrt(exec_->defect(a_, u, scale_, d_) / points_);
    scale_ = 1.0 / (rms2 > 0 && std::isfinite(rms2) ? rms2 : rms);
    exec_->defect(a_, u, scale_, d_);
  }
  be_.synchronize();
  if (cycles == kCycles && rr_ > 0) factor_ = std::sqrt(rr / rr_);
  rr_ = rr;
  return rr;
}

std::size_t MixedRefinement::extra_bytes(const Grid& g) {
  return (2 * std::size_t(g.size()) + Multigrid<float>::extra_values(g)) * sizeof(float);
}

std::size_t MixedRefinement::bytes_per_iteration(std::size_t fb64, bool f_field) {
  const std::size_t fb = fb64 / 2, fr = fb;  // the float32 cycle, as LaplaceSolver counts multigrid's
  const std::size_t cycle = kCycles * ((4 * (2 * fb + fr) + 3 * fb + fr + 5 * fb) * 8 / 7);
  // + the defect (u, f read in float64, d written), + the correction (e read, u read and written)
  return cycle + (fb64 + (f_field ? fb64 : 0) + fb) + (fb + 2 * fb64);
}

}  // namespace gf
