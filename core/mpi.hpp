// The few MPI calls the program needs outside the halo exchange, behind an
// interface without mpi.h (so that .cu files and the non-MPI build see the
// same declarations). In a build without MPI (GRIDFORGE_MPI OFF), or in a
// process not started by mpirun, there is one rank and every call is the
// one-rank identity: a plain `gridforge run` never initialises MPI.
#pragma once
#include <cstdint>
#include <string>

namespace gf::mpi {

// True when the build has MPI (GRIDFORGE_MPI).
bool built();
// True when a launcher (mpirun, srun) started this process: its environment
// names a rank. Then init() initialises MPI; otherwise it does nothing.
bool launched();
void init(int* argc, char*** argv);
// Finalises MPI when init() initialised it. Safe to call more than once.
void finalize();
// Ends every rank at once with this exit code (MPI_Abort); on one rank, std::exit.
[[noreturn]] void abort(int code);

int rank();  // 0 on one rank
int size();  // 1 on one rank
// This rank's number among the ranks of its node (MPI_COMM_TYPE_SHARED).
int local_rank();
void barrier();

double sum(double v);
double min(double v);
double max(double v);
std::int64_t sum(std::int64_t v);
// Rank 0's value on every rank.
double broadcast(double v);
std::int64_t broadcast(std::int64_t v);
std::string broadcast(const std::string& s);
// The rank `root`'s string on every rank.
std::string broadcast_from(int root, const std::string& s);
// The lowest rank for which `yes` is true, on every rank; size() when none.
int first_rank(bool yes);

}  // namespace gf::mpi
