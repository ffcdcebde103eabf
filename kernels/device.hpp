// What GPUs this process can use, and the backend factory over both executors.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace gf {

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_total = 0, memory_free = 0;
};

struct CudaStatus {
  bool compiled = false;       // built with GRIDFORGE_CUDA
  int runtime_version = 0;     // e.g. 13000
  int driver_version = 0;      // 0 when no driver
  std::string why_unusable;    // empty when at least one GPU is usable
  std::vector<GpuInfo> gpus;
};

// Queries the CUDA runtime once (cheap after the first call).
const CudaStatus& cuda_status();

// Free and total memory of the device `index`, or of the host for index < 0.
std::size_t host_memory_available();

// The CPU's model name (/proc/cpuinfo), or "unknown CPU".
std::string cpu_model_name();

// Size of the last-level cache in bytes (L3, else L2), or 0 when unknown.
std::size_t last_level_cache_bytes();

// row_align: the rows of its fields start on that many bytes
// (Layout::aligned_rows; 0: dense rows); −1: gpu_row_align_bytes().
template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int device, std::int64_t row_align = -1);

// The layout of a GPU field of grid g with values of elem_bytes bytes
// (CudaBackend::make_field): Layout::aligned_rows with the row alignment
// GRIDFORGE_ROW_ALIGN (bytes; default 128, 0 for dense rows, as host arrays
// and files hold them). The memory estimates count the same layout.
Layout gpu_field_layout(const Grid& g, std::size_t elem_bytes);
std::int64_t gpu_row_align_bytes();

// How the GPU's one-step marches take programmatic dependent launches
// (kernels/cuda/pdl.cuh): GRIDFORGE_PDL, 1 (default: by the field's size), 0
// (ordinary launches), `early` or `late` (every field so); anything else is
// a UsageError.
enum class PdlPolicy { Auto, Off, Early, Late };
PdlPolicy gpu_dependent_launch();

// An integer setting from the environment variable `name`: `fallback` when
// unset or empty, else a whole number from lo to hi; anything else is a
// UsageError "NAME='value': give <what>" (exit 2). The GRIDFORGE_* knobs of
// the executors (the marches', the ray marcher's) read theirs with it.
int env_int(const char* name, int fallback, int lo, int hi, const char* what);

// The one-step marches' shape, forced (kernels/cuda/march_kernels.cuh, for
// measurement): GRIDFORGE_MARCH_CHUNK, planes (3D) or rows (2D) a thread,
// 1 to 64, 0 or unset: by the grid; GRIDFORGE_MARCH_PIECES, `32` (blocks
// of 32 pieces across a row: returns 32), `row` (as wide as the row needs:
// −1), unset (0: 32). Anything else is a UsageError.
int gpu_march_chunk();
int gpu_march_pieces();
// GRIDFORGE_MARCH_TAIL: the most pieces at a row's end (past its last whole
// 32 pieces) that a 3D march makes in blocks apart (MarchTail), 0 to 31
// (0: none; unset: kMarchTailPieces). GRIDFORGE_PAD_STORE: 1 (unset) a row's
// last piece writes its 32-byte sector whole, 0 not. For measurement; the
// values are the same either way.
constexpr int kMarchTailPieces = 4;
int gpu_march_tail();
bool gpu_pad_store();
// GRIDFORGE_PDE_BLOCKS: blocks of 256 threads an SM the pde march is
// compiled for (__launch_bounds__), 1 to 8 (0 and anything else are a
// UsageError); unset: returns 0, and pde_codegen.cpp takes 3. For
// measurement; the values are the same either way.
int gpu_pde_blocks();
// GRIDFORGE_PDE_PREFETCH: the plane (row) after the next one that each
// thread of the pde march asks L2 for: 1 yes, 0 no; unset: returns −1, and
// pde_cuda.cu decides by the device (pde_march_prefetch). For measurement;
// the values are the same either way.
int gpu_pde_prefetch();
// GRIDFORGE_MARCH_ORDER: the order of the one-step marches' blocks along
// the march (z chunks in 3D, row groups in 2D; march_kernels.cuh,
// march_block): 1 (unset) a step from the other end where march_down says
// (the 3D star march on fields of at most 8 L2 caches, float64 Jacobi 2,
// CG's operator never: star_goes_down; the 2D marches and the 2D pde march
// at any size; the 3D box and pde marches never), so that it starts on the
// planes the step before wrote last, still in L2; 0 always from plane 1 up.
// For measurement; the values are the same either way.
bool gpu_march_alternate();
// Whether the march of a step from field `in` into `out` goes down: the step
// out of the lower address into the higher, unless GRIDFORGE_MARCH_ORDER=0.
// In a run that swaps two fields that is every other step; wave's three
// fields and the pde's Runge–Kutta stages go down on some of theirs. By the
// addresses, not a count of steps, so that a step captured in a CUDA graph
// and replayed goes the same way as when it was captured.
bool march_down(const void* in, const void* out);

}  // namespace gf
