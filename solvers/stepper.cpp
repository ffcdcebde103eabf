#include "solvers/stepper.hpp"
#include "solvers/registry.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/mpi.hpp"
#include "core/rank_errors.hpp"
#include "grid/decomp.hpp"
#include "io/expression.hpp"
#include "io/output.hpp"
#include "core/threads.hpp"
#include "kernels/expr/expr_exec.hpp"
#include "solvers/expr_fill.hpp"
#include "solvers/input_values.hpp"

namespace gf {

namespace {

// initial.file's values at the points of c.grid (a rank's block of the
// global dataset, its halo wrapping around), checked in T.
template <class T>
std::vector<T> file_values(const Case& c) {
  const InitialSpec& in = c.initial;
  const Grid& g = c.grid;
  std::vector<T> u(static_cast<std::size_t>(g.size()));
  const std::vector<double> v = io::h5_read_dataset(in.path, in.dataset);
  if (v.size() == std::size_t((c.decomp ? c.decomp->global : c.grid).size()))
    check_values<T>(v, c.decomp ? c.decomp->global : c.grid, in.loc, "initial.file",
                    fmt::format("dataset '{}' in '{}'", in.dataset, in.path));
  if (c.decomp) {  // a rank's block of the global dataset (halo indices wrap)
    const Grid& gg = c.decomp->global;
    if (v.size() != std::size_t(gg.size()))
      throw CaseError(SourceLoc{c.file}, "initial.file.dataset",
                      "dataset '" + in.dataset + "' in '" + in.path + "' has " +
                          std::to_string(v.size()) + " values; the grid has " +
                          std::to_string(gg.size()));
    auto wrap = [&](int a, std::int64_t i) {
      return ((i + g.offset[a]) % gg.n[a] + gg.n[a]) % gg.n[a];
    };
    for (std::int64_t k = 0; k < g.n[2]; ++k)
      for (std::int64_t j = 0; j < g.n[1]; ++j)
        for (std::int64_t i = 0; i < g.n[0]; ++i)
          u[g.index(i, j, k)] = static_cast<T>(v[gg.index(wrap(0, i), wrap(1, j), wrap(2, k))]);
    return u;
  }
  if (v.size() != u.size())
    throw CaseError(SourceLoc{c.file}, "initial.file.dataset",
                    "dataset '" + in.dataset + "' in '" + in.path + "' has " +
                        std::to_string(v.size()) + " values; the grid has " +
                        std::to_string(u.size()));
  std::transform(v.begin(), v.end(), u.begin(), [](double d) { return static_cast<T>(d); });
  return u;
}

// The CaseError of face f's Dirichlet value at the point whose x-fastest
// index in g is `point`.
template <class T>
[[noreturn]] void dirichlet_not_a_value(const Case& c, int f, std::int64_t point) {
  const Grid& g = c.grid;
  const FaceBc& bc = c.boundary[f];
  std::int64_t ijk[3] = {0, 0, 0};
  g.layout().position(point, ijk[0], ijk[1], ijk[2]);
  const double p[3] = {g.coord(0, ijk[0]), g.coord(1, ijk[1]), g.coord(2, ijk[2])};
  const double v = Expression(bc.value, c.parameters)(p[0], p[1], p[2]);
  std::string bad = not_a_value<T>(v);
  if (bad.empty())  // muparser's value fits where the executor's did not (round-off at T's limit)
    bad = fmt::format("{:g} does not fit in {}", v, to_string(precision_of<T>()));
  throw CaseError(bc.value.loc, bc.value.key,
                  fmt::format("the value at ({}) = ({}): {}",
                              std::string("x, y, z").substr(0, 3 * g.ndim - 2),
                              fmt::format("{:g}", fmt::join(p, p + g.ndim, ", ")), bad));
}

}  // namespace

template <class T>
double set_initial_state(const Case& c, Backend<T>& backend, Field<T>& f) {
  const Grid& g = c.grid;
  const InitialSpec& in = c.initial;
  double upload_ms = 0;
  std::vector<ExprCode> codes;
  codes.reserve(1 + kFaces);  // the parts point into it: no reallocation
  std::vector<ExprPart> parts;
  std::vector<int> face_of;  // each part's face, −1 for the initial condition
  switch (in.kind) {
    case InitialSpec::Kind::Value:
      if (const std::string bad = not_a_value<T>(in.value); !bad.empty())
        throw CaseError(in.loc, "initial.value", bad);
      codes.push_back(ExprCode::of_value(in.value));
      break;
    case InitialSpec::Kind::Expr:
      codes.push_back(Expression(in.expr, c.parameters).code());
      break;
    case InitialSpec::Kind::File: {
      // a file one node cannot read stops every rank before the upload's halo exchange
      const std::vector<T> u =
          on_every_rank(shared_by_ranks(backend), [&] { return file_values<T>(c); });
      auto timer = backend.make_timer();
      timer->start();
      backend.upload(u.data(), f);
      upload_ms = timer->stop_ms();
      break;
    }
  }
  if (!codes.empty()) {
    parts.push_back(ExprPart{&codes.back(), Box::whole(f.layout().n)});
    face_of.push_back(-1);
  }
  for (int face = 0; face < 2 * g.ndim; ++face) {
    const FaceBc& bc = c.boundary[face];
    if (bc.type != BcType::Dirichlet) continue;
    codes.push_back(Expression(bc.value, c.parameters).code());
    parts.push_back(ExprPart{&codes.back(), face_box(g, face)});
    face_of.push_back(face);
  }
  // Over MPI ranks every rank fills (the fill refreshes the halos), even one
  // that holds no Dirichlet face of a case whose initial state is a file.
  const bool together = shared_by_ranks(backend);
  if (parts.empty() && !together) return upload_ms;
  const std::vector<std::int64_t> bad = make_expr_exec(backend)->fill(parts, ExprPoints::of(g), f);
  // Each rank checks its own block (a Dirichlet face is its owner's): one
  // that fails stops every rank, before their next collective call.
  on_every_rank(together, [&] {
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (bad[p] < 0) continue;
      if (face_of[p] < 0) expression_not_finite<T>(in.expr, c.parameters, g, bad[p]);
      dirichlet_not_a_value<T>(c, face_of[p], bad[p]);
    }
  });
  return upload_ms;
}

