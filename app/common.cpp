#include "app/common.hpp"

#include <omp.h>

#include <charconv>
#include <cstdlib>
#include <string>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include <fmt/core.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "io/case_schema.hpp"
#include "kernels/device.hpp"
#include "solvers/registry.hpp"
#include "solvers/prepare.hpp"

namespace gf::app {

void setup_logging(bool quiet) {
  auto logger = spdlog::stderr_color_st("gridforge");
  logger->set_pattern("%^%v%$");
  logger->set_level(quiet ? spdlog::level::err : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

std::string device_name_hint(const std::string& request) {
  if (request.rfind("gpu", 0) == 0 || request.rfind("GPU", 0) == 0 || request == "nvidia")
    return "; use cuda or cuda:N";
  const std::string_view names[] = {"auto", "cpu", "cuda"};
  const std::string_view near = schema::nearest(request, names);
  return near.empty() ? "" : fmt::format("; did you mean '{}'?", near);
}

DeviceChoice choose_device(const std::string& request) {
  const CudaStatus& st = cuda_status();
  if (request == "cpu") return {-1, "--device cpu"};
  if (request == "auto") {
    if (st.why_unusable.empty()) return {0, "auto: a GPU is usable"};
    return {-1, "auto: no usable GPU (" + st.why_unusable + ")"};
  }
  int index = 0;
  if (request.rfind("cuda", 0) == 0) {
    const std::string rest = request.substr(4);
    if (!rest.empty()) {
      if (rest[0] != ':' || rest.size() < 2 ||
          rest.find_first_not_of("0123456789", 1) != std::string::npos)
        throw UsageError("--device: '" + shown(request) +
                         "' is not one of auto, cpu, cuda, cuda:N" + device_name_hint(request));
      if (std::from_chars(rest.data() + 1, rest.data() + rest.size(), index).ec != std::errc())
        throw UsageError(fmt::format("--device {}: GPU number {} is out of range (cuda:0 is the "
                                     "first GPU)",
                                     shown(request, 40), shown(rest.substr(1), 40)));
    }
    if (!st.why_unusable.empty())
      throw DeviceError("--device " + request + ": no usable GPU: " + st.why_unusable +
                        "; use --device cpu");
    if (index >= static_cast<int>(st.gpus.size()))
      throw DeviceError(fmt::format("--device {}: this machine has {} GPU(s); use cuda:0..{} or "
                                    "--device cpu",
                                    request, st.gpus.size(), st.gpus.size() - 1));
    return {index, "--device " + request};
  }
  throw UsageError("--device: '" + shown(request) + "' is not one of auto, cpu, cuda, cuda:N" +
                   device_name_hint(request));
}

template <class T>
std::unique_ptr<Backend<T>> make_backend(const DeviceChoice& d) {
  if (d.gpu < 0) return make_cpu_backend<T>();
  return make_cuda_backend<T>(d.gpu);
}
template std::unique_ptr<Backend<float>> make_backend<float>(const DeviceChoice&);
template std::unique_ptr<Backend<double>> make_backend<double>(const DeviceChoice&);

namespace {
bool json_stdout = false;
}
void set_json_stdout(bool json) { json_stdout = json; }
std::ostream& table_out() { return json_stdout ? std::cerr : std::cout; }

void print_json_summary(const nlohmann::json& j) {
  errno = 0;
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  if (!std::cout)  // e.g. > /dev/full: the summary asked for is lost, exit 1
    throw IoError(fmt::format("cannot write the --json summary to standard output: {}",
                              errno ? std::strerror(errno) : "write failed"));
}

std::string joined_command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return s;
}

void apply_threads(const std::optional<std::string>& threads) {
  if (!threads) return;
  const std::string& s = *threads;
  int n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 1 || n > kMaxThreads)
    throw UsageError(fmt::format("command line: --threads: '{}' is not a whole number of threads "
                                 "from 1 to {}",
                                 s, kMaxThreads));
  omp_set_num_threads(n);
}

nlohmann::json threads_json(const std::optional<std::string>& threads) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  // how idle threads wait (app/main.cpp, wait_passively)
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::string wait = policy ? std::string(policy) : spin ? "GOMP_SPINCOUNT=" + std::string(spin)
                                                         : "libgomp's default";
  if (policy && std::getenv("GRIDFORGE_WAIT_POLICY_SET")) wait += " (gridforge's default)";
  return {{"max", omp_get_max_threads()},
          {"from", threads ? "--threads" : (env && *env) ? "OMP_NUM_THREADS" : "cores"},
          {"wait_policy", wait}};
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return buf;
}

Case load_case_with(const std::string& path, std::vector<std::string> overrides,
                    const std::optional<std::string>& time_block, bool prepare,
                    const std::string* text) {
  const auto load_case = [&](const std::string& p, const std::vector<std::string>& o) {
    return text ? gf::load_case_text(*text, p, o) : gf::load_case(p, o);
  };
  if (time_block) {
    const Case c = load_case(path, overrides);
    if (!workload_entry(c.workload).time_block)
      throw UsageError("--time-block: temporal blocking is for heat, stencil and laplace cases; " +
                       path + " is a " + to_string(c.workload) + " case");
    overrides.push_back(std::string(to_string(c.workload)) + ".time_block=" + *time_block);
  }
  Case c = load_case(path, overrides);
  return prepare ? prepare_case(std::move(c)) : c;
}

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  // Three digits, never an exponent: 1.5 GiB, 12.3 GiB, 715 GiB, 1010 MiB.
  if (b >= 1000) return fmt::format("{:.0f} {}", b, unit[u]);
  return fmt::format("{:.3g} {}", b, unit[u]);
}

}  // namespace gf::app
