#include "core/mpi.hpp"

#include <cstdlib>
#include <initializer_list>

#if defined(GRIDFORGE_HAVE_MPI)
#include <mpi.h>
#endif

namespace gf::mpi {

#if defined(GRIDFORGE_HAVE_MPI)

namespace {
bool active() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}
double reduce(double v, MPI_Op op) {
  if (!active()) return v;
  double out = v;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return out;
}
}  // namespace

bool built() { return true; }

bool launched() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var)) return true;
  return false;
}

void init(int* argc, char*** argv) {
  if (!launched() || active()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
}

void finalize() {
  if (active()) MPI_Finalize();
}

void abort(int code) {
  if (active() && size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

int rank() {
  if (!active()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  if (!active()) return 1;
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int local_rank() {
  if (!active()) return 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

void barrier() {
  if (active()) MPI_Barrier(MPI_COMM_WORLD);
}

double sum(double v) { return reduce(v, MPI_SUM); }
double min(double v) { return reduce(v, MPI_MIN); }
double max(double v) { return reduce(v, MPI_MAX); }
std::int64_t sum(std::int64_t v) {
  if (!active()) return v;
  std::int64_t out = v;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
double broadcast(double v) {
  if (active()) MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return v;
}
std::int64_t broadcast(std::int64_t v) {
  if (active()) MPI_Bcast(&v, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  return v;
}
std::string broadcast(const std::string& s) { return broadcast_from(0, s); }
std::string broadcast_from(int root, const std::string& s) {
  if (!active()) return s;
  std::string out = s;
  std::int64_t n = std::int64_t(s.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
  out.resize(std::size_t(n));
  MPI_Bcast(out.data(), int(n), MPI_CHAR, root, MPI_COMM_WORLD);
  return out;
}
int first_rank(bool yes) {
  if (!active()) return yes ? 0 : 1;
  int r = yes ? rank() : size();
  MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return r;
}

#else

bool built() { return false; }
bool launched() { return false; }
void init(int*, char***) {}
void finalize() {}
void abort(int code) { std::exit(code); }
int rank() { return 0; }
int size() { return 1; }
int local_rank() { return 0; }
void barrier() {}
double sum(double v) { return v; }
double min(double v) { return v; }
double max(double v) { return v; }
std::int64_t sum(std::int64_t v) { return v; }
double broadcast(double v) { return v; }
std::int64_t broadcast(std::int64_t v) { return v; }
std::string broadcast(const std::string& s) { return s; }
std::string broadcast_from(int, const std::string& s) { return s; }
int first_rank(bool yes) { return yes ? 0 : 1; }

#endif

}  // namespace gf::mpi