template <class T>
std::vector<T> initial_state(const Case& c) {
  auto cpu = make_cpu_backend<T>();
  Field<T> f = cpu->make_field(c.grid, "the initial state");
  set_initial_state(c, *cpu, f);
  std::vector<T> u(static_cast<std::size_t>(c.grid.size()));
  cpu->download(f, u.data());
  return u;
}

Schedule output_schedule(std::int64_t total, std::int64_t every) {
  // Every's steps past the last are never reached: the run stops there.
  return Schedule{Every{every}, AtSteps{{total}}};
}

// operator new's alignment (16) is enough for T.
template <class T>
std::vector<unsigned char> download_bytes(Backend<T>& backend, const Field<T>& f) {
  std::vector<unsigned char> host(f.points() * sizeof(T));
  backend.download(f, reinterpret_cast<T*>(host.data()));
  return host;
}

template <class T>
void upload_bytes(Backend<T>& backend, const std::vector<unsigned char>& host, Field<T>& f) {
  if (host.size() != f.points() * sizeof(T))
    throw IoError(fmt::format("checkpoint: a field of {} bytes for {} grid points of {} bytes",
                              host.size(), f.points(), sizeof(T)));
  backend.upload(reinterpret_cast<const T*>(host.data()), f);
}

template <class T>
void axis_boundaries(const Case& c, AxisBc<T> (&bc)[3]) {
  const Grid& g = c.grid;
  for (int ax = 0; ax < g.ndim; ++ax) {
    const FaceBc& lo = c.boundary[2 * ax];
    const FaceBc& hi = c.boundary[2 * ax + 1];
    bc[ax].lo = lo.type;
    bc[ax].hi = hi.type;
    bc[ax].ghost_lo = static_cast<T>(2.0 * g.h[ax] * lo.gradient);
    bc[ax].ghost_hi = static_cast<T>(2.0 * g.h[ax] * hi.gradient);
    // Every face's gradient, whatever its type here: a face inside the grid
    // of MPI ranks keeps the case's gradient (local_case changes only its
    // type), and only Neumann faces have one (0 otherwise), so every rank
    // finds a bad one alike, not only the rank that holds the face.
    for (int side = 0; side < 2; ++side) {
      const FaceBc& f = side ? hi : lo;
      if (const std::string bad = not_a_value<T>(2.0 * g.h[ax] * f.gradient); !bad.empty())
        throw CaseError(SourceLoc{c.file}, fmt::format("boundary.{}.gradient", face_name(2 * ax + side)),
                        fmt::format("the gradient {:g} times twice the spacing: {}", f.gradient, bad));
    }
  }
}

template <class T>
MemoryNeed stepper_memory_needed(const Case& c) {
  MemoryNeed need = workload_memory_needed<T>(c);
  // 1D and 2D frames are drawn on the host: nothing on the device
  if (c.render.enabled && c.render.ndim == 3 && (!c.decomp || mpi::rank() == 0)) {
    // the in-situ frame, RGBA floats, and its 8-bit RGB for the download;
    // over several ranks rank 0 draws it from the whole field, gathered
    // into a field of its own
    need.bytes += std::size_t(c.render.width) * std::size_t(c.render.height) * (16 + 3);
    if (c.decomp) {
      need.fields += 1;
      need.bytes += std::size_t(c.decomp->global.size()) * sizeof(T);
    }
  }
  return need;
}

