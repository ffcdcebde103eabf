#include "io/expression.hpp"

#include <fmt/format.h>
#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "io/case_schema.hpp"
#include "core/threads.hpp"

namespace gf {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// muparser treats `x = 1` (and +=, -=, ...) as an assignment to the variable,
// which would silently move the sample point; only ==, !=, <=, >= compare.
bool has_assignment(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    if (i + 1 < text.size() && text[i + 1] == '=') {
      ++i;
      continue;
    }
    if (i > 0 && (text[i - 1] == '!' || text[i - 1] == '<' || text[i - 1] == '>')) continue;
    return true;
  }
  return false;
}

// muparser's reason, reworded where it names an unknown identifier (its most
// common fault in a case file: a parameter that was not declared).
std::string reason(const mu::Parser::exception_type& err) {
  if (err.GetCode() == mu::ecUNASSIGNABLE_TOKEN && is_identifier(err.GetToken()))
    return fmt::format("unknown name '{}'", shown(err.GetToken(), 40));
  std::string msg = err.GetMsg();
  while (!msg.empty() && (msg.back() == '.' || msg.back() == ' ')) msg.pop_back();
  if (!msg.empty()) msg[0] = char(std::tolower(static_cast<unsigned char>(msg[0])));
  return msg;
}

[[noreturn]] void parse_error(const Expr& expr, const std::string& why) {
  throw CaseError(expr.loc, expr.key, fmt::format("cannot parse \"{}\": {}", shown(expr.text), why));
}

}  // namespace

struct Expression::Impl {
  // The parser holds pointers to these: Impl lives on the heap so they stay put
  // when the Expression moves.
  double x = 0, y = 0, z = 0;
  mu::Parser parser;
  bool constant = false;
};

Expression::Expression(const Expr& expr, const Params& params) : impl_(std::make_unique<Impl>()) {
  if (has_assignment(expr.text)) parse_error(expr, "'=' assigns in muparser; use == to compare");
  mu::Parser& p = impl_->parser;
  try {
    p.DefineVar("x", &impl_->x);
    p.DefineVar("y", &impl_->y);
    p.DefineVar("z", &impl_->z);
    p.DefineConst("pi", std::numbers::pi);
    p.DefineConst("e", std::numbers::e);
    for (const auto& [name, value] : params) p.DefineConst(name, value);
    p.SetExpr(expr.text);
    p.Eval();  // parses now, so that faults surface at load time
    if (p.GetNumResults() != 1)
      parse_error(expr,
                  fmt::format("expected one value, got {} separated by commas", p.GetNumResults()));
    const auto& used = p.GetUsedVar();
    impl_->constant = !used.contains("x") && !used.contains("y") && !used.contains("z");
  } catch (const mu::Parser::exception_type& err) {
    std::string why = reason(err);
    if (expr.text.find("**") != std::string::npos) why += "; muparser writes powers with ^ (x^2), not **";
    parse_error(expr, why);
  }
}

Expression::~Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;

double Expression::operator()(double x, double y, double z) const {
  impl_->x = x;
  impl_->y = y;
  impl_->z = z;
  return impl_->parser.Eval();
}

bool Expression::is_constant() const { return impl_->constant; }

void check_expression(const Expr& expr, const Params& params) { (void)Expression(expr, params); }

namespace {

std::array<double, 3> point_of(const Grid& grid, std::int64_t idx) {
  const std::int64_t i = idx % grid.n[0], j = (idx / grid.n[0]) % grid.n[1],
                     k = idx / (grid.n[0] * grid.n[1]);
  const std::array<std::int64_t, 3> ijk{i, j, k};
  std::array<double, 3> p{0, 0, 0};
  for (int a = 0; a < grid.ndim; ++a) p[a] = grid.coord(a, ijk[a]);
  return p;
}

template <class T>
[[noreturn]] void not_finite(const Expr& expr, const Expression& f, const Grid& grid,
                             std::int64_t idx) {
  const auto [x, y, z] = point_of(grid, idx);
  const double v = f(x, y, z);
  const std::string where = fmt::format("(x, y, z) = ({:g}, {:g}, {:g})", x, y, z);
  if (std::isfinite(v))  // finite in double, but out of range of float32
    throw CaseError(
        expr.loc, expr.key,
        fmt::format("value {:g} does not fit in {} at {}", v, to_string(precision_of<T>()), where));
  throw CaseError(expr.loc, expr.key, "value is not finite at " + where);
}

// Fills out[] row by row; returns the lowest index whose value is not finite
// in T, or -1. mu::Parser is not thread-safe: each thread evaluates its own
// copy, all built here before the parallel loop so none can throw inside it.
template <class T>
std::int64_t sample_rows(const Expr& expr, const Params& params, const Grid& grid, T* out) {
  std::vector<Expression> per_thread;
  for (int t = 0; t < omp_get_max_threads(); ++t) per_thread.emplace_back(expr, params);
  std::int64_t first_bad = std::numeric_limits<std::int64_t>::max();
  const std::int64_t nx = grid.n[0], ny = grid.n[1], nz = grid.n[2];
  // muparser takes some 50-100 ns a value: a thread per 4096 points
#pragma omp parallel for collapse(2) schedule(static) reduction(min : first_bad) \
    num_threads(cpu::threads_for(grid.size(), 4096))
  for (std::int64_t k = 0; k < nz; ++k) {
    for (std::int64_t j = 0; j < ny; ++j) {
      const Expression& f = per_thread[omp_get_thread_num()];
      const double y = grid.ndim > 1 ? grid.coord(1, j) : 0.0;
      const double z = grid.ndim > 2 ? grid.coord(2, k) : 0.0;
      const std::int64_t row = grid.index(0, j, k);
      for (std::int64_t i = 0; i < nx; ++i) {
        const T v = static_cast<T>(f(grid.coord(0, i), y, z));
        out[row + i] = v;
        if (!std::isfinite(v)) first_bad = std::min(first_bad, row + i);
      }
    }
  }
  return first_bad == std::numeric_limits<std::int64_t>::max() ? -1 : first_bad;
}

}  // namespace

template <class T>
void sample_expression(const Expr& expr, const Params& params, const Grid& grid, T* out) {
  const Expression f(expr, params);  // parse faults are thrown here, once
  std::int64_t bad = -1;
  if (f.is_constant()) {
    const T v = static_cast<T>(f(0, 0, 0));
    std::fill(out, out + grid.size(), v);
    if (!std::isfinite(v)) bad = 0;
  } else {
    bad = sample_rows(expr, params, grid, out);
  }
  if (bad >= 0) not_finite<T>(expr, f, grid, bad);
}

template void sample_expression<float>(const Expr&, const Params&, const Grid&, float*);
template void sample_expression<double>(const Expr&, const Params&, const Grid&, double*);

namespace schema {

std::string parameter_name_problem(const std::string& name) {
  if (!is_identifier(name))
    return "not a valid name (letters, digits and _, not starting with a digit)";
  if (name == "x" || name == "y" || name == "z" || name == "pi" || name == "e")
    return fmt::format("'{}' is predefined in expressions (x, y, z, pi and e are reserved)", name);
  const mu::Parser p;
  if (p.GetFunDef().contains(name)) return fmt::format("'{}' is a built-in function", name);
  if (p.GetConst().contains(name)) return fmt::format("'{}' is a built-in constant", name);
  return "";
}

}  // namespace schema

}  // namespace gf
