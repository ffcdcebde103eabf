// The case file of SPEC §3, loaded, checked and with every default filled in.
// load_case() is the only way to get a Case: every key is checked there and
// every fault is a CaseError naming file:line:col and the key's dotted path.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/pde_program.hpp"
#include "core/precision.hpp"
#include "grid/grid.hpp"
#include "io/compression.hpp"
#include "io/raymarch_spec.hpp"

namespace gf {

struct Decomp;  // grid/decomp.hpp

enum class Workload { Heat, Laplace, Stencil, Raymarch, Wave, Pde };
const char* to_string(Workload w);

// Named constants from `parameters`, in file order.
using Params = std::vector<std::pair<std::string, double>>;

// An expression of x, y, z, pi, e and the parameters (muparser syntax), with
// where it was written so that evaluation errors can point at it.
struct Expr {
  std::string text = "0";
  SourceLoc loc;
  std::string key;  // dotted path, e.g. "boundary.x-.value"
};

struct FaceBc {
  BcType type = BcType::Dirichlet;
  Expr value;            // Dirichlet value (expression allowed)
  double gradient = 0;   // Neumann ∂u/∂n, outward normal
};

struct InitialSpec {
  enum class Kind { Value, Expr, File };
  Kind kind = Kind::Value;
  double value = 0;
  Expr expr;
  std::string path;      // File: resolved against the case file's folder
  std::string dataset;   // File: HDF5 dataset path
  SourceLoc loc;         // Value, File: where the value or the file was given
};

// heat.scheme, parsed once: FTCS, backward Euler, Crank–Nicolson. to_string
// gives the name the case file, the resolved case, messages and logs use.
enum class HeatScheme { Explicit, Implicit, CrankNicolson };
const char* to_string(HeatScheme s);
// The scheme of that name (explicit | implicit | crank-nicolson), if any.
std::optional<HeatScheme> parse_heat_scheme(std::string_view name);

// laplace.preconditioner (cg) and heat.solver.preconditioner (the implicit schemes): none, Jacobi (the operator's diagonal) or one
// multigrid V-cycle.
// Auto: heat.solver.preconditioner only, chosen by the device and grid (heat_preconditioner).
enum class LaplacePrecond { None, Jacobi, Multigrid, Auto };
const char* to_string(LaplacePrecond p);
// laplace.operator (cg) and heat.solver.operator (the implicit schemes): CG's
// operator applied from the stencil formula (matrix-free), or as an
// assembled sparse matrix (csr: cuSPARSE's SpMV on the GPU).
enum class LaplaceOperator { MatrixFree, Csr };
const char* to_string(LaplaceOperator o);

struct HeatSpec {
  // heat.alpha: a number, or a field of x, y, z (variable_alpha(): an
  // expression or an HDF5 dataset, alpha_field), which runs
  // ∂u/∂t = ∇·(α∇u) + source as the one-field pde program `program` on the
  // pde executor (solvers/heat_var.hpp). alpha is the number, or the largest
  // value over the grid (the explicit limit's), alpha_min the smallest.
  double alpha = 0;
  double alpha_min = 0;
  InitialSpec alpha_field;  // Kind::Value: alpha is that number
  PdeProgram program;       // variable alpha only
  bool variable_alpha() const { return alpha_field.kind != InitialSpec::Kind::Value; }
  // The source, or a Dirichlet value (the case's boundary), reads t: it is
  // evaluated again at each step's time (docs/cases.md#heat).
  bool source_uses_t = false, boundary_uses_t = false;
  bool uses_t() const { return source_uses_t || boundary_uses_t; }
  HeatScheme scheme = HeatScheme::Explicit;
  bool dt_auto = true;
  double dt = 0;         // resolved step (auto: 0.9 × dt_limit)
  double dt_limit = 0;   // explicit stability limit 1 / (2α Σ 1/h²)
  bool use_t_end = false;
  double t_end = 0;
  std::int64_t steps = 0;  // resolved number of steps
  double last_dt = 0;      // the last step, shortened to land on t_end (= dt otherwise)
  Expr source;             // "0" when absent
  // heat.solver as written: the resolved case echoes it for the explicit
  // scheme too, which does not use it.
  std::optional<double> solver_tolerance_asked;
  std::optional<std::int64_t> solver_max_iters_asked;
  // The CG solve of each step of the implicit schemes (heat.solver), resolved:
  // ‖r‖₂/‖b‖₂ ≤ tolerance (raised to kFloat32ToleranceFloor in float32).
  double solver_tolerance = 1e-10;
  std::int64_t solver_max_iters = 1000;
  // heat.solver.operator and heat.solver.preconditioner: CG's operator and
  // preconditioner, as laplace.operator and laplace.preconditioner.
  LaplaceOperator solver_operator = LaplaceOperator::MatrixFree;
  LaplacePrecond solver_preconditioner = LaplacePrecond::Auto;
  // Explicit steps per pass over memory (temporal blocking): 0 = auto.
  int time_block = 0;
  bool implicit() const { return scheme != HeatScheme::Explicit; }
  // θ of the θ-scheme: 1 backward Euler, 1/2 Crank–Nicolson (0: explicit).
  double theta() const {
    return scheme == HeatScheme::Implicit ? 1.0 : scheme == HeatScheme::CrankNicolson ? 0.5 : 0.0;
  }
};

// u_tt = c²·Δu + f(x) (workload wave, io/case_wave.cpp), resolved.
struct WaveSpec {
  double c = 1;            // wave speed
  bool dt_auto = true;
  double dt = 0;           // resolved step: auto 0.9 × dt_limit; t_end evens it out
  double dt_limit = 0;     // the CFL limit 1 / (c·√Σ 1/h²)
  bool use_t_end = false;
  double t_end = 0;
  std::int64_t steps = 0;  // resolved number of steps
  Expr velocity;           // ∂u/∂t at t = 0; "0" when absent
  Expr source;             // f(x); "0" when absent
};

// The relative residual float32 can reach is about 1e-6 on the grids gridforge
// runs; a smaller tolerance is raised to this in float32 (and the resolved
// case says so), rather than running to max_iters.
inline constexpr double kFloat32ToleranceFloor = 1e-5;

// The most steps heat.time_block and stencil.time_block may ask for in one pass.
inline constexpr int kMaxTimeBlock = 8;
// time_block auto: the deepest pass it tries (the executors' deepest), and
// the fewest steps for which it tries any (solvers/stepper.hpp,
// fastest_time_block).
inline constexpr int kAutoTimeBlockDeepest = 4;
inline constexpr std::int64_t kAutoTimeBlockMinSteps = 200;

// laplace.method, parsed once: Jacobi, red-black SOR, conjugate gradients,
// the spectral FFT solve, geometric multigrid. to_string gives the name the
// case file, the resolved case, messages and logs use.
enum class LaplaceMethod { Jacobi, Sor, Cg, Fft, Multigrid };
const char* to_string(LaplaceMethod m);
// The method of that name (jacobi | sor | cg | fft | multigrid), if any.
std::optional<LaplaceMethod> parse_laplace_method(std::string_view name);
// laplace.cycle (multigrid): V-cycles or F-cycles.
enum class MgCycle { V, F };
const char* to_string(MgCycle c);

// ∇²u = f (workload laplace): the method, the right-hand side and the
// convergence control, resolved.
struct LaplaceSpec {
  LaplaceMethod method = LaplaceMethod::Jacobi;
  Expr rhs;                        // f(x, y, z); "0" when absent
  double tolerance = 1e-8;         // on ‖r‖₂/‖r₀‖₂ (‖W·f‖₂ when f ≠ 0); see docs/design.md
  double tolerance_asked = 1e-8;   // as written (float32 may raise it)
  std::int64_t max_iters = 100000;
  std::int64_t check_every = 50;
  bool omega_auto = true;
  // As written; with auto, 0 until solvers' prepare_case sets the optimal ω
  // of the grid (solvers/laplace_setup.hpp).
  double omega = 0;
  bool remove_mean = false;
  // Jacobi sweeps per pass over memory (temporal blocking, 3D grids): 0 = auto.
  int time_block = 0;
  MgCycle cycle = MgCycle::V;  // multigrid
  LaplacePrecond preconditioner = LaplacePrecond::None;  // cg
  LaplaceOperator op = LaplaceOperator::MatrixFree;       // cg
  // laplace.precision: mixed (multigrid in float64): float64 residuals,
  // float32 correction cycles (solvers/mixed.hpp); uniform: the case's precision throughout.
  bool mixed = false;
  // No Dirichlet face: u is fixed up to a constant (the solution returned has mean 0).
  bool singular = false;
  // The mean of f that is not compatible with the boundaries (removed when
  // remove_mean; a case error otherwise), computed by solvers' prepare_case
  // when singular.
  double incompatible_mean = 0;
  // Where that case error points: laplace.rhs, else the laplace section, else
  // the case's top.
  SourceLoc balance_loc;
  std::string balance_key;
};

// The pde workload's integrators (pde.integrator): forward Euler, the SSP
// Runge–Kutta methods of order 2 and 3 (Shu–Osher form), classical RK4.
enum class PdeIntegrator { Euler, SspRk2, SspRk3, Rk4 };
const char* to_string(PdeIntegrator i);

// One field of a pde case: its name, initial value, boundaries and equation
// ∂f/∂t = rhs (io/case_pde.cpp).
struct PdeFieldSpec {
  std::string name;
  InitialSpec initial;                     // the field's own, else the case's initial:
  std::array<FaceBc, kFaces> boundary;     // the field's own, else the case's boundary:
  bool own_initial = false, own_boundary = false;
  Expr equation;                           // the right-hand side as written
};

// Several fields, each with ∂f/∂t = rhs(fields, derivatives, x, y, z, t)
// (workload pde, io/case_pde.cpp), resolved.
struct PdeSpec {
  std::vector<PdeFieldSpec> fields;
  // Fields of x, y, z evaluated once: the named ones of pde.coefficients,
  // then one for each k of div(k*grad(f)) that is an expression.
  std::vector<std::pair<std::string, Expr>> coefficients;
  std::size_t named_coefficients = 0;
  PdeIntegrator integrator = PdeIntegrator::SspRk3;
  bool dt_auto = true;
  double dt = 0;            // the step (auto: 0.9 × dt_limit)
  double dt_limit = 0;      // the stability estimate (io/case_pde.cpp); inf: none found
  std::string limit_why;    // what sets it ("diffusion of u", ...)
  bool use_t_end = false;
  double t_end = 0;
  std::int64_t steps = 0;
  PdeProgram program;       // the equations compiled (io/pde_program.cpp)
};

// One point of a stencil: an offset (dx, dy, dz; 0 on axes the grid lacks)
// and its weight.
struct StencilPoint {
  int d[3] = {0, 0, 0};
  double w = 0;
};

// The generic stencil workload: uⁿ⁺¹ = uⁿ + coeff·Σ wₖ uⁿ(x+oₖ) (update) or
// uⁿ⁺¹ = Σ wₖ uⁿ(x+oₖ) (replace). Presets are expanded into points here, with
// their 1/h² scaling (they are discrete Laplacians); user points are taken as
// written.
struct StencilSpec {
  enum class Form { Update, Replace };
  std::string preset;               // "" for user points
  std::vector<StencilPoint> points;  // resolved, never empty
  Form form = Form::Update;
  double coeff = 1.0;
  std::int64_t steps = 0;
  int radius = 0;                    // largest |offset| over all points and axes
  // Steps per pass over memory (temporal blocking, 3D star7-shaped stencils): 0 = auto.
  int time_block = 0;
};

// grid.extent or grid.spacing as written, per axis (Grid::h is the spacing
// they give once the boundary is known); the resolved case echoes them.
struct GridLengths {
  std::vector<double> lengths;
  bool by_spacing = false;
};

struct OutputSpec {
  std::string dir;             // default out/<name>
  std::int64_t every = 0;      // 0: final state only
  std::int64_t check_every = 100;  // steps between NaN/Inf checks (≥ 1)
  bool vtk = true;
  bool hdf5 = true;
  io::Compression compression;  // of the .vti files
  // of fields.h5's datasets: none or zlib (shuffle + deflate), zlib:1 by
  // default (docs/performance.md, "fields.h5 compressed")
  io::Compression hdf5_compression{io::Compression::Method::None};  // docs/performance.md, "fields.h5 compressed"
  std::int64_t checkpoint_every = 0;
};

struct Case {
  std::string file;  // the case file path as given
  std::string name;
  Workload workload = Workload::Heat;
  Precision precision = Precision::Float64;
  std::string device = "auto";
  Params parameters;
  Grid grid;  // on an MPI rank: the rank's padded block (grid/decomp.hpp)
  GridLengths grid_lengths;
  // grid.ranks: ranks per axis for MPI runs (empty: chosen by the run).
  std::vector<int> ranks;
  SourceLoc ranks_loc;
  // Set on the rank-local case of a run over several MPI ranks: the split,
  // with the global grid. Null on one rank.
  std::shared_ptr<const Decomp> decomp;
  std::array<FaceBc, kFaces> boundary;  // x- x+ y- y+ z- z+ (only 2·ndim used)
  InitialSpec initial;
  HeatSpec heat;        // workload heat
  StencilSpec stencil;  // workload stencil
  WaveSpec wave;        // workload wave
  PdeSpec pde;          // workload pde
  LaplaceSpec laplace;  // workload laplace
  RaySpec raymarch;     // workload raymarch
  RaySpec render;       // heat, stencil, laplace: in-situ frames (render.enabled)
  OutputSpec output;
  std::string resolved_yaml;  // the resolved case (defaults filled) as YAML text
};

// Loads and checks a case file. overrides: "dotted.key=yaml-value" strings
// from the command line, applied before checking. Throws CaseError. What
// needs the numerics (laplace: the auto SOR ω, whether f balances the
// boundaries) is left to solvers' prepare_case (solvers/prepare.hpp), which
// the app calls on the case next.
Case load_case(const std::string& path, const std::vector<std::string>& overrides = {});

// Same, from text already in memory; `label` stands for the file name in
// messages and relative paths resolve against `base_dir`.
Case load_case_text(const std::string& text, const std::string& label,
                    const std::vector<std::string>& overrides = {}, const std::string& base_dir = ".");

// The resolved case as YAML text, every default filled in (Case::resolved_yaml):
// load_case sets it, and solvers' prepare_case again once the values it
// resolves (the auto SOR ω) are in. Loading it gives the same case.
std::string emit_resolved(const Case& c);

// True when the points have star5's offsets in its order on the 2D grid g,
// or star7's on the 3D grid g (whatever the weights): the stencils the
// temporally blocked passes run (ops/time_block.hpp).
bool star_order(const std::vector<StencilPoint>& pts, const Grid& g);

// Von Neumann analysis of one stencil step on a periodic grid of ndim axes
// (io/case_stencil.cpp): the largest |G(θ)| over the sampled wave numbers θ
// (units of π), and for form: update the largest stable coeff (≤ 0: none).
struct StencilStability {
  double growth = 0;
  std::array<double, 3> theta{};
  double coeff_max = 0;
};
StencilStability stencil_stability(const StencilSpec& s, int ndim);
// "stable: ..." or "warning: not stable: ...": the stencil's line in --dry-run and the run log.
std::string stencil_setup_line(const StencilSpec& s, int ndim);

// The workload's time_block as the case gives it (0: auto; 0 for raymarch).
int time_block_asked(const Case& c);

}  // namespace gf
