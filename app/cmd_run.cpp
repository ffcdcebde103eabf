// gridforge run: load and check the case, pick the device, check memory,
// then run and write the files of SPEC §4.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>
#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "core/mpi.hpp"
#include "solvers/decompose.hpp"
#include "grid/gather.hpp"
#include "kernels/dist/dist_backend.hpp"
#include "gf_version.hpp"
#include "io/checkpoint.hpp"
#include "io/folder_lock.hpp"
#include "io/output.hpp"
#include "kernels/device.hpp"
#include "solvers/stepper.hpp"
#include "solvers/prepare.hpp"
#include "solvers/registry.hpp"
#include "solvers/run.hpp"

namespace gf::app {

namespace fs = std::filesystem;

namespace {

// Memory a run needs in one place (the GPU or the host) against what is free there.
struct MemoryCheck {
  std::size_t needed = 0, available = 0;
  int fields = 0;
  std::string where;
  bool on_gpu = false;
  std::string other;  // MemoryNeed's: what else takes much of it
  std::size_t other_bytes = 0;
};

// The device's fields (and reduction scratch) on the device; on the host, a
// staging copy of the field as well (the initial state before its upload,
// then the output buffer). A GPU run checks both places, the GPU first.
template <class T>
std::vector<MemoryCheck> check_memory(const Case& c, const DeviceChoice& d) {
  const MemoryNeed need = stepper_memory_needed<T>(c);
  const std::size_t field = static_cast<std::size_t>(c.grid.size()) * sizeof(T);
  MemoryCheck host{0, host_memory_available(), 1, "the host", false};
  host.needed = field;
  if (d.gpu < 0) {
    host.needed += need.bytes;
    host.fields += need.fields;
    host.other = need.other;
    host.other_bytes = need.other_bytes;
    return {host};
  }
  const GpuInfo& g = cuda_status().gpus.at(d.gpu);
  return {{need.bytes, g.memory_free, need.fields, fmt::format("{} (GPU {})", g.name, d.gpu), true,
           need.other, need.other_bytes},
          host};
}

std::string memory_line(const Case& c, const MemoryCheck& m) {
  // Over several ranks rank 0 draws the images from the whole grid (solvers/raymarch.hpp).
  std::string shape = c.grid.shape_str(), extra;
  if (c.decomp && workload_entry(c.workload).run == RunKind::Render) {
    shape = c.decomp->global.shape_str();
    extra = " (rank 0 renders the whole volume)";
  } else if (c.decomp && c.render.enabled && mpi::rank() == 0) {
    extra = ", one of them the whole " + c.decomp->global.shape_str() + " grid for the frames";
  }
  if (!m.other.empty() && m.other_bytes > 0)
    extra += fmt::format(", and {} for {}", human_bytes(double(m.other_bytes)), m.other);
  return fmt::format("needs {} on {} for {} {} field{} of {} points{}; {} free",
                     human_bytes(double(m.needed)), m.where, m.fields, to_string(c.precision),
                     m.fields == 1 ? "" : "s", shape, extra, human_bytes(double(m.available)));
}

// Exit 3 before anything is allocated or written, with what would help.
void require_memory(const Case& c, const std::vector<MemoryCheck>& checks) {
  for (const MemoryCheck& m : checks) {
    if (m.needed <= m.available) continue;
    throw DeviceError(fmt::format("{}; use a smaller grid{}{}", memory_line(c, m),
                                  c.precision == Precision::Float64 ? ", float32" : "",
                                  m.on_gpu ? ", or --device cpu" : ""));
  }
}

// The resolved case (YAML text) as JSON: quoted scalars stay strings, plain
// ones become numbers, booleans or null when they read as such.
nlohmann::json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const YAML::Node& e : n) a.push_back(yaml_to_json(e));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Scalar: {
      const std::string v = n.Scalar();
      if (n.Tag() == "!") return v;  // quoted
      long long i;
      double d;
      bool b;
      if (YAML::convert<long long>::decode(n, i)) return i;
      if (YAML::convert<double>::decode(n, d) && std::isfinite(d)) return d;
      if (YAML::convert<bool>::decode(n, b)) return b;
      return v;
    }
    default:
      return nullptr;
  }
}

nlohmann::json memory_json(const Case& c, const MemoryCheck& m) {
  return {{"where", m.where},          {"needed_bytes", m.needed},
          {"available_bytes", m.available}, {"fits", m.needed <= m.available},
          {"text", memory_line(c, m)}};
}

