// The VTK half of the field series (vtk/<name>_<step6>.vti or .pvti per step
// and <name>.pvd over them) and the text helpers both halves share. Internal
// to io/ (io/output.cpp's FieldSeriesWriter holds a VtkSeries).
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/output.hpp"

namespace gf::io::series {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- text bits

inline std::string step6(std::int64_t step) { return fmt::format("{:06d}", step); }

// %.17g: times, origins and spacings read back bit for bit.
inline std::string g17(double v) { return fmt::format("{:.17g}", v); }

inline std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

inline std::string xml_unescape(std::string_view s) {
  const std::pair<std::string_view, char> entities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&amp;", '&'}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool matched = false;
    for (const auto& [e, c] : entities)
      if (s.substr(i, e.size()) == e) {
        out += c;
        i += e.size();
        matched = true;
        break;
      }
    if (!matched) out += s[i++];
  }
  return out;
}

// Same naming as write_text_atomic: same folder (rename stays atomic),
// hidden (ParaView's file dialog and globbing skip it).
inline fs::path temp_sibling(const fs::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp", path.filename().string());
}

inline void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

// Moves a finished temporary into place; removes it when that fails.
inline void commit_temp(const fs::path& tmp, const fs::path& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    remove_quietly(tmp);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

// The .pvd's text over (time, file) pairs.
std::string pvd_text(const std::vector<std::pair<double, std::string>>& datasets);

// One <DataSet> of a .pvd gridforge wrote.
struct PvdEntry {
  double time = 0;
  std::string file;  // vtk/<name>_<step6>.vti, or .pvti with its pieces in vtk/<name>_<step6>/
  std::int64_t step = 0;
};

// The datasets of a .pvd (read back from the lines pvd_text writes); none
// when there is no file. Throws IoError saying what is wrong.
std::optional<std::vector<PvdEntry>> read_pvd(const fs::path& pvd);

// vtk/<name>_<step6>.vti per step + <name>.pvd listing them.
class VtkSeries {
 public:
  explicit VtkSeries(const SeriesSpec& spec);
  void write_step(std::int64_t step, double time, const std::vector<FieldView>& fields);
  const VtkWriteStats& stats() const { return stats_; }

 private:
  void write_pieces(std::int64_t step, double time, const std::vector<FieldView>& fields);
  void resume(std::int64_t before);

  const SeriesSpec& spec_;
  std::vector<std::pair<double, std::string>> datasets_;
  VtkWriteStats stats_;
};

}  // namespace gf::io::series
