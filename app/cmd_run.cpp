// gridforge run: load and check the case, pick the device, check memory,
// then run and write the files of SPEC §4.
#include <algorithm>
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
#include "io/run_folder.hpp"
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
  // GPU fields may pad their rows (gpu_field_layout): count the padding
  const Layout l = gpu_field_layout(c.grid, sizeof(T));
  const std::size_t dev_bytes =
      std::size_t(double(need.bytes) * double(l.span()) / double(std::max<std::int64_t>(1, l.size())));
  const GpuInfo& g = cuda_status().gpus.at(d.gpu);
  return {{dev_bytes, g.memory_free, need.fields, fmt::format("{} (GPU {})", g.name, d.gpu), true,
           need.other, need.other_bytes},
          host};
}

// The done line's peak memory: the process's resident set, and the device
// allocator's peak (on the CPU that allocator's memory is host memory, part
// of the first).
std::string peak_memory(const nlohmann::json& timing, bool gpu) {
  const double host = timing.value("host_memory_peak_bytes", 0.0);
  const double fields = timing.value("device_memory_peak_bytes", 0.0);
  return gpu ? fmt::format("{} host, {} device", human_bytes(host), human_bytes(fields))
             : fmt::format("{} host ({} of it fields)", human_bytes(host), human_bytes(fields));
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

// --restart: the checkpoint, read whole. Exit 2 when it cannot be read.
io::Checkpoint read_restart(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("--restart: '{}' is a folder, not a checkpoint; give the file in "
                                 "it: --restart {}",
                                 path, (fs::path(path) / kCheckpointFile).string()));
  try {
    return io::read_checkpoint(path);
  } catch (const IoError& e) {
    throw UsageError(fmt::format("--restart: {}", e.what()));
  }
}

// The checkpoint checked against the case before anything is written: exit 2
// when it is another case's.
io::Checkpoint load_restart(const Case& c, const std::string& path, io::Checkpoint ck) {
  if (const std::string d = io::checkpoint_mismatch(ck, c); !d.empty())
    throw UsageError(fmt::format("--restart: {}: {}{}", path, d,
                                 d.find(" in the checkpoint, ") != std::string::npos
                                     ? "; a checkpoint continues only the case that wrote it"
                                     : ""));
  if (ck.version != GF_VERSION)
    spdlog::warn("{} was written by gridforge {}; this is {}", path, ck.version, GF_VERSION);
  return ck;
}

// A word of a command line as a shell reads it back.
std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_./:=,+@%-") == std::string::npos)
    return w;
  std::string q = "'";
  for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// A run owns its folder. What this run does with the gridforge files already
// there (io/run_folder.hpp): nothing (a new or empty folder, or a restart
// that continues the run recorded there), or, with --overwrite, replace them
// (the names returned). A folder of another run is refused otherwise (exit
// 2, before anything is written).
std::vector<std::string> outputs_to_replace(const fs::path& out, const io::Checkpoint* ck,
                                            const std::string& ck_path, bool overwrite) {
  std::vector<std::string> names = io::run_outputs(out);
  std::error_code ec;
  if (ck)  // the checkpoint given, when it lies in the folder, is no other run's
    std::erase_if(names, [&](const std::string& n) {
      return fs::equivalent(out / n, ck_path, ec);
    });
  const std::vector<std::string> seen = io::run_evidence(out, names);
  if (seen.empty()) return {};  // no run there (at most what a killed one left half-written)
  if (ck) {
    const std::optional<std::string> rec = io::recorded_case(out);
    const std::string why =
        rec ? io::case_difference(ck->case_yaml, *rec, "its run.json")
            : std::string("no run.json says which run wrote them");
    if (why.empty()) return {};  // the run the checkpoint continues
    if (overwrite) return names;
    throw UsageError(fmt::format(
        "--restart: output folder '{}' holds the files of another run ({}; {}); continue in the "
        "checkpoint's own folder (leave out --out), choose another --out, or add --overwrite to "
        "replace them",
        out.string(), io::list_outputs(seen), why));
  }
  if (overwrite) return names;
  throw UsageError(fmt::format("output folder '{}' holds the files of another run ({}); add "
                               "--overwrite to replace them with this run's, or choose another "
                               "--out",
                               out.string(), io::list_outputs(seen)));
}

