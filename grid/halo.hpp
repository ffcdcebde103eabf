// Halo exchange over MPI and the backend that runs a solver on one rank's
// block of a decomposed grid (grid/decomp.hpp).
//
// The exchange goes axis by axis (x, then y, then z): along each split axis
// a rank posts non-blocking receives for its two halo slabs, packs its two
// boundary slabs of owned points (on the backend: a kernel on the GPU) and
// sends them; the slabs span the whole padded block along the other axes,
// halos included, so that the halos received along earlier axes travel on
// and fill the edges and corners that box stencils read (the classic
// trick: 2·ndim messages instead of 26).
//
// Overlap (GRIDFORGE_HALO_OVERLAP=1, the default): explicit heat steps,
// Jacobi sweeps and stencil steps are split in two (Backend::*_part): the
// shell of the block (the halo and the `halo` layers inside each shared
// face: Decomp::core_box) is updated first, then its faces travel while the
// core is updated (on the GPU: the exchange on a stream of its own beside
// the core's kernels), and the step returns with the halo filled, as
// before, bit for bit. Where the blocks are thin (Decomp::overlap_fits) or
// the backend does not split a step, the exchange follows the whole step.
//
// On the GPU the slabs go from device memory straight to MPI when the MPI
// library is CUDA-aware (MPIX_Query_cuda_support at run time; the
// environment variable GRIDFORGE_CUDA_AWARE=0/1 overrides it) and through
// host buffers otherwise.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "grid/decomp.hpp"
#include "kernels/backend.hpp"

namespace gf {

// True when the MPI library passes device pointers (see above).
bool mpi_cuda_aware();
// GRIDFORGE_HALO_OVERLAP: 1: overlap where it applies (see above); 0: the
// exchange follows each whole step; unset or empty: 1, on the CPU and the GPU
// (`gpu` is kept for a default that may differ again). A UsageError otherwise.
bool halo_overlap_requested(bool gpu);
// How the halos of `be` travel, in words, for the log (then whether they
// overlap the interior update, and why not): "MPI" on the CPU; on
// the GPU "NCCL between the GPUs" (the default when libnccl.so.2 loads at run
// time on every rank and no two ranks share a GPU: one group of
// ncclSend/ncclRecv on the compute stream per axis, no host synchronisation),
// else "CUDA-aware MPI" or "MPI, staged through the host", with why NCCL was
// not taken. GRIDFORGE_HALO=auto|nccl|mpi chooses (usage.md).
template <class T>
std::string halo_transport(Backend<T>& be);

// Wraps the backend of one rank: every operation runs on the rank's padded
// block; operations that read neighbours (heat_step, apply_stencil,
// jacobi_sweep, sor_sweep, spmv, residual's r, upload) refresh the halo of
// the field they write, so every field's halo always holds the neighbours'
// values; sums (stats, dot, residual, cg_update) cover the owned points and
// are added up over the ranks (MPI_Allreduce). SOR colours by the parity of
// global indices. With d.nranks == 1 returns `inner` itself.
template <class T>
std::unique_ptr<Backend<T>> make_distributed_backend(std::unique_ptr<Backend<T>> inner,
                                                     const Decomp& d);

// Checkpoints over ranks hold global arrays (the same file as one rank
// writes, so a restart may use another number of ranks): a field's owned
// blocks gathered into the global array on rank 0 (empty on the others)
// from each rank's padded block of `elem`-byte values, and a rank's padded
// block cut out of a global array (halo indices wrap around periodic axes).
std::vector<unsigned char> gather_global(const Decomp& d, const std::vector<unsigned char>& local,
                                         std::size_t elem);
std::vector<unsigned char> local_block(const Decomp& d, const std::vector<unsigned char>& global,
                                       std::size_t elem);

}  // namespace gf
