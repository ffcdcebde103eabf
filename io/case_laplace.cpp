// The laplace: section (SPEC §3): the method, the right-hand side, the
// convergence control, ω, remove_mean and time_block, checked against the
// grid and the boundaries; echoed in the resolved case. The auto ω and
// whether f balances the boundaries need the numerics: solvers' prepare_case
// works them out (solvers/laplace_setup.hpp).
#include "io/case_sections.hpp"

#include <optional>
#include <stdexcept>

#include "io/expression.hpp"

namespace gf {

const char* to_string(LaplaceMethod m) {
  switch (m) {
    case LaplaceMethod::Jacobi: return "jacobi";
    case LaplaceMethod::Sor: return "sor";
    case LaplaceMethod::Cg: return "cg";
    case LaplaceMethod::Fft: return "fft";
    case LaplaceMethod::Multigrid: return "multigrid";
  }
  return "?";
}

const char* to_string(MgCycle c) { return c == MgCycle::F ? "f" : "v"; }

const char* to_string(LaplaceOperator o) {
  return o == LaplaceOperator::Csr ? "csr" : "matrix-free";
}

const char* to_string(LaplacePrecond p) {
  switch (p) {
    case LaplacePrecond::None: return "none";
    case LaplacePrecond::Jacobi: return "jacobi";
    case LaplacePrecond::Multigrid: return "multigrid";
    case LaplacePrecond::Auto: return "auto";
  }
  return "?";
}

std::optional<LaplaceMethod> parse_laplace_method(std::string_view name) {
  for (LaplaceMethod m : {LaplaceMethod::Jacobi, LaplaceMethod::Sor, LaplaceMethod::Cg,
                          LaplaceMethod::Fft, LaplaceMethod::Multigrid})
    if (name == to_string(m)) return m;
  return std::nullopt;
}

}  // namespace gf

