#include "core/process.hpp"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gf {

double process_seconds() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // The command name (field 2) is in parentheses and may hold spaces: count
  // fields after its closing one. starttime is field 22.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i)
    if (!(rest >> field)) return -1;
  char* end = nullptr;
  const unsigned long long ticks = std::strtoull(field.c_str(), &end, 10);
  const long hz = sysconf(_SC_CLK_TCK);
  timespec now{};
  if (!end || *end != '\0' || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
  const double s = double(now.tv_sec) + 1e-9 * double(now.tv_nsec) - double(ticks) / double(hz);
  return s >= 0 ? s : -1;
}

std::pair<double, double> whole_process(std::chrono::steady_clock::time_point run_start) {
  const double run =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  const double total = process_seconds();
  return total >= run ? std::pair{total - run, total} : std::pair{0.0, run};
}

std::int64_t host_memory_peak_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return std::int64_t(u.ru_maxrss) * 1024;  // Linux: kilobytes
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace gf