nlohmann::json run_info(const Case& c, const RunArgs& a, const std::string& device,
                        const std::string& start) {
  return {{"version", GF_VERSION},       {"git_commit", GF_GIT_COMMIT},
          {"build", GF_BUILD_TYPE},      {"compiler", GF_COMPILER},
          {"command_line", a.command_line}, {"device", device},
          {"case_file", c.file},         {"case", c.resolved_yaml},
          {"start_time", start},         {"end_time", nullptr},
          {"threads", threads_json(a.threads)},
          {"status", "running"}};
}

// --restart: the checkpoint, read and checked against the case before
// anything is written. Exit 2 when it cannot be read or is another case's.
io::Checkpoint load_restart(const Case& c, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("--restart: '{}' is a folder, not a checkpoint; give the file in "
                                 "it: --restart {}",
                                 path, (fs::path(path) / kCheckpointFile).string()));
  io::Checkpoint ck;
  try {
    ck = io::read_checkpoint(path);
  } catch (const IoError& e) {
    throw UsageError(fmt::format("--restart: {}", e.what()));
  }
  if (const std::string d = io::checkpoint_mismatch(ck, c); !d.empty())
    throw UsageError(fmt::format("--restart: {}: {}{}", path, d,
                                 d.find(" in the checkpoint, ") != std::string::npos
                                     ? "; a checkpoint continues only the case that wrote it"
                                     : ""));
  if (ck.version != GF_VERSION)
    spdlog::warn("{} was written by gridforge {}; this is {}", path, ck.version, GF_VERSION);
  return ck;
}

// The output folder, made when missing; what was there before is recorded,
// so that a run refused for bad input (exit 2, found while setting up: an
// expression that is not finite on the grid, ...) can leave it as it was.
class OutputFolder {
 public:
  explicit OutputFolder(const fs::path& out) : out_(out) {
    std::error_code ec;
    if (fs::is_symlink(out, ec) && !fs::exists(out, ec))
      throw IoError(fmt::format("cannot create output folder '{}': it is a symbolic link to '{}', "
                                "which does not exist",
                                out.string(), fs::read_symlink(out, ec).string()));
    // The first missing folder on the way: removed whole by undo().
    for (fs::path p = out; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      created_ = p;
      if (p == p.parent_path()) break;
    }
    fs::create_directories(out, ec);
    if (ec) throw IoError("cannot create output folder '" + out.string() + "': " + ec.message());
    if (!created_.empty()) return;
    for (const auto& e : fs::directory_iterator(out, ec)) before_.insert(e.path().filename());
    std::ifstream in(out / "run.json", std::ios::binary);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      run_json_ = text.str();
    }
  }

  // Back to what was there: a folder made by this run goes; otherwise what
  // the run added at its top level goes and run.json is put back (when it
  // was written: wrote_files).
  void undo(bool wrote_files) const noexcept {
    if (mpi::rank() != 0) return;
    std::error_code ec;
    if (!created_.empty()) {
      fs::remove_all(created_, ec);
      return;
    }
    if (!wrote_files) return;
    for (const auto& e : fs::directory_iterator(out_, ec))
      if (!before_.contains(e.path().filename()) && e.path().filename() != io::kLockFile)
        fs::remove_all(e.path(), ec);
    try {
      if (run_json_)
        io::write_text_atomic(out_ / "run.json", *run_json_);
      else
        fs::remove(out_ / "run.json", ec);
    } catch (const Error& e) {
      spdlog::warn("could not put back {}: {}", (out_ / "run.json").string(), e.what());
    }
  }

 private:
  fs::path out_, created_;
  std::set<fs::path> before_;
  std::optional<std::string> run_json_;
};

// The folder's lock, taken by rank 0 for every rank (they share the folder).
std::unique_ptr<io::FolderLock> lock_folder(const fs::path& out) {
  std::unique_ptr<io::FolderLock> lock;
  std::string busy;
  if (mpi::rank() == 0) {
    try {
      lock = std::make_unique<io::FolderLock>(out);
    } catch (const BusyError& e) {
      busy = e.what();
    }
  }
  if (mpi::size() > 1) busy = mpi::broadcast(busy);
  if (!busy.empty()) throw BusyError(busy);
  return lock;
}

// run.json's last word on a run that failed. A full disk may refuse it too:
// the error that stopped the run is the one reported, this one is logged.
void write_failed_status(const fs::path& out, nlohmann::json& info, const std::string& status) {
  info["end_time"] = now_iso8601();
  info["status"] = status;
  try {
    io::write_json_atomic(out / "run.json", info);
  } catch (const Error& e) {
    spdlog::warn("{}", e.what());
  }
}

