#include "app/validate_images.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <iostream>
#include <vector>

#include "app/common.hpp"
#include "io/image.hpp"
#include "solvers/frame_plot.hpp"
#include "solvers/raymarch.hpp"

namespace gf::app {

namespace {

nlohmann::json row_of(const char* field, std::int64_t step, const io::ImageDiff& d) {
  return {{"field", field},
          {"step", step},
          {"psnr_db", std::isinf(d.psnr_db) ? nlohmann::json(nullptr) : nlohmann::json(d.psnr_db)},
          {"identical", d.mse == 0},
          {"off_fraction", d.off_fraction},
          {"max_abs", d.max_abs},
          {"pass", d.pass}};
}

}  // namespace

void print_frame_rows(const nlohmann::json& rows) {
  table_out() << fmt::format("{:<6} {:>8} {:>10} {:>12} {:>10}  {}\n", "image", "step", "psnr_dB",
                           "off>2/255", "max_abs", "result");
  for (const auto& r : rows)
    table_out() << fmt::format("{:<6} {:>8} {:>10} {:>12.3e} {:>10.4f}  {}\n",
                             r["field"].get<std::string>(), r["step"].get<std::int64_t>(),
                             r["psnr_db"].is_null()
                                 ? std::string("inf")
                                 : fmt::format("{:.2f}", r["psnr_db"].get<double>()),
                             r["off_fraction"].get<double>(), r["max_abs"].get<double>(),
                             r["pass"].get<bool>() ? "pass" : "FAIL");
}

template <class T>
nlohmann::json validate_raymarch(const Case& c, Backend<T>& cpu, Backend<T>& gpu) {
  const RaySpec& s = c.raymarch;
  const bool sdf = s.volume.kind == RayVolumeSpec::Kind::Sdf;
  // Each backend makes its own volume (an expression is evaluated on each);
  // both images take the CPU volume's range.
  Field<T> vc = cpu.make_field(c.grid, "the volume"), vg = gpu.make_field(c.grid, "the volume");
  set_raymarch_volume(c, cpu, vc);
  set_raymarch_volume(c, gpu, vg);
  const FieldStats range = cpu.vec().stats(vc);
  const double vmin = range.min, vmax = range.max;
  FrameRenderer<T> rc(s, c.grid, cpu, sdf), rg(s, c.grid, gpu, sdf);
  spdlog::info(
      "validate {}: {}×{} {} of {} {}, cpu vs {}; pass when PSNR >= {:g} dB and at most "
      "{:g} % of the pixels are off by more than 2/255",
      c.name, s.width, s.height, s.mode, c.grid.shape_str(), to_string(c.precision), gpu.name(),
      io::kMinPsnrDb, 100 * io::kMaxOffFraction);
  const io::Image& ic = rc.render(vc, vmin, vmax);
  const io::Image& ig = rg.render(vg, vmin, vmax);
  const io::ImageDiff d = io::compare_images(ig, ic);
  const nlohmann::json rows = nlohmann::json::array({row_of("image", 0, d)});
  print_frame_rows(rows);
  return {{"case", c.name},
          {"precision", to_string(c.precision)},
          {"cpu", cpu.name()},
          {"gpu", gpu.name()},
          {"min_psnr_db", io::kMinPsnrDb},
          {"max_off_fraction", io::kMaxOffFraction},
          {"pass", d.pass},
          {"rows", rows}};
}

template <class T>
nlohmann::json validate_frame(const Case& c, std::int64_t step, Backend<T>& cpu,
                              const Field<T>& cpu_field, Backend<T>& gpu,
                              const Field<T>& gpu_field) {
  if (c.render.ndim < 3) {  // drawn on the host from each field's values
    std::vector<T> hc(cpu_field.points()), hg(gpu_field.points());
    cpu.download(cpu_field, hc.data());
    gpu.download(gpu_field, hg.data());
    const auto [lo, hi] = frame_range(c.render, hc.data(), std::int64_t(hc.size()));
    const io::Image ic = draw_frame(c.render, c.grid, hc.data(), lo, hi);
    const io::Image ig = draw_frame(c.render, c.grid, hg.data(), lo, hi);
    return row_of("frame", step, io::compare_images(ig, ic));
  }
  double lo = c.render.range_lo, hi = c.render.range_hi;
  if (c.render.range_auto) {
    const FieldStats st = cpu.vec().stats(cpu_field);
    lo = st.min;
    hi = st.max;
  }
  FrameRenderer<T> rc(c.render, c.grid, cpu, false), rg(c.render, c.grid, gpu, false);
  const io::Image& ic = rc.render(cpu_field, lo, hi);
  const io::Image& ig = rg.render(gpu_field, lo, hi);
  const io::ImageDiff d = io::compare_images(ig, ic);
  return row_of("frame", step, d);
}

template nlohmann::json validate_raymarch<float>(const Case&, Backend<float>&, Backend<float>&);
template nlohmann::json validate_raymarch<double>(const Case&, Backend<double>&, Backend<double>&);
template nlohmann::json validate_frame<float>(const Case&, std::int64_t, Backend<float>&,
                                              const Field<float>&, Backend<float>&,
                                              const Field<float>&);
template nlohmann::json validate_frame<double>(const Case&, std::int64_t, Backend<double>&,
                                               const Field<double>&, Backend<double>&,
                                               const Field<double>&);

}  // namespace gf::app