namespace {
std::string mib(std::size_t bytes) { return fmt::format("{:.3g} MiB", double(bytes) / 1048576.0); }
}  // namespace

void add_time_block_pick(nlohmann::json& t, const TimeBlockPick& p) {
  t["time_block_auto"] = {{"measured", p.measured}, {"tuning_s", p.tuning_s}};
}

CpuTuning cpu_time_block_tuning(std::int64_t points, std::size_t value_bytes, std::int64_t steps,
                                 int deepest, std::size_t cache_bytes) {
  CpuTuning t;
  t.fields_bytes = 2 * std::size_t(points) * value_bytes;
  // On fields that stay in the cache a pass saves no memory traffic and adds
  // its wavefront's barriers: one step a pass, nothing to time.
  if (t.fields_bytes <= cache_bytes / 2) {
    t.why = fmt::format("the fields ({}) fit in the CPU's cache ({}), where passes do not pay",
                        mib(t.fields_bytes), mib(cache_bytes));
    return t;
  }
  // A warm-up and 3 timed passes of each depth: Σ 4k steps
  const std::int64_t cost = 2 * std::int64_t(deepest) * (deepest + 1);
  if (steps < kCpuTuningShare * cost) {
    t.why = fmt::format("{} steps are too few to repay timing the depths ({} steps)", steps, cost);
    return t;
  }
  t.measure = true;
  return t;
}

template <class T>
TimeBlockPick fastest_time_block(Backend<T>& backend, int deepest, std::int64_t steps,
                                 std::int64_t points, const char* what,
                                 const std::function<void(int)>& pass) {
  TimeBlockPick pick;
  if (deepest <= 1 || steps < kAutoTimeBlockMinSteps) return pick;
  const auto say = [&](int k, const std::string& why) {
    spdlog::info("{} (time_block auto: {})",
                 fmt::format(fmt::runtime(what), k, k == 1 ? "" : "s"), why);
  };
  const bool cpu = !backend.is_gpu();
  if (cpu) {
    // over MPI ranks the largest block decides, so that all choose alike
    const CpuTuning t = cpu_time_block_tuning(std::int64_t(mpi::max(double(points))), sizeof(T),
                                              steps, deepest, cpu::last_level_cache_bytes());
    if (!t.measure) {
      say(1, t.why);
      return pick;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto timer = backend.make_timer();
  double best_ms = 0;
  for (int k = 1; k <= deepest; ++k) {
    pass(k);
    // The GPU: 3 passes timed together. The CPU: the fastest of 3 passes,
    // the one least disturbed by whatever else runs on its cores.
    double ms = cpu ? std::numeric_limits<double>::infinity() : 0.0;
    if (!cpu) timer->start();
    for (int r = 0; r < 3; ++r) {
      if (cpu) timer->start();
      pass(k);
      if (cpu) ms = std::min(ms, timer->stop_ms());
    }
    if (!cpu) ms = timer->stop_ms() / 3.0;
    // per step; over MPI ranks the slowest rank's, so that all choose alike
    ms = mpi::max(ms / k);
    if (k == 1 || ms < 0.95 * best_ms) {
      if (k > 1) pick.k = k;
      best_ms = ms;
    }
  }
  pick.measured = true;
  pick.tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  say(pick.k, fmt::format("the fastest measured here, {:.4g} ms a step; timing the depths took "
                          "{:.3g} s",
                          best_ms, pick.tuning_s));
  return pick;
}

template TimeBlockPick fastest_time_block<float>(Backend<float>&, int, std::int64_t, std::int64_t,
                                                 const char*, const std::function<void(int)>&);
template TimeBlockPick fastest_time_block<double>(Backend<double>&, int, std::int64_t,
                                                  std::int64_t, const char*,
                                                  const std::function<void(int)>&);
template std::vector<float> initial_state<float>(const Case&);
template std::vector<double> initial_state<double>(const Case&);
template MemoryNeed stepper_memory_needed<float>(const Case&);
template MemoryNeed stepper_memory_needed<double>(const Case&);
template double set_initial_state<float>(const Case&, Backend<float>&, Field<float>&);
template double set_initial_state<double>(const Case&, Backend<double>&, Field<double>&);
template std::vector<unsigned char> download_bytes<float>(Backend<float>&, const Field<float>&);
template std::vector<unsigned char> download_bytes<double>(Backend<double>&,
                                                           const Field<double>&);
template void upload_bytes<float>(Backend<float>&, const std::vector<unsigned char>&,
                                  Field<float>&);
template void upload_bytes<double>(Backend<double>&, const std::vector<unsigned char>&,
                                   Field<double>&);
template void axis_boundaries<float>(const Case&, AxisBc<float> (&)[3]);
template void axis_boundaries<double>(const Case&, AxisBc<double> (&)[3]);

}  // namespace gf
