// The pde workload's executor: one formula, pde_point (pde_ops.hpp), run by
// the CPU reference (pde_cpu.cpp: the equations' bytecode interpreted) and
// the CUDA executor (pde_cuda.cu: the equations turned into one kernel,
// compiled at run time with NVRTC and cached).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/pde_program.hpp"
#include "kernels/backend.hpp"
#include "kernels/pde/pde_ops.hpp"

namespace gf {

// The arrays of one stage, a pointer per state field (u0 and acc may be
// null where the stage's coefficients do not read them), and the
// coefficient fields.
template <class T>
struct PdeFields {
  std::vector<const Field<T>*> in, u0;
  std::vector<Field<T>*> acc, out;
  std::vector<const Field<T>*> coefficients;
};

template <class T>
class PdeExec {
 public:
  virtual ~PdeExec() = default;
  // One stage at every point. `a` holds the layout, coordinates, spacing,
  // boundary rules, dt and the stage; its arrays are set from `f`.
  virtual void stage(PdeArgs<T> a, const PdeFields<T>& f) = 0;
  // What the executor did to get ready (the CUDA one: compiled or cached,
  // and how long it took), for the log and timing.json; "" when nothing.
  virtual std::string setup_note() const { return ""; }
  virtual double compile_s() const { return 0; }
};

// The executor of the program, on a grid of ndim axes, for the backend's
// kind (kernels/exec.hpp); terms: those the run's stages have, equal_h: the
// stages' PdeArgs::equal_h (the CUDA kernel is compiled for both, and
// refuses a stage that does not fit them).
template <class T>
std::unique_ptr<PdeExec<T>> make_pde_exec(Backend<T>& be, const PdeProgram& prog, int ndim,
                                          PdeTerms terms = {}, bool equal_h = false);

template <class T>
std::unique_ptr<PdeExec<T>> make_pde_cpu(Backend<T>& be, const PdeProgram& prog);
// source: the program's kernel (pde_codegen.hpp) for T, made by the caller
// (make_pde_exec), so that the CUDA library needs nothing of the host one.
template <class T>
std::unique_ptr<PdeExec<T>> make_pde_cuda(Backend<T>& be, const std::string& source,
                                          PdeTerms terms = {}, bool equal_h = false);

// Sets a's arrays from f (the stage's fields, by their data pointers).
template <class T>
void pde_set_arrays(PdeArgs<T>& a, const PdeFields<T>& f) {
  for (std::size_t q = 0; q < f.in.size(); ++q) a.in[q] = f.in[q]->data();
  for (std::size_t c = 0; c < f.coefficients.size(); ++c)
    a.in[f.in.size() + c] = f.coefficients[c]->data();
  for (std::size_t q = 0; q < f.out.size(); ++q) {
    a.out[q] = f.out[q]->data();
    a.u0[q] = q < f.u0.size() && f.u0[q] ? f.u0[q]->data() : nullptr;
    a.acc[q] = q < f.acc.size() && f.acc[q] ? f.acc[q]->data() : nullptr;
  }
}

}  // namespace gf
