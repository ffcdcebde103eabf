// The CUDA executor of the expressions: one thread a point of a part's box
// (a grid-stride loop), expr_value (expr_ops.hpp) with its stack in the
// thread's local memory, the value stored as T through the field's view, and
// the lowest point whose value is not finite kept by an atomicMin per part.
// The programs and the flags go up in one copy, the flags come back in one
// (which waits for the kernels): the only host synchronisation of a fill.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cuda/cuda_backend.cuh"
#include "kernels/expr/expr_exec.hpp"

namespace gf {
namespace {

constexpr int kExprThreads = 256;
constexpr int kShallow = 8;
constexpr unsigned long long kNoBadPoint = std::numeric_limits<unsigned long long>::max();

// A part's box as the kernel takes it: its first point and its extents.
struct ExprBox {
  std::int64_t lo[3], count[3];
};

// S: the stack's size, 8 (most expressions: a thread's local memory, which
// the driver reserves for every thread the GPU can hold, stays small) or
// kExprDeviceStack.
template <class T, int S>
__global__ void __launch_bounds__(kExprThreads)
    expr_fill_kernel(const ExprInstr* __restrict__ code, int n, ExprPoints at, FieldView<T> out,
                     ExprBox b, unsigned long long* __restrict__ bad) {
  const Layout box = Layout::dense(b.count);
  const Layout dense = Layout::dense(out.n);  // the points' x-fastest order
  const std::int64_t total = box.size();
  const std::int64_t stride = std::int64_t(gridDim.x) * kExprThreads;
  double s[S];
  for (std::int64_t q = blockIdx.x * std::int64_t(kExprThreads) + threadIdx.x; q < total;
       q += stride) {
    std::int64_t i, j, k;
    box.position(q, i, j, k);
    i += b.lo[0];
    j += b.lo[1];
    k += b.lo[2];
    const T v =
        static_cast<T>(
        expr_value(code, n, at.coord(0, i), at.coord(1, j), at.coord(2, k), at.t, s));
    out(i, j, k) = v;
    if (!isfinite(v)) atomicMin(bad, static_cast<unsigned long long>(dense.index(i, j, k)));
  }
}

template <class T>
class ExprCuda final : public ExprExec<T> {
 public:
  explicit ExprCuda(CudaBackend<T>& be) : be_(be) {}

  std::vector<std::int64_t> fill(const std::vector<ExprPart>& parts, const ExprPoints& at,
                                 Field<T>& out) override {
    const std::size_t np = parts.size();
    std::vector<std::int64_t> bad(np, -1);
    if (np == 0) return bad;
    const cudaStream_t s = be_.stream();
    // One buffer: the parts' flags, then their programs one after another.
    const std::size_t flags_bytes = (np * sizeof(unsigned long long) + 15) / 16 * 16;
    std::vector<std::size_t> start;
    std::size_t instrs = 0;
    for (const ExprPart& p : parts) {
      start.push_back(instrs);
      instrs += p.code->code.size();
    }
    std::vector<unsigned char> up(flags_bytes + instrs * sizeof(ExprInstr));
    std::vector<unsigned long long> flags(np, kNoBadPoint);
    std::memcpy(up.data(), flags.data(), np * sizeof(unsigned long long));
    for (std::size_t p = 0; p < np; ++p)
      if (!parts[p].code->code.empty())
        std::memcpy(up.data() + flags_bytes + start[p] * sizeof(ExprInstr),
                    parts[p].code->code.data(), parts[p].code->code.size() * sizeof(ExprInstr));
    DeviceBuffer buf;
    buf.reset(be_.memory(), up.size(), "the expressions' bytecode");
    GF_CUDA_CHECK(cudaMemcpyAsync(buf.get(), up.data(), up.size(), cudaMemcpyHostToDevice, s));
    auto* flags_dev = buf.as<unsigned long long>();
    const auto* code_dev = reinterpret_cast<const ExprInstr*>(buf.as<unsigned char>() + flags_bytes);

    std::vector<bool> on_host(np, false);
    for (std::size_t p = 0; p < np; ++p) {
      const ExprPart& part = parts[p];
      if (part.box.empty() || part.code->code.empty()) continue;
      if (part.code->stack > kExprDeviceStack) {  // too deep for the kernel's stack
        bad[p] = on_host_fill(part, at, out);
        on_host[p] = true;
        continue;
      }
      ExprBox b;
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = part.box.lo[a];
        b.count[a] = part.box.hi[a] - part.box.lo[a];
      }
      const unsigned blocks = flat_blocks(part.box.size());
      const ExprInstr* code = code_dev + start[p];
      const int n = int(part.code->code.size());
      if (part.code->stack <= kShallow)
        expr_fill_kernel<T, kShallow><<<blocks, kExprThreads, 0, s>>>(code, n, at, out.view(), b,
                                                                       flags_dev + p);
      else
        expr_fill_kernel<T, kExprDeviceStack><<<blocks, kExprThreads, 0, s>>>(
            code, n, at, out.view(), b, flags_dev + p);
      GF_CUDA_CHECK_LAUNCH();
    }
    GF_CUDA_CHECK(cudaMemcpyAsync(flags.data(), flags_dev, np * sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost, s));
    GF_CUDA_CHECK(cudaStreamSynchronize(s));  // the flags are in, so are the values
    for (std::size_t p = 0; p < np; ++p)
      if (!on_host[p] && flags[p] != kNoBadPoint) bad[p] = static_cast<std::int64_t>(flags[p]);
    return bad;
  }

 private:
  // A program deeper than kExprDeviceStack: the field through the host, in
  // its own layout, and expr_value at the part's points there, one thread
  // (rare: an expression nested some 30 levels deep).
  std::int64_t on_host_fill(const ExprPart& part, const ExprPoints& at, Field<T>& out) {
    const cudaStream_t s = be_.stream();
    std::vector<T> host(out.size());
    GF_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, s));
    GF_CUDA_CHECK(cudaStreamSynchronize(s));
    const FieldView<T> v(host.data(), out.layout());
    const Layout dense = Layout::dense(out.layout().n);
    const ExprCode& c = *part.code;
    std::vector<double> stack(std::size_t(c.stack) + 1);
    std::int64_t bad = -1;
    const Box& b = part.box;
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
          const T x = static_cast<T>(expr_value(c.code.data(), int(c.code.size()), at.coord(0, i),
                                                at.coord(1, j), at.coord(2, k), at.t, stack.data()));
          v(i, j, k) = x;
          if (!std::isfinite(x) && bad < 0) bad = dense.index(i, j, k);
        }
    GF_CUDA_CHECK(cudaMemcpyAsync(out.data(), host.data(), out.bytes(), cudaMemcpyHostToDevice, s));
    GF_CUDA_CHECK(cudaStreamSynchronize(s));
    return bad;
  }

  CudaBackend<T>& be_;
};

}  // namespace

template <class T>
std::unique_ptr<ExprExec<T>> make_expr_cuda(Backend<T>& be) {
  return std::make_unique<ExprCuda<T>>(cuda_core(be));
}
template std::unique_ptr<ExprExec<float>> make_expr_cuda<float>(Backend<float>&);
template std::unique_ptr<ExprExec<double>> make_expr_cuda<double>(Backend<double>&);

}  // namespace gf
