#include "io/pde_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "io/expression.hpp"

namespace gf::pde_case {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

// The operators of the equations, rewritten before muparser sees the text.
constexpr std::string_view kOperators[] = {"lap", "dx", "dy", "dz", "dx_up", "dy_up", "dz_up",
                                           "div", "grad"};

bool is_operator(std::string_view id) {
  return std::find(std::begin(kOperators), std::end(kOperators), id) != std::end(kOperators);
}

// Splits the text between the parentheses of a call at its top-level commas.
std::vector<std::string> split_args(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

class Rewriter {
 public:
  Rewriter(PdeSpec& p, const Params& params, int ndim) : p_(p), params_(params), ndim_(ndim) {}

  // The equation's text with its operators replaced by input variables.
  std::string rewrite(const Expr& e, std::string_view text) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
      if (!ident_start(text[i]) || (i > 0 && ident_char(text[i - 1]))) {
        out += text[i++];
        continue;
      }
      std::size_t j = i;
      while (j < text.size() && ident_char(text[j])) ++j;
      const std::string id(text.substr(i, j - i));
      std::size_t k = j;
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (!is_operator(id) || k >= text.size() || text[k] != '(') {
        out += id;
        i = j;
        continue;
      }
      int depth = 0;
      std::size_t close = k;
      for (; close < text.size(); ++close) {
        if (text[close] == '(') ++depth;
        if (text[close] == ')' && --depth == 0) break;
      }
      if (close >= text.size()) fail(e, fmt::format("'{}(' has no closing parenthesis", id));
      const std::string call(text.substr(i, close + 1 - i));
      out += replace(e, id, call, split_args(text.substr(k + 1, close - k - 1)));
      i = close + 1;
    }
    return out;
  }

  // The derivative inputs found, in order of first use, with their names.
  std::vector<PdeInput> inputs;
  std::vector<std::string> names;

 private:
  [[noreturn]] void fail(const Expr& e, const std::string& why) const {
    throw CaseError(e.loc, e.key, why);
  }

  // The index of a state field (0..) or a coefficient (nfields + c), or -1.
  int field_index(const std::string& name) const {
    for (std::size_t f = 0; f < p_.fields.size(); ++f)
      if (p_.fields[f].name == name) return int(f);
    for (std::size_t c = 0; c < p_.coefficients.size(); ++c)
      if (p_.coefficients[c].first == name) return int(p_.fields.size() + c);
    return -1;
  }

  std::string fields_list() const {
    std::string s;
    for (const PdeFieldSpec& f : p_.fields) s += (s.empty() ? "" : ", ") + f.name;
    return s;
  }

  // The state field an operator is applied to.
  int state_field(const Expr& e, const std::string& call, const std::string& arg) const {
    for (std::size_t f = 0; f < p_.fields.size(); ++f)
      if (p_.fields[f].name == arg) return int(f);
    if (field_index(arg) >= 0)
      fail(e, fmt::format("{}: '{}' is a coefficient; derivatives apply to the fields ({})", call,
                          arg, fields_list()));
    fail(e, fmt::format("{}: the operators apply to a field by name ({}), not to '{}' (a "
                        "derivative of an expression or of a derivative needs more than the "
                        "radius-1 stencil gridforge's operators have)",
                        call, fields_list(), arg));
  }

  int axis_of(const Expr& e, const std::string& call, char c) const {
    const int a = c - 'x';
    if (a >= ndim_)
      fail(e, fmt::format("{}: the grid has no {} axis (grid.dims has {} entries)", call, c, ndim_));
    return a;
  }

  std::string input(PdeInputKind kind, int field, int axis, int k, std::string name) {
    for (std::size_t q = 0; q < inputs.size(); ++q)
      if (names[q] == name) return name;
    inputs.push_back(PdeInput{kind, field, axis, k});
    names.push_back(name);
    return name;
  }

  std::string replace(const Expr& e, const std::string& id, const std::string& call,
                      const std::vector<std::string>& args) {
    const auto want = [&](std::size_t n) {
      if (args.size() != n || args[0].empty())
        fail(e, fmt::format("{} takes {}", call,
                            n == 1 ? "one field: " + id + "(u)" : "a field and a velocity: " + id + "(u, a)"));
    };
    if (id == "grad")
      fail(e, fmt::format("{}: grad appears only inside div(k*grad(f)), the flux form's "
                          "diffusion; lap(f) is div(grad(f))",
                          call));
    if (id == "lap") {
      want(1);
      const int f = state_field(e, call, args[0]);
      return input(PdeInputKind::Lap, f, 0, 0, "__lap_" + args[0]);
    }
    if (id.size() == 2) {  // dx dy dz
      want(1);
      const int a = axis_of(e, call, id[1]);
      const int f = state_field(e, call, args[0]);
      return input(PdeInputKind::D1, f, a, 0, fmt::format("__d{}_{}", id[1], args[0]));
    }
    if (id.ends_with("_up")) {
      want(2);
      const int a = axis_of(e, call, id[1]);
      const int f = state_field(e, call, args[0]);
      const std::string vel = rewrite(e, args[1]);
      const std::string m = input(PdeInputKind::Dm, f, a, 0, fmt::format("__d{}m_{}", id[1], args[0]));
      const std::string pl = input(PdeInputKind::Dp, f, a, 0, fmt::format("__d{}p_{}", id[1], args[0]));
      return fmt::format("((({}) >= 0) ? {} : {})", vel, m, pl);
    }
    // div(k*grad(f)), div(grad(f))
    want(1);
    const std::string& a = args[0];
    const auto g = a.rfind("grad");
    std::string k, inner;
    if (g != std::string::npos && a.back() == ')') {
      std::size_t open = g + 4;
      while (open < a.size() && std::isspace(static_cast<unsigned char>(a[open]))) ++open;
      if (open < a.size() && a[open] == '(') inner = trim(std::string_view(a).substr(open + 1, a.size() - open - 2));
      const std::string before = trim(std::string_view(a).substr(0, g));
      if (!inner.empty() && before.empty()) {
        const int f = state_field(e, call, inner);
        return input(PdeInputKind::Lap, f, 0, 0, "__lap_" + inner);
      }
      if (!inner.empty() && before.back() == '*') k = trim(std::string_view(before).substr(0, before.size() - 1));
    }
    if (k.empty() || inner.empty())
      fail(e, fmt::format("{}: div takes the flux form div(k*grad(f)), k a field, a coefficient or "
                          "an expression of x, y, z",
                          call));
    const int f = state_field(e, call, inner);
    int kf = field_index(k);
    if (kf < 0) {
      for (std::string_view op : kOperators)
        if (k.find(std::string(op) + "(") != std::string::npos)
          fail(e, fmt::format("{}: k may not hold a derivative", call));
      Expr ke{k, e.loc, e.key};
      check_expression(ke, params_);
      p_.coefficients.emplace_back(fmt::format("__k{}", p_.coefficients.size()), ke);
      kf = int(p_.fields.size() + p_.coefficients.size() - 1);
    }
    return input(PdeInputKind::DivK, f, 0, kf, fmt::format("__divk{}_{}", kf, inner));
  }

