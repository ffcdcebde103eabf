#include "io/workload.hpp"

#include <stdexcept>
#include <string>

namespace gf {
namespace {

const char* steps_key(const Case&) { return "steps"; }
std::vector<std::string> just_u(const Case&) { return {"u"}; }

constexpr std::string_view kHeatRestart[] = {"steps", "t_end", "time_block"};
constexpr std::string_view kLaplaceRestart[] = {"max_iters", "tolerance", "check_every"};
constexpr std::string_view kStencilRestart[] = {"steps", "time_block"};
constexpr std::string_view kWaveRestart[] = {"steps", "t_end"};

const WorkloadInfo kInfo[] = {
    {Workload::Heat, "heat", true, [](const Case& c) { return c.heat.steps; },
     [](Case& c, std::int64_t n) {
       c.heat.steps = n;
       c.heat.use_t_end = false;
       c.heat.last_dt = c.heat.dt;
     },
     [](const Case& c) { return c.heat.use_t_end ? "t_end" : "steps"; }, kHeatRestart, just_u},
    {Workload::Laplace, "laplace", false, [](const Case& c) { return c.laplace.max_iters; },
     [](Case& c, std::int64_t n) { c.laplace.max_iters = n; },
     [](const Case&) { return "max_iters"; }, kLaplaceRestart,
     [](const Case& c) {
       if (c.laplace.method == LaplaceMethod::Cg) return std::vector<std::string>{"u", "cg_r", "cg_p"};
       return std::vector<std::string>{"u"};
     }},
    {Workload::Stencil, "stencil", true, [](const Case& c) { return c.stencil.steps; },
     [](Case& c, std::int64_t n) { c.stencil.steps = n; }, steps_key, kStencilRestart, just_u},
    {Workload::Raymarch, "raymarch", false, nullptr, nullptr, nullptr, {}, nullptr},
    {Workload::Wave, "wave", true, [](const Case& c) { return c.wave.steps; },
     [](Case& c, std::int64_t n) {
       c.wave.steps = n;
       c.wave.use_t_end = false;
     },
     [](const Case& c) { return c.wave.use_t_end ? "t_end" : "steps"; }, kWaveRestart,
     [](const Case&) { return std::vector<std::string>{"u", "u_prev"}; }},
};

}  // namespace

std::span<const WorkloadInfo> workloads() { return kInfo; }

const WorkloadInfo& workload_info(Workload w) {
  for (const WorkloadInfo& i : kInfo)
    if (i.workload == w) return i;
  throw std::logic_error("no workload_info entry for workload " + std::to_string(int(w)));
}

}  // namespace gf
