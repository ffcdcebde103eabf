// The CPU path's thread counts and time_block auto's tuning rule (issue 25).
#include <catch2/catch.hpp>

#include <omp.h>

#include "core/threads.hpp"
#include "solvers/stepper.hpp"

using namespace gf;

TEST_CASE("a loop takes the threads its points feed, at least 1, at most the most", "[threads]") {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(8);
  CHECK(cpu::threads_for(201) == 1);                          // heat1d_rod
  CHECK(cpu::threads_for(65 * 65) == 1);                      // laplace2d_plate
  CHECK(cpu::threads_for(0) == 1);
  CHECK(cpu::threads_for(2 * cpu::points_per_thread()) == 2);
  CHECK(cpu::threads_for(2 * cpu::points_per_thread() - 1) == 1);
  CHECK(cpu::threads_for(std::int64_t(512) * 512 * 512) == 8);  // capped at the most
  CHECK(cpu::threads_for(1000, 100) == 8);                    // a dearer point: a smaller grain
  CHECK(cpu::threads_for_rays(480 * 320) == 8);
  omp_set_num_threads(1);
  CHECK(cpu::threads_for(std::int64_t(512) * 512 * 512) == 1);
  omp_set_num_threads(saved);
}

TEST_CASE("time_block auto on the CPU times nothing where passes cannot pay", "[threads]") {
  const std::size_t cache = std::size_t(32) << 20;  // 32 MiB
  SECTION("fields in half the cache: one step a pass, untimed") {
    const CpuTuning t = cpu_time_block_tuning(65 * 65, 8, 100000, 4, cache);
    CHECK_FALSE(t.measure);
    CHECK(t.fields_bytes == 2 * 65 * 65 * 8);
    CHECK(t.why.find("fit in the CPU's cache") != std::string::npos);
    // 2 × 1 Mi points × 8 bytes = 16 MiB: half of 32 MiB still fits
    CHECK_FALSE(cpu_time_block_tuning(std::int64_t(1) << 20, 8, 100000, 4, cache).measure);
  }
  SECTION("larger fields: timed only when the run repays it 20 times") {
    const std::int64_t big = std::int64_t(256) * 256 * 256;  // 256 MiB of float64 fields
    // the timing takes Σ 4k = 40 steps for depths 1 to 4
    CHECK_FALSE(cpu_time_block_tuning(big, 8, 799, 4, cache).measure);
    CHECK(cpu_time_block_tuning(big, 8, 799, 4, cache).why.find("too few") != std::string::npos);
    CHECK(cpu_time_block_tuning(big, 8, 800, 4, cache).measure);
    CHECK(cpu_time_block_tuning(big, 4, 100000, 2, cache).measure);
  }
}
