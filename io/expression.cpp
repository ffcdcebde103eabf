#include "io/expression.hpp"

#include <fmt/format.h>
#include <muParser.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <deque>
#include <map>
#include <numbers>
#include <stack>
#include <stdexcept>
#include <utility>
#include <vector>

#include "io/case_schema.hpp"

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

// muparser's own sign operators (MathImpl::UnaryMinus, UnaryPlus), defined
// here so that code() knows them by address: muparser does not list its
// infix operators as it lists its functions (GetFunDef).
double unary_minus(double v) { return -v; }
double unary_plus(double v) { return v; }

}  // namespace

struct Expression::Impl {
  // The parser holds pointers to these: Impl lives on the heap so they stay put
  // when the Expression moves.
  double x = 0, y = 0, z = 0;
  std::deque<double> extra;  // the extra variables (a deque: they stay put as it grows)
  mu::Parser parser;
  bool constant = false;
};

Expression::Expression(const Expr& expr, const Params& params)
    : Expression(expr, params, std::vector<std::string>{}) {}

Expression::Expression(const Expr& expr, const Params& params, const std::vector<std::string>& vars)
    : impl_(std::make_unique<Impl>()) {
  if (has_assignment(expr.text)) parse_error(expr, "'=' assigns in muparser; use == to compare");
  mu::Parser& p = impl_->parser;
  try {
    p.ClearInfixOprt();  // the same two as muparser's Parser::InitOprt
    p.DefineInfixOprt("-", unary_minus);
    p.DefineInfixOprt("+", unary_plus);
    p.DefineVar("x", &impl_->x);
    p.DefineVar("y", &impl_->y);
    p.DefineVar("z", &impl_->z);
    for (const std::string& v : vars) p.DefineVar(v, &impl_->extra.emplace_back(0.0));
    p.DefineConst("pi", std::numbers::pi);
    p.DefineConst("e", std::numbers::e);
    for (const auto& [name, value] : params) p.DefineConst(name, value);
    p.SetExpr(expr.text);
    p.Eval();  // parses now, so that faults surface at load time
    if (p.GetNumResults() != 1)
      parse_error(expr,
                  fmt::format("expected one value, got {} separated by commas", p.GetNumResults()));
    const auto& used = p.GetUsedVar();
    impl_->constant = used.empty();
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

double Expression::at(const std::vector<double>& v) const {
  impl_->x = v.at(0);
  impl_->y = v.at(1);
  impl_->z = v.at(2);
  for (std::size_t k = 0; k < impl_->extra.size(); ++k) impl_->extra[k] = v.at(3 + k);
  return impl_->parser.Eval();
}

bool Expression::is_constant() const { return impl_->constant; }

bool Expression::uses(const std::string& name) const {
  return impl_->parser.GetUsedVar().contains(name);
}

void check_expression(const Expr& expr, const Params& params) { (void)Expression(expr, params); }

namespace {

// muparser's default functions (Parser::InitFun) by name; `log` is the
// natural logarithm in muparser 2.3, as `ln`.
const std::pair<const char*, ExprOp> kFunctions[] = {
    {"sin", ExprOp::Sin},     {"cos", ExprOp::Cos},     {"tan", ExprOp::Tan},
    {"asin", ExprOp::Asin},   {"acos", ExprOp::Acos},   {"atan", ExprOp::Atan},
    {"sinh", ExprOp::Sinh},   {"cosh", ExprOp::Cosh},   {"tanh", ExprOp::Tanh},
    {"asinh", ExprOp::Asinh}, {"acosh", ExprOp::Acosh}, {"atanh", ExprOp::Atanh},
    {"log", ExprOp::Ln},      {"ln", ExprOp::Ln},       {"log2", ExprOp::Log2},
    {"log10", ExprOp::Log10}, {"exp", ExprOp::Exp},     {"sqrt", ExprOp::Sqrt},
    {"abs", ExprOp::Abs},     {"sign", ExprOp::Sign},   {"rint", ExprOp::Rint},
    {"atan2", ExprOp::Atan2}, {"sum", ExprOp::Sum},     {"avg", ExprOp::Avg},
    {"min", ExprOp::Min},     {"max", ExprOp::Max},
};

bool is_variadic(ExprOp op) { return op >= ExprOp::Sum; }

[[noreturn]] void unknown_token(const std::string& text, std::size_t at, const std::string& what) {
  throw std::logic_error(fmt::format("expression \"{}\": muparser's token {} ({}) has no bytecode",
                                     text, at, what));
}

// How many values instruction i takes from the stack and leaves on it.
std::pair<int, int> stack_effect(const ExprInstr& i) {
  if (i.op <= ExprOp::VarPow4) return {0, 1};
  if (i.op <= ExprOp::Or || i.op == ExprOp::Atan2) return {2, 1};
  if (i.op == ExprOp::If) return {1, 0};
  if (i.op == ExprOp::Else || i.op == ExprOp::EndIf) return {0, 0};
  if (is_variadic(i.op)) return {i.n, 1};
  return {1, 1};
}

// Checks what the interpreter relies on (every operation finds its operands,
// each if/else jumps to its own else/endif, one value is left) and returns
// the deepest stack.
int checked_depth(const std::vector<ExprInstr>& code, const std::string& text) {
  int d = 0, most = 0;
  struct Branch {
    std::size_t if_at, else_at;
    int depth, then_depth;
  };
  std::stack<Branch> open;
  for (std::size_t k = 0; k < code.size(); ++k) {
    const ExprInstr& i = code[k];
    const auto [in, out] = stack_effect(i);
    if (in > d || (is_variadic(i.op) && i.n < 1)) unknown_token(text, k, "stack underflow");
    d += out - in;
    most = std::max(most, d);
    if (i.op == ExprOp::If) {
      open.push(Branch{k, 0, d, 0});
    } else if (i.op == ExprOp::Else) {
      if (open.empty() || open.top().else_at || open.top().if_at + std::size_t(code[open.top().if_at].n) != k)
        unknown_token(text, k, "an else without its if");
      open.top().else_at = k;
      open.top().then_depth = d;
      d = open.top().depth;
    } else if (i.op == ExprOp::EndIf) {
      if (open.empty() || !open.top().else_at ||
          open.top().else_at + std::size_t(code[open.top().else_at].n) != k ||
          d != open.top().then_depth)
        unknown_token(text, k, "an endif without its else");
      open.pop();
    }
  }
  if (!open.empty() || d != 1) unknown_token(text, code.size(), "not one value at the end");
  return most;
}

}  // namespace

// muparser's program (ParserByteCode, reverse Polish, after its optimiser)
// one instruction for each of its tokens, so that the jumps of if/else keep
// their offsets. Variables are x, y, z by address; functions by the address
// muparser calls (its callback), named through GetFunDef.
ExprCode Expression::code() const {
  const mu::Parser& p = impl_->parser;
  const std::string& text = p.GetExpr();
  std::map<void*, ExprOp> fun;
  for (const auto& [name, cb] : p.GetFunDef())
    for (const auto& [known, op] : kFunctions)
      if (name == known) fun[cb.GetAddr()] = op;
  const mu::ParserByteCode& rpn = p.GetByteCode();
  const mu::SToken* tok = rpn.GetBase();
  const auto var = [&](std::size_t k, const double* ptr) {
    if (ptr == &impl_->x) return 0;
    if (ptr == &impl_->y) return 1;
    if (ptr == &impl_->z) return 2;
    for (std::size_t e = 0; e < impl_->extra.size(); ++e)
      if (ptr == &impl_->extra[e]) return int(3 + e);
    unknown_token(text, k, "a variable other than x, y, z and the extra ones");
  };
  ExprCode out;
  for (std::size_t k = 0; k < rpn.GetSize() && tok[k].Cmd != mu::cmEND; ++k) {
    const mu::SToken& t = tok[k];
    ExprInstr i;
    switch (t.Cmd) {
      case mu::cmVAL: i = {ExprOp::Const, 0, t.Val.data2, 0}; break;
      case mu::cmVAR: i = {ExprOp::Var, var(k, t.Val.ptr), 0, 0}; break;
      case mu::cmVARMUL: i = {ExprOp::VarMul, var(k, t.Val.ptr), t.Val.data, t.Val.data2}; break;
      case mu::cmVARPOW2: i = {ExprOp::VarPow2, var(k, t.Val.ptr), 0, 0}; break;
      case mu::cmVARPOW3: i = {ExprOp::VarPow3, var(k, t.Val.ptr), 0, 0}; break;
      case mu::cmVARPOW4: i = {ExprOp::VarPow4, var(k, t.Val.ptr), 0, 0}; break;
      case mu::cmLE: i.op = ExprOp::Le; break;
      case mu::cmGE: i.op = ExprOp::Ge; break;
      case mu::cmNEQ: i.op = ExprOp::Ne; break;
      case mu::cmEQ: i.op = ExprOp::Eq; break;
      case mu::cmLT: i.op = ExprOp::Lt; break;
      case mu::cmGT: i.op = ExprOp::Gt; break;
      case mu::cmADD: i.op = ExprOp::Add; break;
      case mu::cmSUB: i.op = ExprOp::Sub; break;
      case mu::cmMUL: i.op = ExprOp::Mul; break;
      case mu::cmDIV: i.op = ExprOp::Div; break;
      case mu::cmPOW: i.op = ExprOp::Pow; break;
      case mu::cmLAND: i.op = ExprOp::And; break;
      case mu::cmLOR: i.op = ExprOp::Or; break;
      case mu::cmIF: i = {ExprOp::If, t.Oprt.offset, 0, 0}; break;
      case mu::cmELSE: i = {ExprOp::Else, t.Oprt.offset, 0, 0}; break;
      case mu::cmENDIF: i.op = ExprOp::EndIf; break;
      case mu::cmFUNC: {
        void* addr = reinterpret_cast<void*>(t.Fun.cb._pRawFun);
        if (t.Fun.cb._pUserData) unknown_token(text, k, "a function with user data");
        if (addr == reinterpret_cast<void*>(&unary_minus)) {
          i.op = ExprOp::Neg;
        } else if (addr == reinterpret_cast<void*>(&unary_plus)) {
          i.op = ExprOp::Plus;
        } else if (const auto f = fun.find(addr); f != fun.end()) {
          i.op = f->second;
        } else {
          unknown_token(text, k, "a function outside muparser's defaults");
        }
        const int argc = t.Fun.argc;
        const bool ok = is_variadic(i.op) ? argc < 0 : i.op == ExprOp::Atan2 ? argc == 2 : argc == 1;
        if (!ok) unknown_token(text, k, fmt::format("{} arguments", argc));
        if (is_variadic(i.op)) i.n = -argc;
        break;
      }
      default: unknown_token(text, k, fmt::format("command {}", int(t.Cmd)));
    }
    out.code.push_back(i);
  }
  out.stack = checked_depth(out.code, text);
  return out;
}

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
