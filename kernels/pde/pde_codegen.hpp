// The CUDA source of a pde program's stage kernel (pde_cuda.cu compiles it
// at run time with NVRTC): the equations' bytecode written out as straight
// code, one statement an instruction, each operation the call the
// interpreter makes (kernels/expr/expr_math.hpp), inside the pde_point of
// pde_ops.hpp. Host code only: the text can be made and checked anywhere.
#pragma once
#include <string>

#include "core/pde_program.hpp"
#include "kernels/pde/pde_ops.hpp"

namespace gf {

// The kernels' name in the source, + "_i32" (32-bit indices, for fields of
// fewer than 2³¹ values) or "_i64".
inline constexpr const char* kPdeKernelName = "gf_pde_stage";
// The line of a kernel source that sets the march's blocks an SM
// (__launch_bounds__), followed by the number.
inline constexpr const char* kPdeMarchMinb = "#define GF_PDE_MARCH_MINB";

// The source for value type `real` ("float" or "double") on a grid of ndim
// axes: the headers it needs inlined (pde_rtc_prelude()), the equations, the
// kernel, compiled for the stages' terms (PdeTerms; the default: any stage)
// and, equal_h, for equal spacings on every axis (PdeArgs::equal_h: lap's
// factored form); prefetch: the march asks L2 for the plane (row) after the
// next (pde_march_prefetch).
std::string pde_kernel_source(const PdeProgram& prog, const std::string& real, int ndim,
                              PdeTerms terms = {}, bool equal_h = false, bool prefetch = true);

// The two programs a source holds, each whole (the headers and equations,
// then its kernels), compiled apart: `march`, the march and the faces
// (2D and 3D; empty in 1D), which nearly every stage runs; `point`, the
// one-thread-a-point kernels (_i32, _i64), for a stage the march cannot take
// (1D, fewer than 3 points along y or z, 2³¹ values or more, rows off
// 16-byte vectors or arrays off 16 bytes: PdeCuda::march), compiled when one
// first needs them (pde_cuda.cu). NVRTC took 0.32-0.35 s for the march of
// pde_grayscott3d.yaml alone against 0.80-0.94 s for the whole source (this
// 2-core VM, session 22); the whole took 1.07-1.17 s on an H200's host.
// The parts begin at kPdePointPart and kPdeMarchPart.
inline constexpr const char* kPdePointPart = "// ---- kernels: one thread a point ----\n";
inline constexpr const char* kPdeMarchPart = "// ---- kernel: the march ----\n";
struct PdeSourceParts {
  std::string point, march;
};
PdeSourceParts pde_source_parts(const std::string& src);

// One expression's bytecode as a C++ block that computes in `real` and
// leaves its value in `result` (variables read from `v`): exposed for tests.
std::string pde_expr_code(const ExprCode& code, const std::string& result, const std::string& real);

// The headers the generated source includes, their text inlined in
// dependency order (generated at build time from the same files the rest of
// the code compiles: kernels/pde/pde_rtc_prelude.cmake).
const char* pde_rtc_prelude();

}  // namespace gf