template <class T>
int run_typed(const Case& c, const RunArgs& a, const DeviceChoice& d) {
  const WorkloadEntry& entry = workload_entry(c.workload);
  const std::vector<MemoryCheck> mem = check_memory<T>(c, d);
  std::optional<io::Checkpoint> restart;
  if (a.restart) {
    // Checked against the whole case; each rank then keeps its block of the
    // checkpoint's global fields (any number of ranks may have written it).
    Case whole = c;
    if (c.decomp) whole.grid = c.decomp->global;
    restart = load_restart(whole, *a.restart);
    if (c.decomp)
      for (auto& [name, bytes] : restart->fields) bytes = local_block(*c.decomp, bytes, sizeof(T));
  }
  if (a.dry_run) {
    if (mpi::rank() != 0) {  // rank 0 prints for all
      require_memory(c, mem);
      return kExitOk;
    }
    if (a.json) {  // the same, as one JSON object
      require_memory(c, mem);
      nlohmann::json j = {{"status", "dry-run"},
                          {"case", yaml_to_json(YAML::Load(c.resolved_yaml))},
                          {"device", {{"name", d.gpu < 0 ? std::string("cpu") : mem[0].where},
                                      {"why", d.why}}},
                          {"memory", nlohmann::json::array()}};
      for (const MemoryCheck& m : mem) j["memory"].push_back(memory_json(c, m));
      if (restart) j["restart"] = {{"checkpoint", *a.restart}, {"step", restart->step}};
      if (entry.setup_line) j["setup"] = entry.setup_line(c);
      print_json_summary(j);
      return kExitOk;
    }
    std::cout << c.resolved_yaml << (c.resolved_yaml.ends_with('\n') ? "" : "\n");
    std::cout << fmt::format("# device: {} ({})\n", d.gpu < 0 ? "cpu" : mem[0].where, d.why);
    // A check that does not fit is said once, by require_memory's error.
    for (const MemoryCheck& m : mem)
      if (m.needed <= m.available) std::cout << "# memory: " << memory_line(c, m) << "\n";
    if (restart)
      std::cout << fmt::format("# restart: from {} at {} {}\n", *a.restart, entry.unit,
                               restart->step);
    if (entry.setup_line) std::cout << "# " << entry.setup_line(c) << "\n";
    require_memory(c, mem);
    return kExitOk;
  }
  require_memory(c, mem);
  std::unique_ptr<Backend<T>> backend = make_backend<T>(d);
  if (c.decomp) backend = make_distributed_backend<T>(std::move(backend), *c.decomp);
  const Grid& whole = c.decomp ? c.decomp->global : c.grid;
  spdlog::info("gridforge {}: case {} ({}, {} {}), device {} [{}]", GF_VERSION, c.name,
               to_string(c.workload), whole.shape_str(), to_string(c.precision),
               backend->name(), d.why);
  if (c.decomp) {
    const Decomp& dc = *c.decomp;
    std::string dims;
    for (int a = 0; a < whole.ndim; ++a) dims += (a ? " x " : "") + std::to_string(dc.dims[a]);
    spdlog::info("mpi: {} ranks as {} ({}), halo {} point{}{}, exchanged by {}", dc.nranks, dims,
                 c.ranks.empty() ? "chosen" : "grid.ranks", dc.halo, dc.halo == 1 ? "" : "s",
                 dc.time_block > 1 ? fmt::format(" (for passes of up to {} steps)", dc.time_block)
                                   : std::string(),
                 halo_transport(*backend));
  }
  if (entry.setup_line) spdlog::info("{}", entry.setup_line(c));

  const fs::path out = c.output.dir;
  const OutputFolder folder(out);
  // One run at a time in a folder: a second is refused before it changes anything.
  const std::unique_ptr<io::FolderLock> lock = lock_folder(out);
  try {
    // A restart continues the series in the folder: checked whole before
    // any of it changes (exit 2 for a series that cannot be continued).
    if (restart) {
      io::SeriesSpec spec{out, c.name, whole, c.precision, c.output.vtk, c.output.hdf5, GF_VERSION};
      io::check_series_resume(spec, restart->step);
    }
  } catch (...) {
    folder.undo(false);
    throw;
  }

  const std::string start = now_iso8601();
  nlohmann::json info = run_info(c, a, backend->name(), start);
  if (c.decomp) {  // rank 0's device is named; every rank has its own
    info["ranks"] = c.decomp->nranks;
    info["rank_dims"] = std::vector<int>(c.decomp->dims.begin(), c.decomp->dims.begin() + whole.ndim);
  }
  if (restart) {
    info["restart"] = {{"checkpoint", *a.restart}, {"step", restart->step},
                       {"checkpoint_version", restart->version}};
    spdlog::info("restart: from {} at {} {}", *a.restart, entry.unit, restart->step);
  }
  io::write_json_atomic(out / "run.json", info);
  RunOptions opts{out, !a.quiet, GF_VERSION, restart ? &*restart : nullptr};
  if (const char* e = std::getenv("GRIDFORGE_SYNC_OUTPUT"))
    opts.sync_output = std::string(e) == "1";
  nlohmann::json timing;
  try {
    timing = run_case<T>(c, *backend, opts);
  } catch (const Error& e) {
    // Bad input found while setting up (SPEC: exit 2): the folder is left as it was.
    if (e.exit_code() == kExitBadInput) {
      folder.undo(true);
      throw;
    }
    write_failed_status(
        out, info,
        std::string(e.exit_code() == kExitInterrupted ? "interrupted: " : "failed: ") + e.what());
    throw;
  } catch (const std::bad_alloc&) {
    // A host buffer (std::vector) that could not grow: main() says so, exit 3.
    write_failed_status(out, info, "failed: out of host memory");
    throw;
  }
  info["end_time"] = now_iso8601();
  info["status"] = "completed";
  io::write_json_atomic(out / "run.json", info);

  const double compute = timing["phases_s"]["compute"];
  if (entry.run == RunKind::Solve)
    spdlog::info("done: {} {} in {} iterations, residual {:.3g} (tolerance {:.3g}); {:.3f} s "
                 "compute, {:.3f} s total; output in {}",
                 to_string(c.laplace.method), timing["reason"].get<std::string>(),
                 timing["iterations"].get<std::int64_t>(), double(timing["residual"]),
                 c.laplace.tolerance, compute, double(timing["phases_s"]["total"]), out.string());
  else if (entry.run == RunKind::Render)
    spdlog::info("done: {}×{} {} in {:.3f} ms ({:.3g} rays/s), {:.3f} s total; output in {}",
                 c.raymarch.width, c.raymarch.height, c.raymarch.mode,
                 double(timing["ms_per_frame"]), double(timing["rays_per_s"]),
                 double(timing["phases_s"]["total"]), out.string());
  else
    spdlog::info("done: {} steps in {:.3f} s compute ({:.3g} Gpts/s, {:.4g} GB/s effective), "
               "{:.3f} s total; output in {}",
               timing["steps"].get<std::int64_t>(), compute, double(timing["points_per_s"]) / 1e9,
               double(timing["effective_GBps"]), double(timing["phases_s"]["total"]),
               out.string());
  if (a.json && mpi::rank() == 0) {
    print_json_summary({{"status", "completed"}, {"exit_code", kExitOk},
                        {"output_dir", out.string()}, {"timing", timing}});
  }
  return kExitOk;
}

}  // namespace

