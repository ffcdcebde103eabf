// The CPU reference executor of the wave step: wave_point in plain loops
// (kernels/cpu/loops.hpp), row by row, the points off every face in a loop
// the compiler vectorises.
#include "kernels/cpu/loops.hpp"
#include "kernels/wave/wave_exec.hpp"

namespace gf {
namespace {

using namespace cpu;

// The step at points first..last − 1, all off every face; f(idx) the source.
template <int D, bool SRC, class T, class Source>
GF_ROW_LOOP_CLONES void wave_inner(const WaveArgs<T> a, const T* __restrict in,
                                   const T* __restrict w, T* __restrict out, std::int64_t first,
                                   std::int64_t last, std::int64_t sy, std::int64_t sz, Source f) {
  for (std::int64_t idx = first; idx < last; ++idx) {
    T m[3], p[3];
    direct_neighbours<D>(in, idx, sy, sz, m, p);
    out[idx] = wave_point_as<D, SRC>(a, in[idx], w[idx], m, p, f(idx));
  }
}

template <int D, class T>
void wave_box(const WaveArgs<T>& a, const Box& box, const FieldView<const T>& in,
              const FieldView<T>& out) {
  for_rows<D>(
      in, box, a.bc, in.p, out.p,
      [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t idx) {
        out[idx] = wave_point_bc<D>(a, in, i, j, k);
      },
      [&](std::int64_t first, std::int64_t last) {
        const auto run = [&](auto src, auto f) {
          wave_inner<D, decltype(src)::value>(a, in.p, a.w, out.p, first, last, in.sy, in.sz, f);
        };
        if (a.source) {
          run(std::true_type{}, [&](std::int64_t idx) { return a.source[idx]; });
        } else {
          const T c = a.source_const;
          if (c != T(0)) run(std::true_type{}, [c](std::int64_t) { return c; });
          else run(std::false_type{}, [](std::int64_t) { return T(0); });
        }
      });
}

template <class T>
class WaveCpu final : public WaveExec<T> {
 public:
  void step(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out) override {
    box(a, Box::whole(u.layout().n), u, out);
  }
  bool step_part(const WaveArgs<T>& a, const Field<T>& u, Field<T>& out, const Box& core,
                 StepPart part) override {
    for (const Box& b : part_boxes(u.layout().n, core, part)) box(a, b, u, out);
    return true;
  }

 private:
  static void box(const WaveArgs<T>& a, const Box& b, const Field<T>& u, Field<T>& out) {
    by_dim(a.ndim, [&](auto d) { wave_box<decltype(d)::value>(a, b, u.view(), out.view()); });
  }
};

}  // namespace

template <class T>
std::unique_ptr<WaveExec<T>> make_wave_cpu(Backend<T>&) {
  return std::make_unique<WaveCpu<T>>();
}
template std::unique_ptr<WaveExec<float>> make_wave_cpu<float>(Backend<float>&);
template std::unique_ptr<WaveExec<double>> make_wave_cpu<double>(Backend<double>&);

}  // namespace gf
