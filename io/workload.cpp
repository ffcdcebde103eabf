#include "io/workload.hpp"

#include <stdexcept>
#include <string>

#include "io/case_raymarch.hpp"
#include "io/case_sections.hpp"
#include "io/case_pde.hpp"
#include "io/case_wave.hpp"

namespace gf {
namespace {

const char* steps_key(const Case&) { return "steps"; }
std::vector<std::string> just_u(const Case&) { return {"u"}; }

namespace fs = std::filesystem;
using schema::Map;

void read_heat(const Map& top, Case& c, const fs::path& base_dir) {
  case_sections::read_heat(top, c, base_dir, c.heat);
}
void emit_heat(YAML::Emitter& out, const Case& c) { case_sections::emit_heat(out, c.heat); }
void read_laplace(const Map& top, Case& c, const fs::path&) {
  case_sections::read_laplace(top, c, c.laplace);
}
void emit_laplace(YAML::Emitter& out, const Case& c) { case_sections::emit_laplace(out, c.laplace); }
void read_stencil(const Map& top, Case& c, const fs::path&) {
  case_sections::read_stencil(top, c.grid, c.stencil);
}
void emit_stencil(YAML::Emitter& out, const Case& c) { case_sections::emit_stencil(out, c.stencil); }
void read_raymarch(const Map& top, Case& c, const fs::path& base_dir) {
  raymarch_case::read_raymarch(top, c, base_dir, c.raymarch);
}
void emit_raymarch(YAML::Emitter& out, const Case& c) {
  raymarch_case::emit(out, "raymarch", c.raymarch, false);
}
void read_wave(const Map& top, Case& c, const fs::path&) { wave_case::read(top, c, c.wave); }
void emit_wave(YAML::Emitter& out, const Case& c) { wave_case::emit(out, c.wave); }

// A source or Dirichlet value that reads t is evaluated between steps, and a
// variable alpha runs on the pde executor: one step a pass, both.
bool heat_blockable(const Case& c) {
  return !c.heat.implicit() && c.grid.ndim >= 2 && !c.heat.uses_t() && !c.heat.variable_alpha();
}
bool stencil_blockable(const Case& c) { return star_order(c.stencil.points, c.grid); }
bool laplace_blockable(const Case& c) {
  return c.laplace.method == LaplaceMethod::Jacobi && c.grid.ndim >= 2;
}

constexpr std::string_view kHeatRestart[] = {"steps", "t_end", "time_block"};
constexpr std::string_view kLaplaceRestart[] = {"max_iters", "tolerance", "check_every"};
constexpr std::string_view kStencilRestart[] = {"steps", "time_block"};
constexpr std::string_view kWaveRestart[] = {"steps", "t_end"};
constexpr std::string_view kPdeRestart[] = {"steps", "t_end"};
std::vector<std::string> pde_fields(const Case& c) {
  std::vector<std::string> out;
  for (const PdeFieldSpec& f : c.pde.fields) out.push_back(f.name);
  return out;
}
void emit_pde(YAML::Emitter& out, const Case& c) { pde_case::emit(out, c); }

const WorkloadInfo kInfo[] = {
    {Workload::Heat, "heat", true, [](const Case& c) { return c.heat.steps; },
     [](Case& c, std::int64_t n) {
       c.heat.steps = n;
       c.heat.use_t_end = false;
       c.heat.last_dt = c.heat.dt;
     },
     [](const Case& c) { return c.heat.use_t_end ? "t_end" : "steps"; }, kHeatRestart, just_u,
     true, read_heat, emit_heat, [](const Case& c) { return c.heat.time_block; }, heat_blockable,
     false, true},
    {Workload::Laplace, "laplace", false, [](const Case& c) { return c.laplace.max_iters; },
     [](Case& c, std::int64_t n) { c.laplace.max_iters = n; },
     [](const Case&) { return "max_iters"; }, kLaplaceRestart,
     [](const Case& c) {
       if (c.laplace.method == LaplaceMethod::Cg) return std::vector<std::string>{"u", "cg_r", "cg_p"};
       return std::vector<std::string>{"u"};
     },
     true, read_laplace, emit_laplace, [](const Case& c) { return c.laplace.time_block; },
     laplace_blockable},
    {Workload::Stencil, "stencil", true, [](const Case& c) { return c.stencil.steps; },
     [](Case& c, std::int64_t n) { c.stencil.steps = n; }, steps_key, kStencilRestart, just_u,
     true, read_stencil, emit_stencil, [](const Case& c) { return c.stencil.time_block; },
     stencil_blockable},
    {Workload::Raymarch, "raymarch", false, nullptr, nullptr, nullptr, {}, nullptr, false,
     read_raymarch, emit_raymarch, nullptr, nullptr},
    {Workload::Wave, "wave", true, [](const Case& c) { return c.wave.steps; },
     [](Case& c, std::int64_t n) {
       c.wave.steps = n;
       c.wave.use_t_end = false;
     },
     [](const Case& c) { return c.wave.use_t_end ? "t_end" : "steps"; }, kWaveRestart,
     [](const Case&) { return std::vector<std::string>{"u", "u_prev"}; }, true, read_wave,
     emit_wave, nullptr, nullptr, true},
    {Workload::Pde, "pde", true, [](const Case& c) { return c.pde.steps; },
     [](Case& c, std::int64_t n) {
       c.pde.steps = n;
       c.pde.use_t_end = false;
     },
     [](const Case& c) { return c.pde.use_t_end ? "t_end" : "steps"; }, kPdeRestart, pde_fields,
     true, pde_case::read, emit_pde, nullptr, nullptr, false, true, pde_fields},
};

}  // namespace

std::span<const WorkloadInfo> workloads() { return kInfo; }

const WorkloadInfo* workload_named(std::string_view name) {
  for (const WorkloadInfo& i : kInfo)
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<std::string> output_field_names(const Case& c) {
  const WorkloadInfo& w = workload_info(c.workload);
  return w.output_fields ? w.output_fields(c) : std::vector<std::string>{"u"};
}

const WorkloadInfo& workload_info(Workload w) {
  for (const WorkloadInfo& i : kInfo)
    if (i.workload == w) return i;
  throw std::logic_error("no workload_info entry for workload " + std::to_string(int(w)));
}

}  // namespace gf
