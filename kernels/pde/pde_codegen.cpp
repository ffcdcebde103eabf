#include "kernels/pde/pde_codegen.hpp"

#include "kernels/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace gf {
namespace {

const char* op_name(ExprOp op) {
  switch (op) {
    case ExprOp::Const: return "Const";
    case ExprOp::Var: return "Var";
    case ExprOp::VarMul: return "VarMul";
    case ExprOp::VarScale: return "VarScale";
    case ExprOp::VarPow2: return "VarPow2";
    case ExprOp::VarPow3: return "VarPow3";
    case ExprOp::VarPow4: return "VarPow4";
    case ExprOp::Add: return "Add";
    case ExprOp::Sub: return "Sub";
    case ExprOp::Mul: return "Mul";
    case ExprOp::Div: return "Div";
    case ExprOp::Pow: return "Pow";
    case ExprOp::Lt: return "Lt";
    case ExprOp::Gt: return "Gt";
    case ExprOp::Le: return "Le";
    case ExprOp::Ge: return "Ge";
    case ExprOp::Eq: return "Eq";
    case ExprOp::Ne: return "Ne";
    case ExprOp::And: return "And";
    case ExprOp::Or: return "Or";
    case ExprOp::If: return "If";
    case ExprOp::Else: return "Else";
    case ExprOp::EndIf: return "EndIf";
    case ExprOp::Neg: return "Neg";
    case ExprOp::Plus: return "Plus";
    case ExprOp::Sin: return "Sin";
    case ExprOp::Cos: return "Cos";
    case ExprOp::Tan: return "Tan";
    case ExprOp::Asin: return "Asin";
    case ExprOp::Acos: return "Acos";
    case ExprOp::Atan: return "Atan";
    case ExprOp::Sinh: return "Sinh";
    case ExprOp::Cosh: return "Cosh";
    case ExprOp::Tanh: return "Tanh";
    case ExprOp::Asinh: return "Asinh";
    case ExprOp::Acosh: return "Acosh";
    case ExprOp::Atanh: return "Atanh";
    case ExprOp::Ln: return "Ln";
    case ExprOp::Log2: return "Log2";
    case ExprOp::Log10: return "Log10";
    case ExprOp::Exp: return "Exp";
    case ExprOp::Sqrt: return "Sqrt";
    case ExprOp::Abs: return "Abs";
    case ExprOp::Sign: return "Sign";
    case ExprOp::Rint: return "Rint";
    case ExprOp::Atan2: return "Atan2";
    case ExprOp::Sum: return "Sum";
    case ExprOp::Avg: return "Avg";
    case ExprOp::Min: return "Min";
    case ExprOp::Max: return "Max";
  }
  throw std::logic_error("pde codegen: an ExprOp without a name");
}

// A double as a literal that reads back as the same bits.
std::string literal(double v) {
  if (std::isfinite(v)) {
    std::string s = fmt::format("{:.17g}", v);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return "(" + s + ")";
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("(__longlong_as_double(0x{:016x}LL))", bits);
}

std::string op(ExprOp o) { return std::string("gf::ExprOp::") + op_name(o); }

}  // namespace

std::string pde_expr_code(const ExprCode& code, const std::string& result, const std::string& real) {
  std::string s = "{\n";
  const int depth = std::max(code.stack, 1);
  s += "  " + real;
  for (int k = 0; k < depth; ++k) s += fmt::format("{} s{}", k ? "," : "", k);
  s += ";\n";
  int d = 0;
  std::vector<int> at_if;  // the depth after each open if's pop
  std::string indent = "  ";
  for (const ExprInstr& in : code.code) {
    const std::string top = fmt::format("s{}", d - 1), next = fmt::format("s{}", d);
    switch (in.op) {
      case ExprOp::Const: s += indent + next + " = " + real + literal(in.a) + ";\n"; ++d; break;
      case ExprOp::Var: s += indent + fmt::format("{} = v[{}];\n", next, in.n); ++d; break;
      case ExprOp::VarMul:
        s += indent + fmt::format("{} = gf::expr_var_mul(v[{}], {}{}, {}{});\n", next, in.n,
                                  real, literal(in.a), real, literal(in.b));
        ++d;
        break;
      case ExprOp::VarScale:
        s += indent + fmt::format("{} = gf::expr_var_scale(v[{}], {}{});\n", next, in.n, real, literal(in.a));
        ++d;
        break;
      case ExprOp::VarPow2:
      case ExprOp::VarPow3:
      case ExprOp::VarPow4:
        s += indent + fmt::format("{} = gf::expr_var_pow({}, v[{}]);\n", next, op(in.op), in.n);
        ++d;
        break;
      case ExprOp::If:
        --d;
        s += indent + fmt::format("if (s{} != 0) {{\n", d);
        at_if.push_back(d);
        indent += "  ";
        break;
      case ExprOp::Else:
        indent.resize(indent.size() - 2);
        s += indent + "} else {\n";
        indent += "  ";
        d = at_if.back();
        break;
      case ExprOp::EndIf:
        indent.resize(indent.size() - 2);
        s += indent + "}\n";
        at_if.pop_back();
        break;
      case ExprOp::Sum:
      case ExprOp::Avg:
      case ExprOp::Min:
      case ExprOp::Max: {
        const int first = d - in.n;
        std::string list;
        for (int k = first; k < d; ++k) list += fmt::format("{}s{}", k > first ? ", " : "", k);
        s += indent + fmt::format("{{ const {} a[{}] = {{{}}}; s{} = gf::expr_variadic({}, a, {}); }}\n",
                                  real, in.n, list, first, op(in.op), in.n);
        d = first + 1;
        break;
      }
      default:
        if (in.op <= ExprOp::Or || in.op == ExprOp::Atan2) {
          s += indent + fmt::format("s{0} = gf::expr_binary({1}, s{0}, s{2});\n", d - 2, op(in.op), d - 1);
          --d;
        } else {
          s += indent + fmt::format("{0} = gf::expr_unary({1}, {0});\n", top, op(in.op));
        }
        break;
    }
  }
  s += fmt::format("  {} = s0;\n}}\n", result);
  return s;
}

std::string pde_kernel_source(const PdeProgram& prog, const std::string& real, int ndim,
                              PdeTerms terms, bool equal_h, bool prefetch) {
  const int nf = int(prog.fields.size()), ni = int(prog.inputs.size());
  // dependent launches (kernels/cuda/pdl.cuh) on or off: the march waits
  // for the stage before it only when launched so (pde_march.hpp)
  std::string s = fmt::format("#define GF_PDE_PDL {}\n",
                              gpu_dependent_launch() == PdlPolicy::Off ? 0 : 1);
  // 2D: the march loads the row after the next an iteration early
  // (pde_march.hpp's GF_PDE_AHEAD)
  s += fmt::format("#define GF_PDE_AHEAD {}\n", ndim == 2 ? 1 : 0);
  s += pde_rtc_prelude();
  s += "\n// ---- the equations of this case ----\nnamespace {\nstruct Eq {\n";
  // Which arrays (state fields, then coefficients) an input reads the
  // neighbours of (its field; DivK's k too), and which it reads the value of
  // (every state field: the stage combines it).
  const int na = nf + int(prog.coefficients.size());
  unsigned nb = 0, val = (1u << nf) - 1;
  for (const PdeInput& in : prog.inputs) {
    if (in.kind == PdeInputKind::Value) {
      val |= 1u << in.field;
    } else {
      nb |= 1u << in.field;
      if (in.kind == PdeInputKind::DivK) nb |= 1u << in.k;
    }
  }
  s += fmt::format("  static constexpr int kFields = {}, kArrays = {}, kInputs = {};\n", nf, na, ni);
  // the terms of the run's stages (pde_combine_terms)
  s += fmt::format("  static constexpr gf::PdeTerms kTerms{{0x{:x}u, 0x{:x}u, 0x{:x}u}};\n", terms.may,
                   terms.always & terms.may, terms.one & terms.always & terms.may);
  // the axes' spacings equal (PdeArgs::equal_h: lap's factored form in the march)
  s += fmt::format("  static constexpr int kEqualH = {};\n", equal_h ? 1 : 0);
  s += fmt::format("  __device__ __forceinline__ constexpr bool nb(int a) const {{ return (0x{:x}u >> a) & 1u; }}\n", nb);
  s += fmt::format("  __device__ __forceinline__ constexpr bool val(int a) const {{ return (0x{:x}u >> a) & 1u; }}\n", val);
  s += fmt::format("  __device__ __forceinline__ constexpr int nfields() const {{ return {}; }}\n", nf);
  s += fmt::format("  __device__ __forceinline__ constexpr int ninputs() const {{ return {}; }}\n", ni);
  s += "  __device__ __forceinline__ gf::PdeInput input(int q) const {\n    switch (q) {\n";
  static const char* kinds[] = {"Value", "Lap", "D1", "Dm", "Dp", "DivK"};
  for (int q = 0; q < ni; ++q) {
    const PdeInput& in = prog.inputs[std::size_t(q)];
    s += fmt::format("      case {}: return gf::PdeInput{{gf::PdeInputKind::{}, {}, {}, {}}};  // {}\n", q,
                     kinds[int(in.kind)], in.field, in.axis, in.k, prog.input_names[std::size_t(q)]);
  }
  s += "    }\n    return gf::PdeInput{};\n  }\n";
  s += fmt::format("  __device__ __forceinline__ {0} rhs(int f, const {0}* v) const {{\n    {0} r = 0;\n    switch (f) {{\n", real);
  for (int f = 0; f < nf; ++f) {
    s += fmt::format("      case {}: {{  // d{}/dt\n", f, prog.fields[std::size_t(f)]);
    s += pde_expr_code(prog.rhs[std::size_t(f)], "r", real);
    s += "      } break;\n";
  }
  s += "    }\n    return r;\n  }\n";
  s += fmt::format("  __device__ __forceinline__ {0} dirichlet(int f, int face, const {0}* v) const {{\n"
                   "    {0} r = 0;\n    switch (f * 6 + face) {{\n", real);
  for (int f = 0; f < nf; ++f)
    for (int face = 0; face < 6; ++face) {
      const ExprCode& c = prog.dirichlet[std::size_t(f)][std::size_t(face)];
      if (c.code.empty()) continue;
      s += fmt::format("      case {}: {{\n", f * 6 + face);
      s += pde_expr_code(c, "r", real);
      s += "      } break;\n";
    }
  s += "    }\n    return r;\n  }\n};\n}  // namespace\n\n";
  s += kPdePointPart;
  // One thread a point of a row of x (blockDim.x) and y (blockDim.y); each
  // marches over its slab of z (gridDim.z slabs), so the planes it reads
  // again are in L1 and L2. Two kernels: 32-bit indices (fields of fewer
  // than 2³¹ values, fewer instructions a point) and 64-bit.
  for (const char* ix : {"int", "long"})
    s += fmt::format(
        "extern \"C\" __global__ void __launch_bounds__(256) {}_{}(const gf::PdeArgs<{}> A, int slab) {{\n"
        "  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;\n"
        "  const long j = long(blockIdx.y) * blockDim.y + threadIdx.y;\n"
        "  if (i >= A.l.n[0] || j >= A.l.n[1]) return;\n"
        "  const long k0 = long(blockIdx.z) * slab;\n"
        "  const long k1 = k0 + slab < A.l.n[2] ? k0 + slab : A.l.n[2];\n"
        "  {} v[gf::kPdeFirstInput + {}];\n"
        "  const Eq eq;\n"
        "  for (long k = k0; k < k1; ++k) gf::pde_point<{}, {}>(A, eq, i, j, k, v);\n"
        "}}\n",
        kPdeKernelName, std::string(ix) == "int" ? "i32" : "i64", real, real, std::max(ni, 1), ndim, ix);
  // The march (2D and 3D; pde_march.hpp) and the faces it leaves out, in one
  // launch, for
  // fields of fewer than 2³¹ values whose rows start on 16-byte vectors.
  // Blocks of 256 an SM holds: 3 leaves 80 registers a thread, which a
  // Gray–Scott march fits without spills in float32 and float64 (0.83 of
  // copy bandwidth at 512³ on an H100, against 0.70 with 95 registers at 2
  // blocks); pde_cuda.cu compiles again with 1 where the march would spill.
  // With `prefetch`, each thread asks L2 for the plane after the next one
  // (H100: 0.91 against 0.84 at 512³ float32, 0.82 against 0.76 at 513³;
  // two planes ahead 0.88); in 2D, which loads that row an iteration early
  // (GF_PDE_AHEAD), for the row after it. pde_march_prefetch says where.
  const int minb = gpu_pde_blocks() > 0 ? gpu_pde_blocks() : 3, pfd = prefetch ? 1 : 0;
  if (ndim >= 2)
    s += kPdeMarchPart + fmt::format(
        "{5} {3}\n"
        "extern \"C\" __global__ void __launch_bounds__(256, GF_PDE_MARCH_MINB) {0}_march(const gf::PdeArgs<{1}> A, int chunk, long nfaces, int mb, int down) {{\n"
        "  gf::pde_march_and_faces<{2}, {4}>(A, Eq{{}}, chunk, nfaces, mb, down);\n"
        "}}\n",
        kPdeKernelName, real, ndim, minb, pfd, kPdeMarchMinb);
  return s;
}

PdeSourceParts pde_source_parts(const std::string& src) {
  PdeSourceParts p;
  const std::size_t pt = src.find(kPdePointPart), mt = src.find(kPdeMarchPart);
  if (pt == std::string::npos) throw std::logic_error("pde: a kernel source without its parts");
  const std::string common = src.substr(0, pt);
  p.point = common + src.substr(pt, mt == std::string::npos ? std::string::npos : mt - pt);
  if (mt != std::string::npos) p.march = common + src.substr(mt);
  return p;
}

}  // namespace gf
