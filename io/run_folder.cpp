#include "io/run_folder.hpp"

#include <algorithm>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "io/folder_lock.hpp"

namespace gf::io {

namespace fs = std::filesystem;

namespace {

bool is_output(const fs::directory_entry& e) {
  const std::string n = e.path().filename().string();
  static const char* const files[] = {"run.json",           "timing.json",
                                      "log.csv",            "fields.h5",
                                      "fields.xdmf",        "checkpoint.h5",
                                      "image.h5",           ".fields.h5.partial",
                                      ".fields.xdmf.partial", kReplacedDir};
  for (const char* f : files)
    if (n == f) return true;
  std::error_code ec;
  if (n == "vtk" || n == "frames") return e.is_directory(ec);
  if (n == kLockFile || n == ".validation.json.tmp") return false;
  const auto ends = [&](const char* s) { return n.ends_with(s); };
  // A file being written: ".<file>.tmp" (io/atomic.cpp).
  if (n.starts_with('.') && ends(".tmp")) return true;
  return ends(".pvd") || ends(".png");
}

}  // namespace

std::vector<std::string> run_outputs(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_output(e))
      names.push_back(e.path().filename().string() + (e.is_directory(ec) ? "/" : ""));
  std::sort(names.begin(), names.end());
  // run.json first: it says which run the files are of.
  std::stable_partition(names.begin(), names.end(), [](const auto& n) { return n == "run.json"; });
  return names;
}

std::vector<std::string> run_evidence(const fs::path& dir, const std::vector<std::string>& outputs) {
  std::vector<std::string> seen;
  std::error_code ec;
  for (const std::string& n : outputs) {
    if (n.starts_with('.') && n != ".fields.h5.partial") continue;
    if (n.ends_with('/')) {
      bool visible = false;
      for (const auto& e : fs::directory_iterator(dir / n, ec))
        visible = visible || !e.path().filename().string().starts_with('.');
      if (!visible) continue;
    }
    seen.push_back(n);
  }
  return seen;
}

std::string list_outputs(const std::vector<std::string>& names, std::size_t most) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > most) s += ", and " + std::to_string(names.size() - most) + " more";
  return s;
}

std::optional<std::string> recorded_case(const fs::path& dir) {
  std::ifstream in(dir / "run.json", std::ios::binary);
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("case") || !j["case"].is_string())
    return std::nullopt;
  return j["case"].get<std::string>();
}

}  // namespace gf::io
