// The whole process, for timing.json (docs/usage.md#timingjson): how long it
// has run and the most host memory it has held.
#pragma once
#include <chrono>
#include <cstdint>
#include <utility>

namespace gf {

// Seconds since this process was started (exec), or a negative number when
// the system does not say. Linux: /proc/self/stat's start time (clock ticks
// since boot, so up to one tick, 10 ms, early) against CLOCK_BOOTTIME.
double process_seconds();

// {startup, total} for timing.json's phases: the seconds the process ran
// before `run_start` (a run's own clock starts there) and all it has run
// until now. Without process_seconds(): 0 and the seconds since run_start.
std::pair<double, double> whole_process(std::chrono::steady_clock::time_point run_start);

// The peak resident set size of this process in bytes (getrusage's
// ru_maxrss, the kernel's high-water mark VmHWM), 0 when unknown.
std::int64_t host_memory_peak_bytes();

// The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): what
// a piece of work costs whatever else the machine runs (the output
// compressors' per-core speeds; a wall time on a shared machine says little).
double thread_cpu_seconds();

}  // namespace gf
