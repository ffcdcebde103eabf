// gridforge: command line (CLI11) and the mapping of errors to exit codes.
// No numerics here.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/raymarch/raymarch_exec.hpp"
#include "core/interrupt.hpp"
#include "core/mpi.hpp"
#include "core/rank_errors.hpp"
#include "gf_version.hpp"
#include "io/case_schema.hpp"

namespace {

// OpenMP's threads, their loop done, spin (busy-wait) for the next one before
// they sleep: libgomp spins 300000 rounds by default. On cores that something
// else also uses, a spinning thread burns the time its descheduled team-mate
// needs to reach the barrier, and a 64³ heat run beside two busy processes
// took 15 times longer than with OMP_WAIT_POLICY=passive (issue 25;
// docs/performance.md, "The CPU path on a shared machine"). So the commands
// that compute (run, validate, bench) wait passively unless the user chose
// (OMP_WAIT_POLICY or GOMP_SPINCOUNT set). libgomp reads its environment once,
// when it is loaded, before main: the setting takes a new start of this
// program (exec, same process), which costs a few ms. Where exec fails the
// run goes on with libgomp's default.
void wait_passively(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || argc < 2) return;
  const std::string cmd = argv[1];
  if (cmd != "run" && cmd != "validate" && cmd != "bench") return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("GRIDFORGE_WAIT_POLICY_SET", "1", 1);  // for run.json: gridforge chose it
  // the program's own path, not /proc/self/exe: the process keeps its name (ps, top)
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  execv(self, argv);
}

// Over several MPI ranks: errors every rank meets alike (a bad case, a run
// that diverged or did not converge: found from global values; an error one
// rank found and every rank agreed on, RankError) end each rank normally;
// any other ends them all at once (MPI_Abort), since the others may be
// waiting in a collective call for this one. Only rank 0 logs, so another
// rank that aborts prints its own message.
int leave(int code, bool all_alike, const char* message = nullptr) {
  if (gf::mpi::size() > 1 && !all_alike) {
    if (gf::mpi::rank() > 0 && message)
      std::cerr << "rank " << gf::mpi::rank() << ": error: " << message << std::endl;
    gf::mpi::abort(code);
  }
  gf::mpi::finalize();
  return code;
}

bool alike_on_every_rank(const gf::Error& e) {
  // An interrupt is agreed by every rank at the same step (stop_requested).
  return dynamic_cast<const gf::CaseError*>(&e) || dynamic_cast<const gf::UsageError*>(&e) ||
         dynamic_cast<const gf::SolverError*>(&e) || dynamic_cast<const gf::InterruptedError*>(&e) ||
         dynamic_cast<const gf::RankError*>(&e);
}

// The known word nearest to a typo (edit distance at most 2 and less than
// the word's length), or "".
std::string nearest_word(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_d = 3;
  for (const std::string& k : known) {
    const std::size_t d = gf::schema::edit_distance(word, k);
    if (d < best_d && d < word.size()) {
      best = k;
      best_d = d;
    }
  }
  return best;
}

// The command of that name, or nullptr.
CLI::App* command(CLI::App& app, const std::string& name) {
  for (CLI::App* s : app.get_subcommands({}))
    if (s->get_name() == name) return s;
  return nullptr;
}

// `gridforge WORD ...` where WORD is not a command: help, or a suggestion.
// Returns the exit code, or -1 to go on parsing.
int first_word(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return -1;
  const std::string w = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands({})) names.push_back(s->get_name());
  for (const std::string& n : names)
    if (n == w) return -1;
  if (w == "help") {  // gridforge help [COMMAND]: as gridforge [COMMAND] --help
    std::vector<std::string> args{argv[0]};
    if (argc > 2 && command(app, argv[2])) args.push_back(argv[2]);
    args.push_back("--help");
    std::vector<char*> ptrs;
    for (std::string& a : args) ptrs.push_back(a.data());
    try {
      app.parse(int(ptrs.size()), ptrs.data());
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return gf::kExitOk;
  }
  std::string names_list;
  for (const std::string& n : names) names_list += (names_list.empty() ? "" : ", ") + n;
  const std::string near = nearest_word(w, names);
  std::cerr << "error: unknown command '" << w << "'; "
            << (near.empty() ? "the commands are " + names_list + " (gridforge --help)"
                             : "did you mean '" + near + "'?")
            << std::endl;
  return gf::kExitBadInput;
}