namespace gf::case_sections {

namespace {

// A name schema::kLaplaceMethods allows.
LaplaceMethod method_named(std::string_view name) {
  if (const auto m = parse_laplace_method(name)) return *m;
  throw std::logic_error("laplace method without an enum value");  // kLaplaceMethods drifted
}


bool read_bool(const Value& v) {
  bool b = false;
  if (!v.node().IsScalar() || !YAML::convert<bool>::decode(v.node(), b))
    v.fail("expected true or false, got " + v.describe());
  return b;
}

void read_omega(const Value& v, LaplaceSpec& L) {
  if (!v.present() || (v.node().IsScalar() && v.node().Scalar() == "auto")) return;
  double w = 0;
  if (!v.node().IsScalar() || !YAML::convert<double>::decode(v.node(), w) || !(w > 0 && w < 2))
    v.fail("expected auto or a number in (0, 2), got " + v.describe());
  L.omega_auto = false;
  L.omega = w;
}

// fft is periodic by nature; red-black SOR needs two colours that alternate
// across the wrap of a periodic axis too, so an even number of points there.
void check_method_fits(const Value& method, const LaplaceSpec& L, const Case& c) {
  const Grid& g = c.grid;
  for (int a = 0; a < g.ndim; ++a) {
    if (L.method == LaplaceMethod::Fft && !g.periodic[a]) {
      const int f = c.boundary[2 * a].type != BcType::Periodic ? 2 * a : 2 * a + 1;
      method.fail(fmt::format("fft needs every axis periodic (the FFT solve is periodic); "
                              "boundary {} is {}",
                              face_name(f), bc_name(c.boundary[f].type)));
    }
    if (L.method == LaplaceMethod::Sor && g.periodic[a] && g.n[a] % 2 != 0)
      method.fail(fmt::format("sor colours the grid red-black, which needs an even number of "
                              "points on a periodic axis; grid.dims[{}] is {}",
                              a, g.n[a]));
  }
}

}  // namespace

void read_laplace(const Map& top, const Case& c, LaplaceSpec& L) {
  const Value section = top.get("laplace");
  const std::optional<Map> m =
      section.present() ? std::optional<Map>(section.map(schema::kLaplaceKeys)) : std::nullopt;
  auto get = [&](std::string_view k) {
    return m ? m->get(k)
             : Value(top.self().sources(), YAML::Node(YAML::NodeType::Undefined),
                     "laplace." + std::string(k));
  };
  const Value method = get("method");
  if (method.present()) L.method = method_named(method.choice(schema::kLaplaceMethods));
  const Value rhs = get("rhs");
  L.rhs = rhs.present() ? rhs.expr() : Expr{"0", section.loc(), "laplace.rhs"};
  check_expression(L.rhs, c.parameters);
  if (get("tolerance").present()) L.tolerance_asked = get("tolerance").positive();
  L.tolerance = effective_tolerance(L.tolerance_asked, c.precision);
  if (get("max_iters").present()) L.max_iters = get("max_iters").integer(1);
  if (get("check_every").present()) L.check_every = get("check_every").integer(1);
  read_omega(get("omega"), L);
  if (get("remove_mean").present()) L.remove_mean = read_bool(get("remove_mean"));
  if (get("time_block").present()) {
    L.time_block = read_time_block(get("time_block"));
    if (L.time_block > 1 && L.method != LaplaceMethod::Jacobi)
      get("time_block").fail(fmt::format("temporal blocking is for the jacobi method, not {}",
                                         to_string(L.method)));
  }
  if (get("cycle").present()) {
    L.cycle = get("cycle").choice(schema::kMgCycles) == "f" ? MgCycle::F : MgCycle::V;
    if (L.method != LaplaceMethod::Multigrid)
      get("cycle").fail(fmt::format("cycle is for the multigrid method, not {}",
                                    to_string(L.method)));
  }
  if (get("preconditioner").present()) {
    L.preconditioner = read_preconditioner(get("preconditioner"));
    if (L.preconditioner != LaplacePrecond::None && L.method != LaplaceMethod::Cg)
      get("preconditioner").fail(fmt::format("a preconditioner is for the cg method, not {}",
                                             to_string(L.method)));
  }
  if (get("operator").present()) {
    L.op = read_operator(get("operator"));
    if (L.method != LaplaceMethod::Cg)
      get("operator").fail(fmt::format("operator is for the cg method, not {}",
                                       to_string(L.method)));
  }
  const Value precision = get("precision");
  if (precision.present()) L.mixed = precision.choice(schema::kLaplacePrecisions) == "mixed";
  check_method_fits(method.present() ? method : (m ? m->self() : top.self()), L, c);
  L.singular = true;
  for (int f = 0; f < 2 * c.grid.ndim; ++f)
    if (c.boundary[f].type == BcType::Dirichlet) L.singular = false;
  if (L.mixed) {
    if (L.method != LaplaceMethod::Multigrid)
      precision.fail(fmt::format("mixed is for the multigrid method, not {}", to_string(L.method)));
    if (c.precision != Precision::Float64)
      precision.fail("mixed refines a float64 solution with float32 cycles: it needs precision: "
                     "float64, not float32");
    if (L.singular)
      precision.fail("mixed needs a Dirichlet face (a solution fixed up to a constant is solved in "
                     "the case's precision)");
  }
  // With no Dirichlet face ∇²u = f has a solution only when f balances the
  // boundary flux: solvers' prepare_case checks it, pointing here.
  const Value& balance = rhs.present() ? rhs : (m ? m->self() : top.self());
  L.balance_loc = balance.loc();
  L.balance_key = balance.key();
}

void emit_laplace(YAML::Emitter& out, const LaplaceSpec& L) {
  out << YAML::Key << "laplace" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "method" << YAML::Value << to_string(L.method);
  out << YAML::Key << "rhs" << YAML::Value << L.rhs.text;
  out << YAML::Key << "tolerance" << YAML::Value << num(L.tolerance);
  if (L.tolerance != L.tolerance_asked)
    out << YAML::Comment(fmt::format("float32: raised from {}", num(L.tolerance_asked)));
  out << YAML::Key << "max_iters" << YAML::Value << L.max_iters;
  out << YAML::Key << "check_every" << YAML::Value << L.check_every;
  if (L.omega_auto) {
    out << YAML::Key << "omega" << YAML::Value << "auto";
    if (L.omega > 0)  // resolved (solvers' prepare_case)
      out << YAML::Comment(
          fmt::format("{}{}", num(L.omega), L.method == LaplaceMethod::Sor ? "" : "; sor only"));
  } else {
    out << YAML::Key << "omega" << YAML::Value << num(L.omega);
  }
  out << YAML::Key << "remove_mean" << YAML::Value << L.remove_mean;
  if (L.time_block > 0) out << YAML::Key << "time_block" << YAML::Value << L.time_block;
  if (L.method == LaplaceMethod::Multigrid) {
    out << YAML::Key << "cycle" << YAML::Value << to_string(L.cycle);
    out << YAML::Key << "precision" << YAML::Value << (L.mixed ? "mixed" : "uniform");
  }
  if (L.method == LaplaceMethod::Cg) {
    out << YAML::Key << "preconditioner" << YAML::Value << to_string(L.preconditioner);
    out << YAML::Key << "operator" << YAML::Value << to_string(L.op);
  }
  out << YAML::EndMap;
}

}  // namespace gf::case_sections