int cmd_run(const RunArgs& a) {
  Case whole = load_case_with(a.case_path, a.overrides, a.time_block, false);
  // Over several MPI ranks each rank runs its block of the grid (grid/decomp.hpp).
  const int nranks = mpi::size();
  Case c = local_case(whole, decompose(whole, nranks, mpi::rank()));
  DeviceChoice d = choose_device(a.device.value_or(c.device));
  // A GPU per rank: the rank's place on its node modulo the node's GPUs,
  // unless a GPU was named (cuda:N).
  const std::string asked = a.device.value_or(c.device);
  if (nranks > 1 && d.gpu >= 0 && (asked == "auto" || asked == "cuda")) {
    const int count = int(cuda_status().gpus.size());
    d.gpu = mpi::local_rank() % std::max(count, 1);
    d.why += fmt::format("; rank {} on GPU {} (local rank mod {} GPUs)", mpi::rank(), d.gpu, count);
  }
  // Memory before the case is prepared, which may evaluate an expression over
  // the whole grid on the host (laplace's right-hand side, for its balance):
  // a run that cannot fit is refused at once.
  if (c.precision == Precision::Float32)
    require_memory(c, check_memory<float>(c, d));
  else
    require_memory(c, check_memory<double>(c, d));
  whole = prepare_case(std::move(whole));
  // --out after the preparation, which may write the resolved case again:
  // the case a run records (run.json, checkpoint.h5) is the file's, as before.
  if (a.out) whole.output.dir = *a.out;
  c = local_case(whole, decompose(whole, nranks, mpi::rank()));
  return c.precision == Precision::Float32 ? run_typed<float>(c, a, d) : run_typed<double>(c, a, d);
}

}  // namespace gf::app