// After a parse error: the first option the command (or gridforge itself)
// does not know, with the nearest one it does. Empty when there is none.
std::string unknown_option(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = &app;
  int i = 1;
  if (argc > 1 && argv[1][0] != '-') {
    CLI::App* s = command(app, argv[1]);
    if (!s) return "";
    cmd = s;
    i = 2;
  }
  std::vector<std::string> known;
  for (const CLI::Option* o : cmd->get_options()) {
    for (const std::string& n : o->get_lnames()) known.push_back("--" + n);
    for (const std::string& n : o->get_snames()) known.push_back("-" + n);
  }
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) ||
        arg[1] == '.')
      continue;  // a value, or a negative number
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string where = cmd == &app ? "gridforge" : "gridforge " + cmd->get_name();
    const std::string near = nearest_word(name, known);
    return "error: " + where + ": unknown option '" + name + "'; " +
           (near.empty() ? "see " + where + " --help" : "did you mean '" + near + "'?");
  }
  return "";
}

// An error one rank found, agreed by every rank (core/rank_errors.hpp): that
// rank prints it, as one rank would, though only rank 0 logs otherwise; rank
// 0, when it is another, says in one line why it stops; the others say nothing.
int report_rank_error(const gf::RankError& e) {
  if (e.here()) {
    spdlog::set_level(spdlog::level::err);
    spdlog::error("{}{}", e.located() ? "" : "error: ", e.what());
  } else {
    spdlog::error("error: rank {} stopped the run (exit {})", e.rank(), e.exit_code());
  }
  return e.exit_code();
}

