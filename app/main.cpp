// gridforge: command line (CLI11) and the mapping of errors to exit codes.
// No numerics here.
#include <CLI/CLI.hpp>

#include <iostream>
#include <new>

#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/mpi.hpp"
#include "gf_version.hpp"

namespace {

// Over several MPI ranks: errors every rank meets alike (a bad case, a run
// that diverged or did not converge: found from global values) end each rank
// normally; any other ends them all at once (MPI_Abort), since the others may
// be waiting in a collective call for this one. Only rank 0 logs, so another
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
         dynamic_cast<const gf::SolverError*>(&e) || dynamic_cast<const gf::InterruptedError*>(&e);
}

int report(const gf::Error& e) {
  // Case errors already read "file:line:col: key: message" (SPEC §3).
  if (dynamic_cast<const gf::CaseError*>(&e))
    spdlog::error("{}", e.what());
  else
    spdlog::error("error: {}", e.what());
  return e.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gf::app;
  CLI::App app{"gridforge: simulations on structured grids, on the GPU or the CPU"};
  app.set_version_flag("--version", std::string("gridforge ") + GF_VERSION + " (" +
                                        GF_GIT_COMMIT + ")");
  app.require_subcommand(1);

  RunArgs run;
  auto* r = app.add_subcommand("run", "run a case");
  r->add_option("case", run.case_path, "case file (YAML)")->required();
  r->add_option("overrides", run.overrides, "KEY=VALUE overrides of case keys (dotted paths)");
  r->add_option("--device", run.device, "auto | cpu | cuda | cuda:N (default: the case's, auto)");
  r->add_option("--out", run.out, "output folder (default: the case's output.dir)");
  r->add_option("--restart", run.restart,
                 "continue from a checkpoint.h5 of this case (output.checkpoint_every)");
  r->add_option("--time-block", run.time_block,
                 "heat, stencil, laplace jacobi: steps (sweeps) per pass over memory, auto | 1 | 2 | ... (the case's heat., stencil. or laplace.time_block)");
  r->add_flag("--dry-run", run.dry_run, "check the case, print it resolved, write nothing");
  r->add_flag("--quiet", run.quiet, "print errors only");
  r->add_flag("--json", run.json, "print a JSON summary on stdout at the end");

  ValidateArgs val;
  auto* v = app.add_subcommand("validate", "run a case on the CPU and the GPU and compare");
  v->add_option("case", val.case_path, "case file (YAML)")->required();
  v->add_option("overrides", val.overrides, "KEY=VALUE overrides of case keys");
  v->add_option("--rtol", val.rtol, "relative L2 tolerance (default 1e-9 float64, 1e-4 float32)");
  v->add_option("--atol", val.atol, "max-abs tolerance (default 0)");
  v->add_option("--steps", val.steps, "number of steps instead of the case's");
  v->add_option("--time-block", val.time_block,
                 "heat, stencil, laplace jacobi: steps (sweeps) per pass over memory on both devices, auto | 1 | 2 | ... (the case's heat., stencil. or laplace.time_block)");
  v->add_flag("--quiet", val.quiet, "print errors and the table only");

  BenchArgs bench;
  auto* b = app.add_subcommand("bench", "time workloads over sizes and devices against measured bandwidth");
  b->add_option("--workload", bench.workload, "heat, stencil, laplace (jacobi), wave, a comma list, or all (default heat)");
  b->add_option("--dims", bench.dims, "2 or 3, or 2,3 (default 3)");
  b->add_option("--sizes", bench.sizes, "points per axis, comma list (default 3D 64,128,256,512; 2D 256,1024,4096,16384)");
  b->add_option("--precision", bench.precision, "float32, float64 or float32,float64 (default float32)");
  b->add_option("--devices", bench.devices, "cpu, cuda, cuda:N, comma list (default cpu,cuda; cpu when no GPU is usable)");
  b->add_option("--steps", bench.steps, "timed steps per repetition (default: auto, about 100 ms a repetition)");
  b->add_option("--repeat", bench.repeat, "timed repetitions; the median is reported (default 5)");
  b->add_option("--stencil", bench.stencil, "stencil preset for --workload stencil (default star5 in 2D, star7 in 3D)");
  b->add_option("--time-block", bench.time_block,
                 "heat, the star7 stencil and laplace (jacobi): steps per pass, comma list, one row each (default 1)");
  b->add_option("--out", bench.out, "output folder for bench.json and bench.csv (default out/bench)");
  b->add_flag("--quiet", bench.quiet, "print errors and the table only");

  bool info_json = false;
  auto* inf = app.add_subcommand("info", "version, build, GPUs, libraries");
  inf->add_flag("--json", info_json, "print as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : gf::kExitBadInput;
  }

  const bool quiet =
      (r->parsed() && run.quiet) || (v->parsed() && val.quiet) || (b->parsed() && bench.quiet);
  setup_logging(quiet);
  // Under mpirun: MPI for `run`; ranks other than 0 log nothing.
  gf::mpi::init(&argc, &argv);
  if (gf::mpi::rank() > 0) spdlog::set_level(spdlog::level::off);
  gf::install_interrupt_handlers();
  try {
    if (gf::mpi::size() > 1 && !r->parsed())
      throw gf::UsageError("only `gridforge run` runs over several MPI ranks; start the other "
                           "subcommands without mpirun");
    if (r->parsed()) {
      run.command_line = joined_command_line(argc, argv);
      return leave(cmd_run(run), true);
    }
    if (v->parsed()) return cmd_validate(val);
    if (b->parsed()) {
      bench.command_line = joined_command_line(argc, argv);
      return cmd_bench(bench);
    }
    if (inf->parsed()) return cmd_info(info_json);
  } catch (const gf::Error& e) {
    return leave(report(e), alike_on_every_rank(e), e.what());
  } catch (const std::bad_alloc&) {
    spdlog::error("error: out of host memory; use a smaller grid or float32");
    return leave(gf::kExitDevice, false, "out of host memory");
  } catch (const std::exception& e) {
    spdlog::error("error: {}", e.what());
    return leave(gf::kExitRunFailed, false, e.what());
  }
  return leave(gf::kExitBadInput, true);
}
