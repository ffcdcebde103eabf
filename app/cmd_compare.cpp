// gridforge compare A B (SPEC §2): two runs' fields.h5 compared field by
// field at every step, as validate compares the CPU with the GPU: B is the
// reference of the relative L2 error. Exit 0 when every row passes, 4 when a
// row fails or the files do not hold the same grid, steps and fields.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <map>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "core/error.hpp"
#include "io/output.hpp"

namespace gf::app {

namespace fs = std::filesystem;

namespace {

// A run folder stands for its fields.h5.
std::string fields_file(const std::string& arg) {
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    const fs::path f = fs::path(arg) / "fields.h5";
    if (!fs::exists(f, ec))
      throw UsageError(fmt::format("compare: '{}' is a folder without a fields.h5 (a run with "
                                   "output.formats including hdf5 writes one)",
                                   arg));
    return f.string();
  }
  if (!fs::exists(arg, ec)) throw UsageError(fmt::format("compare: '{}': no such file", arg));
  return arg;
}

io::StepsListing listing(const std::string& path) {
  try {
    return io::h5_list_steps(path);
  } catch (const IoError& e) {
    throw UsageError(std::string("compare: ") + e.what());
  }
}

std::string dims_str(const std::vector<std::int64_t>& d) {
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

}  // namespace

int cmd_compare(const CompareArgs& a) {
  set_json_stdout(a.json);
  if (a.rtol && !(*a.rtol >= 0)) throw UsageError("--rtol: must be a number >= 0");
  if (a.atol && !(*a.atol >= 0)) throw UsageError("--atol: must be a number >= 0");
  const std::string fa = fields_file(a.a), fb = fields_file(a.b);
  const io::StepsListing la = listing(fa), lb = listing(fb);

  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> problems;  // what makes the files differ beyond the rows
  bool float32 = false;
  for (const auto* l : {&la, &lb})
    for (const auto& st : l->steps)
      for (const auto& f : st.fields) float32 = float32 || f.precision == Precision::Float32;
  // SPEC §2's defaults: float64 1e-9, float32 1e-4 (either file in float32).
  const double rtol = a.rtol.value_or(float32 ? 1e-4 : 1e-9), atol = a.atol.value_or(0.0);

  if (la.dims != lb.dims)
    problems.push_back(fmt::format("the grids differ: {} in '{}', {} in '{}'", dims_str(la.dims),
                                   fa, dims_str(lb.dims), fb));
  std::map<std::int64_t, const io::StepsListing::Step*> steps_b;
  for (const auto& st : lb.steps) steps_b[st.step] = &st;
  std::vector<std::int64_t> only_a, only_b;
  for (const auto& st : la.steps)
    if (!steps_b.count(st.step)) only_a.push_back(st.step);
  std::map<std::int64_t, const io::StepsListing::Step*> steps_a;
  for (const auto& st : la.steps) steps_a[st.step] = &st;
  for (const auto& st : lb.steps)
    if (!steps_a.count(st.step)) only_b.push_back(st.step);
  auto list = [](const std::vector<std::int64_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    if (v.size() > 8) s += fmt::format(" and {} more", v.size() - 8);
    return s;
  };
  if (!only_a.empty()) problems.push_back(fmt::format("steps only in '{}': {}", fa, list(only_a)));
  if (!only_b.empty()) problems.push_back(fmt::format("steps only in '{}': {}", fb, list(only_b)));

  const bool table = !a.quiet || a.json;
  if (table)
    table_out() << fmt::format("{:<6} {:>8} {:>12} {:>12} {:>12}  {}\n", "field", "step", "time",
                               "max_abs", "rel_l2", "result");
  auto has = [](const io::StepsListing::Step& st, const std::string& name) {
    return std::any_of(st.fields.begin(), st.fields.end(),
                       [&](const auto& f) { return f.name == name; });
  };
  const double floor =
      float32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  bool rows_pass = true;
  if (la.dims == lb.dims) {
    for (const auto& st : la.steps) {
      const auto it = steps_b.find(st.step);
      if (it == steps_b.end()) continue;
      const io::StepsListing::Step& sb = *it->second;
      for (const auto& [one, other, file] : {std::tuple{&st, &sb, fa}, std::tuple{&sb, &st, fb}})
        for (const auto& f : one->fields)
          if (!has(*other, f.name))
            problems.push_back(fmt::format("step {}: field '{}' only in '{}'", st.step, f.name, file));
      for (const auto& f : st.fields) {
        if (!has(sb, f.name)) continue;
        const std::vector<double> va = io::h5_read_dataset(fa, st.group + "/" + f.name);
        const std::vector<double> vb = io::h5_read_dataset(fb, sb.group + "/" + f.name);
        if (va.size() != vb.size()) {
          problems.push_back(fmt::format("step {}: field '{}' has {} values in '{}', {} in '{}'",
                                         st.step, f.name, va.size(), fa, vb.size(), fb));
          continue;
        }
        const FieldDiff df = field_diff(va, vb, floor);
        const bool pass = df.rel_l2 <= rtol || df.max_abs <= atol;
        rows_pass = rows_pass && pass;
        if (table)
          table_out() << fmt::format("{:<6} {:>8} {:>12.6g} {:>12.3e} {:>12.3e}  {}\n", f.name,
                                     st.step, st.time, df.max_abs, df.rel_l2,
                                     pass ? "pass" : "FAIL");
        rows.push_back({{"field", f.name}, {"step", st.step}, {"time", st.time},
                        {"max_abs", df.max_abs}, {"rel_l2", df.rel_l2}, {"pass", pass}});
      }
    }
  }
  const bool all_pass = rows_pass && problems.empty();
  for (const std::string& p : problems) spdlog::error("compare: {}", p);
  const int code = all_pass ? kExitOk : kExitMismatch;
  if (a.json)
    print_json_summary({{"a", fa}, {"b", fb}, {"rtol", rtol}, {"atol", atol},
                        {"pass", all_pass}, {"rows", rows}, {"problems", problems},
                        {"status", all_pass ? "pass" : "mismatch"}, {"exit_code", code}});
  if (!a.quiet)
    spdlog::info("compare: {} ({} rows; pass when rel-L2 <= {:g} or max-abs <= {:g}, '{}' the "
                 "reference)",
                 all_pass ? "the same within tolerance" : "MISMATCH", rows.size(), rtol, atol, fb);
  return code;
}

}  // namespace gf::app