int report(const gf::Error& e) {
  if (const auto* r = dynamic_cast<const gf::RankError*>(&e)) return report_rank_error(*r);
  // Case errors already read "file:line:col: key: message" (SPEC §3).
  if (dynamic_cast<const gf::CaseError*>(&e))
    spdlog::error("{}", e.what());
  else
    spdlog::error("error: {}", e.what());
  return e.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  wait_passively(argc, argv);
  using namespace gf::app;
  CLI::App app{"gridforge: simulations on structured grids, on the GPU or the CPU"};
  app.name("gridforge");
  app.set_version_flag("-V,--version", std::string("gridforge ") + GF_VERSION + " (" +
                                        GF_GIT_COMMIT + ")");
  app.require_subcommand(1);
  app.footer("Example: gridforge run cases/heat1d_rod.yaml --device cpu\n"
             "         gridforge help run (or gridforge run --help) for a command's options");

  constexpr const char* kThreadsHelp =
      "the most CPU threads a loop takes (default: OMP_NUM_THREADS, else one per core; small "
      "grids take fewer)";
  RunArgs run;
  auto* r = app.add_subcommand("run", "run a case");
  r->add_option("case", run.case_path,
                "case file (YAML); with --restart it may be left out: the checkpoint's case");
  r->add_option("overrides", run.overrides, "KEY=VALUE overrides of case keys (dotted paths)");
  r->add_option("--device", run.device, "auto | cpu | cuda | cuda:N (default: the case's, auto)");
  r->add_option("--out", run.out, "output folder (default: the case's output.dir)");
  r->add_option("--restart", run.restart,
                 "continue from a checkpoint.h5 (output.checkpoint_every), in its folder; the "
                 "case file may be left out");
  r->add_flag("--overwrite", run.overwrite,
              "replace the files of another run in the output folder (a new run is refused "
              "there otherwise)");
  r->add_option("--time-block", run.time_block,
                 "heat, stencil, laplace jacobi: steps (sweeps) per pass over memory, auto | 1 | 2 | ... (the case's heat., stencil. or laplace.time_block)");
  r->add_option("--threads", run.threads, kThreadsHelp);
  r->add_flag("--dry-run", run.dry_run, "check the case, print it resolved, write nothing");
  r->add_flag("--quiet", run.quiet, "print errors only");
  r->add_flag("--json", run.json,
              "print a JSON summary on stdout at the end (with --dry-run: the resolved case, "
              "device and memory; on failure: status, exit_code, error)");
  r->footer("Example: gridforge run cases/heat1d_rod.yaml heat.steps=100 --device cpu --out out/rod\n"
            "         gridforge run --restart out/rod/checkpoint.h5 heat.steps=200");

  ValidateArgs val;
  auto* v = app.add_subcommand("validate", "run a case on the CPU and the GPU and compare");
  v->add_option("case", val.case_path, "case file (YAML)");
  v->add_option("overrides", val.overrides, "KEY=VALUE overrides of case keys");
  v->add_option("--device", val.device, "the GPU side: cuda | cuda:N (default: the case's device when it is a GPU, else cuda)");
  v->add_option("--out", val.out, "output folder for validation.json (default: the case's output.dir)");
  v->add_option("--rtol", val.rtol, "relative L2 tolerance (default 1e-9 float64, 1e-4 float32)");
  v->add_option("--atol", val.atol, "max-abs tolerance (default 0)");
  v->add_option("--steps", val.steps, "number of steps instead of the case's");
  v->add_option("--time-block", val.time_block,
                 "heat, stencil, laplace jacobi: steps (sweeps) per pass over memory on both devices, auto | 1 | 2 | ... (the case's heat., stencil. or laplace.time_block)");
  v->add_option("--threads", val.threads, kThreadsHelp);
  v->add_flag("--quiet", val.quiet, "print errors and the table only");
  v->add_flag("--json", val.json,
              "print validation.json's content (with status and exit_code) on stdout; the table goes to stderr");
  v->footer("Example: gridforge validate cases/heat3d_hotspot.yaml --device cuda:0 --out out/check");

  BenchArgs bench;
  auto* b = app.add_subcommand("bench", "time workloads over sizes and devices against measured bandwidth");
  b->add_option("--workload", bench.workload, "heat, stencil, laplace (jacobi), wave, pde, raymarch, poisson (time to solution), a comma list, or all (every one but pde, raymarch and poisson; default heat)");
  b->add_option("--dims", bench.dims, "2 or 3, or 2,3 (default 3)");
  b->add_option("--sizes", bench.sizes, "grid sizes, comma list: N points on every axis, or NXxNYxNZ (3D) / NXxNY (2D), e.g. 512,509x263x391 (default 3D 64,128,256,512; 2D 256,1024,4096,16384)");
  b->add_option("--precision", bench.precision, "float32, float64 or float32,float64 (default float32)");
  b->add_option("--device,--devices", bench.devices, "cpu, cuda, cuda:N, comma list (default cpu,cuda; cpu when no GPU is usable); --devices is the old name");
  b->add_option("--steps", bench.steps, "timed steps per repetition (default: auto, about 100 ms a repetition)");
  b->add_option("--repeat", bench.repeat, "timed repetitions; the median is reported (default 5)");
  b->add_option("--stencil", bench.stencil, "stencil preset for --workload stencil (default star5 in 2D, star7 in 3D)");
  b->add_option("--time-block", bench.time_block,
                 "heat, the star7 stencil and laplace (jacobi): steps per pass, comma list, one row each (default 1)");
  b->add_option("--modes", bench.modes,
                "raymarch rows: emission-absorption, mip, isosurface, a comma list (default all three)");
  b->add_option("--images", bench.images,
                "raymarch rows: images WxH, comma list (default 1920x1080), e.g. 1280x720,3840x2160");
  b->add_option("--methods", bench.methods,
                 "--workload poisson: laplace methods, comma list (default all: jacobi, sor, cg, "
                 "cg-jacobi, cg-multigrid, multigrid, multigrid-f, multigrid-mixed, fft)");
  b->add_option("--max-seconds", bench.max_seconds,
                "--workload poisson: a row's solve stops unconverged after this many seconds (default 20)");
  b->add_option("--tolerance", bench.tolerance,
                "--workload poisson: the relative residual to solve to (default 1e-8; float32 at least 1e-5)");
  b->add_option("--out", bench.out, "output folder for bench.json and bench.csv (default out/bench)");
  b->add_option("--threads", bench.threads, kThreadsHelp);
  b->add_flag("--quiet", bench.quiet, "print errors and the table only");
  b->add_flag("--json", bench.json, "print bench.json's content on stdout; the table goes to stderr");
  b->footer("Example: gridforge bench --workload heat --sizes 64,128,129x65x33 --device cpu,cuda");

  CompareArgs cmp;
  auto* cm = app.add_subcommand("compare", "compare two runs' fields.h5, every field at every step");
  cm->add_option("a", cmp.a, "a fields.h5, or a run folder holding one");
  cm->add_option("b", cmp.b, "the reference: a fields.h5, or a run folder holding one");
  cm->add_option("--rtol", cmp.rtol, "relative L2 tolerance, against b (default 1e-9 float64, 1e-4 when either holds float32)");
  cm->add_option("--atol", cmp.atol, "max-abs tolerance (default 0)");
  cm->add_flag("--quiet", cmp.quiet, "print errors only");
  cm->add_flag("--json", cmp.json, "print the rows, pass, status and exit_code as JSON on stdout; the table goes to stderr");
  cm->footer("Example: gridforge compare out/run-cpu out/run-gpu --rtol 1e-6");

  bool info_json = false;
  std::optional<std::string> info_threads;
  auto* inf = app.add_subcommand("info", "version, build, GPUs, libraries");
  inf->add_option("--threads", info_threads, kThreadsHelp);
  inf->add_flag("--json", info_json, "print as JSON");
  inf->footer("Example: gridforge info --json");

  if (const int rc = first_word(app, argc, argv); rc >= 0) return rc;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      if (const std::string u = unknown_option(app, argc, argv); !u.empty()) {
        std::cerr << u << std::endl;
        return gf::kExitBadInput;
      }
    }
    const int rc = app.exit(e);
    return rc == 0 ? 0 : gf::kExitBadInput;
  }

  const bool quiet =
      (r->parsed() && run.quiet) || (v->parsed() && val.quiet) || (b->parsed() && bench.quiet) ||
      (cm->parsed() && cmp.quiet);
  // --json: the summary on stdout, and a failure object there when it fails.
  const bool json = (r->parsed() && run.json) || (v->parsed() && val.json) ||
                    (b->parsed() && bench.json) || (cm->parsed() && cmp.json);
  setup_logging(quiet);
  // Under mpirun: MPI for `run`; ranks other than 0 log nothing.
  gf::mpi::init(&argc, &argv);
  if (gf::mpi::rank() > 0) spdlog::set_level(spdlog::level::off);
  gf::install_interrupt_handlers();
  // The --json failure object: what failed, with its exit code. validate's
  // mismatch has printed its summary (status "mismatch") already.
  auto json_failure = [&](int code, const std::string& message) {
    if (!json || gf::mpi::rank() > 0 || code == gf::kExitMismatch) return;
    const char* status = code == gf::kExitInterrupted ? "interrupted"
                         : code == gf::kExitBadInput  ? "refused"
                                                      : "failed";
    nlohmann::json j = {{"status", status}, {"exit_code", code}, {"error", message}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  };
  try {
    if (gf::mpi::size() > 1 && !r->parsed())
      throw gf::UsageError("only `gridforge run` runs over several MPI ranks; start the other "
                           "subcommands without mpirun");
    gf::gpu_row_align_bytes();  // a bad GRIDFORGE_ROW_ALIGN is exit 2 on every path, GPU or not
    gf::gpu_dependent_launch();  // and a bad GRIDFORGE_PDL
    gf::gpu_march_chunk();       // GRIDFORGE_MARCH_CHUNK
    gf::gpu_march_pieces();      // GRIDFORGE_MARCH_PIECES
    gf::gpu_march_tail();        // GRIDFORGE_MARCH_TAIL
    gf::gpu_pad_store();         // GRIDFORGE_PAD_STORE
    gf::gpu_pde_blocks();        // GRIDFORGE_PDE_BLOCKS
    gf::gpu_pde_prefetch();      // GRIDFORGE_PDE_PREFETCH
    gf::gpu_march_alternate();   // GRIDFORGE_MARCH_ORDER
    gf::raymarch_options_from_env();  // and a bad GRIDFORGE_RM_* (the GPU's ray marcher)
    apply_threads(r->parsed()   ? run.threads
                  : v->parsed() ? val.threads
                  : b->parsed() ? bench.threads
                                : info_threads);
    if (r->parsed()) {
      // `run --restart CK KEY=VALUE`: the first override is no case file.
      if (run.restart && run.case_path.find('=') != std::string::npos &&
          !run.case_path.ends_with(".yaml") && !run.case_path.ends_with(".yml")) {
        run.overrides.insert(run.overrides.begin(), run.case_path);
        run.case_path.clear();
      }
      if (run.case_path.empty() && !run.restart)
        throw gf::UsageError("run needs a case file: gridforge run CASE.yaml [KEY=VALUE ...], "
                             "e.g. gridforge run cases/heat1d_rod.yaml --device cpu "
                             "(gridforge run --help for the options)");
      run.command_line = joined_command_line(argc, argv);
      run.program = argv[0];
      return leave(cmd_run(run), true);
    }
    if (v->parsed()) {
      if (val.case_path.empty())
        throw gf::UsageError("validate needs a case file: gridforge validate CASE.yaml "
                             "[KEY=VALUE ...], e.g. gridforge validate cases/heat1d_rod.yaml "
                             "(gridforge validate --help for the options)");
      return cmd_validate(val);
    }
    if (b->parsed()) {
      bench.command_line = joined_command_line(argc, argv);
      return cmd_bench(bench);
    }
    if (cm->parsed()) {
      if (cmp.a.empty() || cmp.b.empty())
        throw gf::UsageError("compare needs two runs: gridforge compare A B (each a fields.h5 or "
                             "a run folder), e.g. gridforge compare out/run-cpu out/run-gpu");
      return cmd_compare(cmp);
    }
    if (inf->parsed()) return cmd_info(info_json, info_threads);
  } catch (const gf::Error& e) {
    const int code = report(e);
    json_failure(code, e.what());
    return leave(code, alike_on_every_rank(e), e.what());
  } catch (const std::bad_alloc&) {
    spdlog::error("error: out of host memory; use a smaller grid or float32");
    json_failure(gf::kExitDevice, "out of host memory; use a smaller grid or float32");
    return leave(gf::kExitDevice, false, "out of host memory");
  } catch (const std::exception& e) {
    spdlog::error("error: {}", e.what());
    json_failure(gf::kExitRunFailed, e.what());
    return leave(gf::kExitRunFailed, false, e.what());
  }
  return leave(gf::kExitBadInput, true);
}
