// How many threads a CPU loop takes: the one place that decides it.
//
// Every parallel loop of the CPU path ends at a barrier, and a barrier waits
// for the slowest thread of the team. On a machine whose cores something
// else also uses, one of the team is often descheduled, and the barrier then
// waits for the scheduler (milliseconds) however little work the loop had:
// a 201-point rod took 15-100 times longer beside two busy processes than
// idle (issue 25, docs/performance.md). So a loop takes only as many threads
// as its work can feed, one per kPointsPerThread points, and at most
// max_threads(). Small grids then run on one thread, with no barrier to wait
// at; large ones on every thread, where a step is long next to the
// scheduler's delays.
#pragma once
#include <omp.h>

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace gf::cpu {

// Points a loop must give each thread for the thread to pay for itself
// (docs/performance.md, "The CPU path on a shared machine"): 4-8 µs of the
// cheapest updates (explicit heat, Jacobi), more of the dearer ones (the
// generic stencil), against a team's start and barrier of a few µs on idle
// cores. 65536 protected a 2-core machine under load, but left a 256² stencil
// or a 64³ CG on one or four of 16 idle cores, 5-8 times slower than all 16
// (H100 host, 2026-11-26). GRIDFORGE_POINTS_PER_THREAD sets another grain.
inline constexpr std::int64_t kPointsPerThread = 8192;

// The grain in use: GRIDFORGE_POINTS_PER_THREAD when it is a whole number
// ≥ 1, else kPointsPerThread; read once.
inline std::int64_t points_per_thread() {
  static const std::int64_t grain = [] {
    const char* e = std::getenv("GRIDFORGE_POINTS_PER_THREAD");
    char* end = nullptr;
    const long long v = e ? std::strtoll(e, &end, 10) : 0;
    return (e && end && *end == '\0' && v >= 1) ? std::int64_t(v) : kPointsPerThread;
  }();
  return grain;
}

// The most threads any loop takes: `--threads N`, else OMP_NUM_THREADS, else
// one per core (OpenMP's nthreads-var, which --threads sets).
inline int max_threads() { return omp_get_max_threads(); }

// Threads for a loop over `work` points: one per `grain` points (the
// kPointsPerThread default; a cheaper or dearer point moves it), at least 1,
// at most max_threads(). The same work always gets the same count, so
// reductions (dot products, sums) are the same bits from run to run.
inline int threads_for(std::int64_t work, std::int64_t grain = points_per_thread()) {
  const std::int64_t t = work / std::max<std::int64_t>(grain, 1);
  return int(std::clamp<std::int64_t>(t, 1, max_threads()));
}

// Threads for an image of `rays` rays: a ray is hundreds of samples, so a
// thread per 1024 rays (the raymarch executor's rows are handed out
// dynamically, as rays differ in length).
inline int threads_for_rays(std::int64_t rays) { return threads_for(rays, 1024); }

// Threads that encode a PNG (io/png_encode.hpp; in-situ frames and a
// raymarch run's image): GRIDFORGE_PNG_THREADS when it is a whole number
// ≥ 1, else max_threads(). The PNG's bytes are the same for any count.
inline int png_threads() {
  const char* e = std::getenv("GRIDFORGE_PNG_THREADS");
  char* end = nullptr;
  const long long v = e ? std::strtoll(e, &end, 10) : 0;
  return (e && end && *end == '\0' && v >= 1) ? int(std::min<long long>(v, 4096)) : max_threads();
}

// The CPU's last-level cache in bytes, as the C library reports it (L3,
// else L2), or 8 MiB when it does not say. Temporal blocking's auto asks it:
// on fields that fit, a pass of several steps cannot pay (solvers/stepper.cpp).
inline std::size_t last_level_cache_bytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
    if (const long b = sysconf(name); b > 0) return std::size_t(b);
  return std::size_t(8) << 20;
}

}  // namespace gf::cpu