// The output folder, made when missing; what was there before is recorded,
// so that a run refused for bad input (exit 2, found while setting up: an
// expression that is not finite on the grid, ...) can leave it as it was.
class OutputFolder {
 public:
  // Rank 0 makes the folder and keeps its record, for every rank: had another
  // rank made it first, rank 0 would take it for one that was there before
  // and leave it behind on a failure. The others write into it only after a
  // broadcast from rank 0 (lock_folder), by when it is there.
  explicit OutputFolder(const fs::path& out) : out_(out) {
    if (mpi::rank() != 0) return;
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

  // --overwrite: the files of the run there (`names`, from outputs_to_replace)
  // go into .gridforge.old/ until the new run has started (started()); a run
  // that fails before puts them back (undo). Rank 0 moves them; the others
  // wait for it.
  void set_aside(const std::vector<std::string>& names) {
    std::string err;
    if (mpi::rank() == 0 && !names.empty()) {
      const fs::path old = out_ / io::kReplacedDir;
      std::error_code ec;
      fs::remove_all(old, ec);  // what a replacing run killed while setting up left
      fs::create_directory(old, ec);
      if (ec) err = fmt::format("cannot replace the files in '{}': {}", out_.string(), ec.message());
      replaced_ = !ec;
      for (std::string n : names) {
        if (n.ends_with('/')) n.pop_back();
        if (!err.empty() || n == io::kReplacedDir) continue;
        fs::rename(out_ / n, old / n, ec);
        if (ec)
          err = fmt::format("cannot replace '{}': {}", (out_ / n).string(), ec.message());
      }
      before_.clear();
      for (const auto& e : fs::directory_iterator(out_, ec)) before_.insert(e.path().filename());
      spdlog::info("replacing the files of the run in {} (--overwrite)", out_.string());
    }
    if (mpi::size() > 1) err = mpi::broadcast(err);
    if (!err.empty()) throw IoError(err);
  }

  // The new run has started: the files it replaces go for good.
  void started() {
    if (!replaced_) return;
    replaced_ = false;
    run_json_.reset();
    if (mpi::rank() != 0) return;
    std::error_code ec;
    fs::remove_all(out_ / io::kReplacedDir, ec);
  }

  // Whether the files of the run replaced are still set aside.
  bool replacing() const { return replaced_; }

  // Back to what was there: a folder made by this run goes; otherwise what
  // the run added at its top level goes and run.json (or, with --overwrite,
  // every file set aside) is put back (when it was written: wrote_files).
  void undo(bool wrote_files) const noexcept {
    if (mpi::rank() != 0) return;
    std::error_code ec;
    if (!created_.empty()) {
      fs::remove_all(created_, ec);
      return;
    }
    if (!wrote_files && !replaced_) return;
    for (const auto& e : fs::directory_iterator(out_, ec))
      if (!before_.contains(e.path().filename()) && e.path().filename() != io::kLockFile &&
          e.path().filename() != io::kReplacedDir)
        fs::remove_all(e.path(), ec);
    if (replaced_) {
      const fs::path old = out_ / io::kReplacedDir;
      for (const auto& e : fs::directory_iterator(old, ec)) {
        std::error_code moved;
        fs::rename(e.path(), out_ / e.path().filename(), moved);
        if (moved)
          spdlog::warn("could not put back {}: {}", (out_ / e.path().filename()).string(),
                       moved.message());
      }
      fs::remove(old, ec);  // only when all went back
      return;
    }
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
  bool replaced_ = false;
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
int run_typed(const Case& c, const RunArgs& a, const DeviceChoice& d,
              std::optional<io::Checkpoint> checkpoint) {
  const WorkloadEntry& entry = workload_entry(c.workload);
  const std::vector<MemoryCheck> mem = check_memory<T>(c, d);
  const fs::path out = c.output.dir;
  const Grid& whole = c.decomp ? c.decomp->global : c.grid;
  std::optional<io::Checkpoint> restart;
  if (a.restart) {
    // Checked against the whole case; each rank then keeps its block of the
    // checkpoint's global fields (any number of ranks may have written it).
    Case whole_case = c;
    if (c.decomp) whole_case.grid = c.decomp->global;
    restart = load_restart(whole_case, *a.restart,
                           checkpoint ? std::move(*checkpoint) : read_restart(*a.restart));
    if (c.decomp)
      for (auto& [name, bytes] : restart->fields) bytes = local_block(*c.decomp, bytes, sizeof(T));
  }
  // The folder, checked before anything is made or written (exit 2): another
  // run's files are replaced only when asked; a restart continues the series
  // there only when all of them can be.
  std::vector<std::string> replace;
  std::string folder_note;
  // A folder in use is said as such (exit 3), before its files are judged.
  if (!a.dry_run) {
    std::string busy;
    if (mpi::rank() == 0) try {
        io::FolderLock::check_free(out);
      } catch (const BusyError& e) {
        busy = e.what();
      }
    if (mpi::size() > 1) busy = mpi::broadcast(busy);
    if (!busy.empty()) throw BusyError(busy);
  }
  // Rank 0 judges for every rank: the others would see the files it writes next.
  if (mpi::rank() == 0) try {
      replace = outputs_to_replace(out, restart ? &*restart : nullptr, a.restart.value_or(""),
                                   a.overwrite);
      if (restart && replace.empty()) {
        io::SeriesSpec spec{out,          c.name,        whole,     c.precision,
                            c.output.vtk, c.output.hdf5, GF_VERSION};
        io::check_series_resume(spec, restart->step);
      }
    } catch (const UsageError& e) {
      folder_note = e.what();
    }
  if (mpi::size() > 1) folder_note = mpi::broadcast(folder_note);
  if (!folder_note.empty() && !a.dry_run) throw UsageError(folder_note);
  // (the dry run says what the run would)
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
      j["output"] = {{"dir", out.string()}, {"replaces", !replace.empty()}};
      if (!folder_note.empty()) j["output"]["refused"] = folder_note;
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
    std::cout << fmt::format("# output: {}{}\n", out.string(),
                             !folder_note.empty() ? "; the run would be refused: " + folder_note
                             : !replace.empty()   ? "; the files of the run there are replaced "
                                                    "(--overwrite)"
                                                  : "");
    if (entry.setup_line) std::cout << "# " << entry.setup_line(c) << "\n";
    require_memory(c, mem);
    return kExitOk;
  }
  require_memory(c, mem);
  std::unique_ptr<Backend<T>> backend = make_backend<T>(d);
  if (c.decomp) backend = make_distributed_backend<T>(std::move(backend), *c.decomp);
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

  OutputFolder folder(out);
  // One run at a time in a folder: a second is refused before it changes anything.
  std::unique_ptr<io::FolderLock> lock;
  try {
    lock = lock_folder(out);
    folder.set_aside(replace);
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
  try {
    io::write_json_atomic(out / "run.json", info);
  } catch (...) {
    if (folder.replacing()) folder.undo(true);  // the old run comes back whole
    throw;
  }
  RunOptions opts{out, !a.quiet, GF_VERSION, restart ? &*restart : nullptr};
  if (const char* e = std::getenv("GRIDFORGE_SYNC_OUTPUT"))
    opts.sync_output = std::string(e) == "1";
  // The exact command that continues this run: the checkpoint holds the
  // resolved case, overrides included, and a restart's folder is the
  // checkpoint's. A device named on the command line is named again.
  // The program as it was typed (build/gridforge, or gridforge found on PATH),
  // under mpirun with the same number of ranks.
  opts.resume = (mpi::size() > 1 ? fmt::format("mpirun -np {} ", mpi::size()) : std::string()) +
                shell_word(a.program.empty() ? std::string("gridforge") : a.program) +
                " run --restart " + shell_word((out / kCheckpointFile).string());
  if (a.device) opts.resume += " --device " + shell_word(*a.device);
  opts.started = [&folder] { folder.started(); };
  nlohmann::json timing;
  try {
    timing = run_case<T>(c, *backend, opts);
  } catch (const Error& e) {
    // Bad input found while setting up (SPEC: exit 2), or a failure before
    // a replacing run started: the folder is left as it was.
    if (e.exit_code() == kExitBadInput || folder.replacing()) {
      folder.undo(true);
      throw;
    }
    write_failed_status(
        out, info,
        std::string(e.exit_code() == kExitInterrupted ? "interrupted: " : "failed: ") + e.what());
    throw;
  } catch (const std::bad_alloc&) {
    // A host buffer (std::vector) that could not grow: main() says so, exit 3.
    if (folder.replacing()) {
      folder.undo(true);
      throw;
    }
    write_failed_status(out, info, "failed: out of host memory");
    throw;
  }
  info["end_time"] = now_iso8601();
  info["status"] = "completed";
  io::write_json_atomic(out / "run.json", info);

  const double compute = timing["phases_s"]["compute"];
  const std::string memory = peak_memory(timing, backend->is_gpu());
  if (entry.run == RunKind::Solve && c.laplace.method == LaplaceMethod::Fft)
    spdlog::info("done: fft, a direct solve, residual {:.3g}; {:.3f} s compute, {:.3f} s total, "
                 "peak memory {}; output in {}",
                 double(timing["residual"]), compute, double(timing["phases_s"]["total"]),
                 memory, out.string());
  else if (entry.run == RunKind::Solve) {
    const auto iterations = timing["iterations"].get<std::int64_t>();
    spdlog::info("done: {} {} in {} iteration{}, residual {:.3g} (tolerance {:.3g}); {:.3f} s "
                 "compute, {:.3f} s total, peak memory {}; output in {}",
                 to_string(c.laplace.method), timing["reason"].get<std::string>(), iterations,
                 iterations == 1 ? "" : "s", double(timing["residual"]), c.laplace.tolerance,
                 compute, double(timing["phases_s"]["total"]), memory, out.string());
  }
  else if (entry.run == RunKind::Render)
    spdlog::info("done: {}×{} {} in {:.3f} ms ({:.3g} rays/s), {:.3f} s total, peak memory {}; "
                 "output in {}",
                 c.raymarch.width, c.raymarch.height, c.raymarch.mode,
                 double(timing["ms_per_frame"]), double(timing["rays_per_s"]),
                 double(timing["phases_s"]["total"]), memory, out.string());
  else
    spdlog::info("done: {} steps in {:.3f} s compute ({:.3g} Gpts/s, {:.4g} GB/s effective), "
               "{:.3f} s total, peak memory {}; output in {}",
               timing["steps"].get<std::int64_t>(), compute, double(timing["points_per_s"]) / 1e9,
               double(timing["effective_GBps"]), double(timing["phases_s"]["total"]),
               memory, out.string());
  if (a.json && mpi::rank() == 0) {
    print_json_summary({{"status", "completed"}, {"exit_code", kExitOk},
                        {"output_dir", out.string()}, {"timing", timing}});
  }
  return kExitOk;
}

}  // namespace

int cmd_run(const RunArgs& a) {
  // --restart alone: the case is the checkpoint's (the resolved case of the
  // run that wrote it, its overrides included), with the overrides given.
  std::optional<io::Checkpoint> checkpoint;
  if (a.restart && a.case_path.empty()) checkpoint = read_restart(*a.restart);
  Case whole = load_case_with(checkpoint ? *a.restart : a.case_path, a.overrides, a.time_block,
                              false, checkpoint ? &checkpoint->case_yaml : nullptr);
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
  // A restart continues the checkpoint's folder unless told otherwise.
  const bool dir_override = std::any_of(a.overrides.begin(), a.overrides.end(), [](const auto& o) {
    return o.starts_with("output.dir=");
  });
  if (a.out)
    whole.output.dir = *a.out;
  else if (a.restart && !dir_override)
    whole.output.dir = fs::path(*a.restart).parent_path().empty()
                           ? std::string(".")
                           : fs::path(*a.restart).parent_path().string();
  c = local_case(whole, decompose(whole, nranks, mpi::rank()));
  return c.precision == Precision::Float32
             ? run_typed<float>(c, a, d, std::move(checkpoint))
             : run_typed<double>(c, a, d, std::move(checkpoint));
}

}  // namespace gf::app