  PdeSpec& p_;
  const Params& params_;
  int ndim_;
};

// Parses text (the rewritten equation) with the given variables; a fault is
// reported with the equation as the user wrote it.
Expression parse(const Expr& e, const std::string& text, const Params& params,
                 const std::vector<std::string>& vars) {
  try {
    return Expression(Expr{text, e.loc, e.key}, params, vars);
  } catch (const CaseError& err) {
    if (text == e.text) throw;
    std::string msg = err.message();
    const std::string shown_text = "\"" + text + "\"";
    if (const auto at = msg.find(shown_text); at != std::string::npos)
      msg.replace(at, shown_text.size(), "\"" + e.text + "\" (as " + shown_text + ")");
    throw CaseError(e.loc, e.key, msg);
  }
}

// A right-hand side's bytecode with each product v·a that muparser writes as
// v·a + 0 (VarMul: `D*lap(u)`, `k*v`) made VarScale: an addition a point
// fewer on both executors (a Gray–Scott step has 3 a point). The + 0 it
// drops turned a −0 product into +0 (v·a + (−0) is v·a to the bit).
ExprCode without_zero_offsets(ExprCode c) {
  for (ExprInstr& i : c.code)
    if (i.op == ExprOp::VarMul && i.b == 0) i = ExprInstr{ExprOp::VarScale, i.n, i.a, 0};
  return c;
}

}  // namespace

bool is_reserved_name(const std::string& name) {
  return name.starts_with("__") || is_operator(name) || name == "t" || name == "x" || name == "y" ||
         name == "z";
}

std::vector<Expression> compile(PdeSpec& p, const Params& params, int ndim) {
  PdeProgram& prog = p.program;
  prog = PdeProgram{};
  for (const PdeFieldSpec& f : p.fields) prog.fields.push_back(f.name);
  Rewriter rw(p, params, ndim);
  std::vector<std::string> texts;
  for (const PdeFieldSpec& f : p.fields) texts.push_back(rw.rewrite(f.equation, f.equation.text));
  for (const auto& [name, e] : p.coefficients) prog.coefficients.push_back(name);

  // Every name an equation may read: t, the fields' and named coefficients'
  // values, the derivatives found.
  const int nf = int(p.fields.size());
  std::vector<PdeInput> all;
  std::vector<std::string> all_names;
  for (int f = 0; f < nf + int(p.named_coefficients); ++f) {
    all.push_back(PdeInput{PdeInputKind::Value, f, 0, 0});
    all_names.push_back(f < nf ? p.fields[f].name : p.coefficients[f - nf].first);
  }
  all.insert(all.end(), rw.inputs.begin(), rw.inputs.end());
  all_names.insert(all_names.end(), rw.names.begin(), rw.names.end());
  std::vector<std::string> vars{"t"};
  vars.insert(vars.end(), all_names.begin(), all_names.end());

  // The inputs some equation uses, and then each equation's bytecode over them.
  std::vector<bool> used(all.size(), false);
  for (int f = 0; f < nf; ++f) {
    const Expression x = parse(p.fields[f].equation, texts[f], params, vars);
    prog.uses_t = prog.uses_t || x.uses("t");
    for (std::size_t q = 0; q < all.size(); ++q) used[q] = used[q] || x.uses(all_names[q]);
  }
  std::vector<std::string> final_vars{"t"};
  for (std::size_t q = 0; q < all.size(); ++q)
    if (used[q]) {
      prog.inputs.push_back(all[q]);
      prog.input_names.push_back(all_names[q]);
      final_vars.push_back(all_names[q]);
    }
  std::vector<Expression> out;
  for (int f = 0; f < nf; ++f) {
    out.push_back(parse(p.fields[f].equation, texts[f], params, final_vars));
    prog.rhs.push_back(without_zero_offsets(out.back().code()));
  }

  prog.dirichlet.resize(p.fields.size());
  for (int f = 0; f < nf; ++f)
    for (int face = 0; face < 2 * ndim; ++face) {
      const FaceBc& bc = p.fields[f].boundary[face];
      if (bc.type != BcType::Dirichlet) continue;
      const Expression x(bc.value, params, {"t"});
      prog.uses_t = prog.uses_t || x.uses("t");
      prog.dirichlet[f][face] = x.code();
    }
  return out;
}

}  // namespace gf::pde_case
