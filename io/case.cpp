// Case loading (SPEC §3): parse the YAML, apply KEY=VALUE overrides to the
// tree, then read the top-level keys and every section through the checked
// readers of case_schema, resolving defaults, the grid spacing, the boundary
// per face and the step. Each section has a file of its own
// (io/case_sections.hpp, io/case_raymarch.hpp); this one calls them in order
// and writes the resolved case.
#include "io/case.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>

#include "io/case_raymarch.hpp"
#include "io/case_schema.hpp"
#include "io/case_sections.hpp"
#include "io/case_text.hpp"
#include "io/input_file.hpp"
#include "io/output.hpp"
#include "io/workload.hpp"

namespace gf {

const char* to_string(Workload w) { return workload_info(w).name.data(); }

const char* to_string(PdeIntegrator i) {
  switch (i) {
    case PdeIntegrator::Euler: return "euler";
    case PdeIntegrator::SspRk2: return "ssprk2";
    case PdeIntegrator::SspRk3: return "ssprk3";
    case PdeIntegrator::Rk4: return "rk4";
  }
  return "?";
}

namespace {

namespace fs = std::filesystem;
using schema::Map;
using schema::Sources;
using schema::Value;
using case_text::parse_document;

// ---- YAML text and overrides ------------------------------------------------

struct Override {
  std::string dotted;             // "boundary.x-"
  std::vector<std::string> path;  // {"boundary", "x-"}: split on '.' only
  YAML::Node value;
};

// "a..b" gives an empty part, which parse_override refuses.
std::vector<std::string> split_dots(std::string_view s) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = s.find('.', start);
    parts.emplace_back(s.substr(start, dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

Override parse_override(const std::string& arg) {
  const auto eq = arg.find('=');
  Override ov;
  ov.dotted = arg.substr(0, eq);
  ov.path = split_dots(ov.dotted);
  const bool bad_path =
      std::any_of(ov.path.begin(), ov.path.end(), [](const auto& s) { return s.empty(); });
  if (eq == std::string::npos || bad_path)
    throw CaseError(
        schema::command_line_loc(), "",
        fmt::format("malformed override '{}': expected KEY=VALUE, e.g. heat.steps=10",
                    shown(arg)));
  ov.value = case_text::parse_value(arg.substr(eq + 1), ov.dotted);
  return ov;
}

// Sets root[path...] = value, creating the maps on the way, as ParmParse does.
// Whether the key exists is checked later, by the same code as for the file.
void set_path(YAML::Node root, const Override& ov) {
  YAML::Node cur = root;
  std::string prefix;
  for (std::size_t i = 0; i + 1 < ov.path.size(); ++i) {
    const std::string& seg = ov.path[i];
    prefix += (i ? "." : "") + seg;
    if (!cur[seg] || cur[seg].IsNull()) cur[seg] = YAML::Node(YAML::NodeType::Map);
    const YAML::Node next = cur[seg];
    if (!next.IsMap())
      throw CaseError(schema::command_line_loc(), prefix,
                      fmt::format("cannot set '{}': expected a map, got {}", ov.dotted,
                                  next.IsSequence() ? "a list" : "'" + shown(next.Scalar()) + "'"));
    cur.reset(next);
  }
  cur.remove(ov.path.back());  // re-insert, so a file node never aliases the new value
  cur[ov.path.back()] = ov.value;
}

std::string joined(const std::vector<std::string>& path, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += (i ? "." : "") + path[i];
  return s;
}

// The map at path[0..n), or an undefined node when the tree has none there.
YAML::Node map_at(YAML::Node root, const std::vector<std::string>& path, std::size_t n) {
  YAML::Node cur = root;
  for (std::size_t i = 0; i < n; ++i) {
    const YAML::Node next = static_cast<const YAML::Node&>(cur)[path[i]];
    if (!next.IsDefined() || !next.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(next);
  }
  return cur.IsMap() ? cur : YAML::Node(YAML::NodeType::Undefined);
}

// KEY=null (or ~, or nothing) deletes the key: the case then reads as if the
// file had never had it. A key that is not there is checked by name, so that
// a typo is not silently ignored.
void remove_path(YAML::Node root, const Override& ov) {
  const std::size_t last = ov.path.size() - 1;
  YAML::Node parent = map_at(root, ov.path, last);
  const std::string& key = ov.path.back();
  if (parent.IsDefined() && static_cast<const YAML::Node&>(parent)[key].IsDefined()) {
    parent.remove(key);
    return;
  }
  const schema::Keys known = schema::known_keys(joined(ov.path, last));
  if (known.empty() || std::find(known.begin(), known.end(), key) != known.end()) return;
  const std::string_view near = schema::nearest(key, known);
  throw CaseError(schema::command_line_loc(), ov.dotted,
                  near.empty() ? "unknown key; expected one of " + schema::join(known)
                               : fmt::format("unknown key; did you mean '{}'?", near));
}

// Whether `dotted` lies at, under or above a path an earlier override set.
bool set_before(const std::string& dotted, const std::vector<std::string>& given) {
  return std::any_of(given.begin(), given.end(), [&](const std::string& g) {
    return g == dotted || dotted.starts_with(g + ".") || g.starts_with(dotted + ".");
  });
}

// An override of one key of a "give only one of" group (heat.steps, grid.spacing,
// initial.file.path ...) replaces the partner the file gives: the command line
// wins over the file. Partners set by an earlier override stay, and conflict.
void drop_file_partners(YAML::Node root, const Override& ov,
                        const std::vector<std::string>& given) {
  for (std::size_t i = 0; i < ov.path.size(); ++i) {
    const std::string section = joined(ov.path, i);
    for (const schema::OneOfGroup& g : schema::kOneOfGroups) {
      if (g.section != section ||
          std::find(g.keys.begin(), g.keys.end(), ov.path[i]) == g.keys.end())
        continue;
      YAML::Node parent = map_at(root, ov.path, i);
      if (!parent.IsDefined()) continue;
      for (std::string_view partner : g.keys) {
        const std::string k(partner);
        if (k == ov.path[i] || !static_cast<const YAML::Node&>(parent)[k].IsDefined()) continue;
        if (set_before(section.empty() ? k : section + "." + k, given)) continue;
        parent.remove(k);
      }
    }
  }
}

void apply_overrides(YAML::Node root, const std::vector<std::string>& overrides, Sources& src) {
  std::vector<std::string> given;  // the dotted paths set so far
  for (const std::string& arg : overrides) {
    Override ov = parse_override(arg);
    if (!root.IsMap()) return;  // the top-level check reports it
    if (ov.value.IsNull()) {
      remove_path(root, ov);
      continue;
    }
    drop_file_partners(root, ov, given);
    src.add_command_line(ov.value);
    set_path(root, ov);
    given.push_back(ov.dotted);
  }
}

// ---- top-level keys -------------------------------------------------------------

// The name becomes out/<name>, <name>.pvd, vtk/<name>_<step>.vti ...: one
// plain, portable file name part, short enough for those to fit in 255 bytes.
constexpr std::size_t kMaxNameLength = 100;  // docs/cases.md#top-level-keys

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

bool valid_name(const std::string& s) {
  return !s.empty() && s.size() <= kMaxNameLength && s[0] != '.' &&
         std::all_of(s.begin(), s.end(), name_char);
}

// The file's name without .yaml, its other characters made '_'.
std::string default_name(const std::string& label) {
  const fs::path p(label);
  const std::string ext = p.extension().string();
  std::string name = (ext == ".yaml" || ext == ".yml") ? p.stem().string() : p.filename().string();
  for (char& c : name)
    if (!name_char(c)) c = '_';
  if (!name.empty() && name[0] == '.') name[0] = '_';
  name.resize(std::min(name.size(), kMaxNameLength));
  return name.empty() ? "case" : name;
}

std::string read_name(const Map& top, const std::string& label) {
  if (!top.has("name")) return default_name(label);
  const Value v = top.get("name");
  const std::string s = v.text();
  if (!valid_name(s))
    v.fail(fmt::format("expected a name of letters A-Z a-z, digits, '_', '-' and '.' (not first), "
                       "at most {} characters (it names the output files), got {}",
                       kMaxNameLength, v.describe()));
  return s;
}

// "a, b and c"
std::string and_list(schema::Keys words) {
  std::string s;
  for (std::size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + std::string(words[i]);
  return s;
}

Workload read_workload(const Map& top) {
  const Value v = top.require("workload");
  if (v.node().IsScalar() && v.node().Scalar() == "poisson")
    v.fail("expected one of " + schema::join(schema::kWorkloads) +
           ", got 'poisson'; Poisson's equation is workload: laplace with laplace.rhs: f");
  const std::string w = v.choice(schema::kWorkloads);
  const auto& ok = schema::kAvailableWorkloads;
  if (std::find(std::begin(ok), std::end(ok), w) == std::end(ok))
    v.fail(fmt::format("workload '{}' is not available in this version of gridforge ({} only)", w,
                       and_list(ok)));
  const WorkloadInfo* info = workload_named(w);
  if (!info) throw std::logic_error("schema::kWorkloads names a workload without an entry");
  return info->workload;
}

// Each workload's section (named after it) belongs to that workload alone.
void check_sections(const Map& top, Workload w) {
  for (std::string_view s : schema::kWorkloads) {
    if (top.has(s) && s != to_string(w))
      top.key_node(s).fail(
          fmt::format("section '{}' does not apply to workload {}", s, to_string(w)));
  }
}

std::string read_device(const Map& top) {
  if (!top.has("device")) return "auto";
  const Value v = top.get("device");
  const std::string s = v.text();
  const bool cuda_n =
      s.starts_with("cuda:") && s.size() > 5 &&
      std::all_of(s.begin() + 5, s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (s != "auto" && s != "cpu" && s != "cuda" && !cuda_n)
    v.fail("expected auto, cpu, cuda or cuda:N, got " + v.describe());
  int index = 0;
  if (cuda_n && std::from_chars(s.data() + 5, s.data() + s.size(), index).ec != std::errc())
    v.fail(fmt::format("GPU number {} is out of range (cuda:0 is the first GPU)",
                       shown(s.substr(5), 40)));
  return s;
}

constexpr std::size_t kMaxParameters = 1000;  // docs/cases.md#parameters

Params read_parameters(const Map& top) {
  Params params;
  if (!top.has("parameters")) return params;
  const Value all = top.get("parameters");
  // Every expression's parser defines every parameter: keep them a list a
  // person writes, not a table.
  if (all.node().IsMap() && all.node().size() > kMaxParameters)
    all.fail(fmt::format("{} parameters; a case may have at most {}", all.node().size(),
                         kMaxParameters));
  for (const auto& [k, v] : all.items()) {
    const std::string name = k.node().Scalar();
    if (const std::string why = schema::parameter_name_problem(name); !why.empty()) k.fail(why);
    params.emplace_back(name, v.number());
  }
  return params;
}

// ---- the whole case -------------------------------------------------------------------

Case read_case(const YAML::Node& root, const Sources& src, const fs::path& base_dir) {
  const Map top = Value(src, root, "").map(schema::kTopKeys);
  Case c;
  c.file = src.label();
  c.workload = read_workload(top);
  check_sections(top, c.workload);
  c.name = read_name(top, src.label());
  if (top.has("precision"))
    c.precision = top.get("precision").choice(schema::kPrecisions) == "float32"
                      ? Precision::Float32
                      : Precision::Float64;
  c.device = read_device(top);
  c.parameters = read_parameters(top);
  c.grid_lengths = case_sections::read_grid(top, c.grid);
  case_sections::read_grid_ranks(top, c);
  c.boundary = case_sections::read_boundary(top, c.parameters, c.grid, c.workload);
  case_sections::set_spacing(c.grid, c.grid_lengths);
  const WorkloadInfo& info = workload_info(c.workload);
  if (info.has_field) case_sections::read_initial(top, c.parameters, base_dir, c.grid, c.initial);
  info.read(top, c, base_dir);
  if (info.has_field) raymarch_case::read_render(top, c, c.render);
  case_sections::read_output(top, c.name, c.output);
  c.resolved_yaml = emit_resolved(c);
  return c;
}

}  // namespace

std::string emit_resolved(const Case& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << c.name;
  out << YAML::Key << "workload" << YAML::Value << to_string(c.workload);
  out << YAML::Key << "precision" << YAML::Value << to_string(c.precision);
  out << YAML::Key << "device" << YAML::Value << c.device;
  if (!c.parameters.empty()) {
    out << YAML::Key << "parameters" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [name, value] : c.parameters)
      out << YAML::Key << name << YAML::Value << case_sections::num(value);
    out << YAML::EndMap;
  }
  case_sections::emit_grid(out, c.grid, c.grid_lengths, c.ranks);
  const WorkloadInfo& info = workload_info(c.workload);
  if (info.has_field) {
    case_sections::emit_initial(out, c.initial);
    case_sections::emit_boundary(out, c);
  }
  info.emit(out, c);
  if (c.render.enabled) raymarch_case::emit(out, "render", c.render, true);
  case_sections::emit_output(out, c.output);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {

// A raymarch of a file written by gridforge (a run's fields.h5): the grid's
// dims, spacing and origin the case leaves out are the file's, as if given on
// the command line (docs/cases.md#raymarch). Anything unusual (no such file,
// not 3D, not a gridforge file) is left to the usual checks.
void grid_from_volume_file(YAML::Node root, Sources& src, const fs::path& base_dir) {
  // Read through const nodes: yaml-cpp's operator[] on a non-const node adds
  // the key, and assigning one node to another rebinds what it refers to.
  const YAML::Node& top = root;
  auto map_at = [](const YAML::Node& from, std::initializer_list<const char*> keys) {
    YAML::Node n;
    n.reset(from);
    for (const char* k : keys) {
      const YAML::Node& c = n;
      if (!c.IsMap() || !c[k].IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
      const YAML::Node next = c[k];  // copy construction refers, assignment would rebind
      n.reset(next);
    }
    return n;
  };
  if (!top.IsMap() || !top["workload"].IsDefined() || !top["workload"].IsScalar() ||
      top["workload"].Scalar() != "raymarch")
    return;
  const YAML::Node path = map_at(top, {"raymarch", "volume", "file", "path"});
  if (!path.IsDefined() || !path.IsScalar()) return;
  const YAML::Node grid = top["grid"];
  if (grid.IsDefined() && !grid.IsMap()) return;
  auto given = [&](const char* k) { return grid.IsDefined() && grid[k].IsDefined(); };
  if (given("dims") && (given("extent") || given("spacing")) && given("origin")) return;
  fs::path file(path.Scalar());
  if (file.is_relative()) file = base_dir / file;
  io::StepsListing l;
  try {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return;
    l = io::h5_list_steps(file.string());
  } catch (const Error&) {
    return;
  }
  if (l.dims.size() != 3) return;
  auto seq = [&](const auto& v) {
    YAML::Node s(YAML::NodeType::Sequence);
    s.SetStyle(YAML::EmitterStyle::Flow);
    for (const auto& x : v) s.push_back(x);
    src.add_command_line(s);
    return s;
  };
  YAML::Node g = grid.IsDefined() ? root["grid"] : YAML::Node(YAML::NodeType::Map);
  if (!given("dims")) g["dims"] = seq(l.dims);
  if (!given("extent") && !given("spacing") && l.spacing.size() == 3) g["spacing"] = seq(l.spacing);
  if (!given("origin") && l.origin.size() == 3) g["origin"] = seq(l.origin);
  if (!grid.IsDefined()) root["grid"] = g;
}

}  // namespace

Case load_case_text(const std::string& text, const std::string& label,
                    const std::vector<std::string>& overrides, const std::string& base_dir) {
  YAML::Node root = parse_document(text, label);
  Sources src(label);
  src.set_root(root);
  apply_overrides(root, overrides, src);
  const fs::path base = base_dir.empty() ? fs::path(".") : fs::path(base_dir);
  grid_from_volume_file(root, src, base);
  return read_case(root, src, base_dir.empty() ? fs::path(".") : fs::path(base_dir));
}

Case load_case(const std::string& path, const std::vector<std::string>& overrides) {
  std::string text;
  try {
    text = io::read_input_file(path, case_text::kMaxBytes);
  } catch (const IoError& e) {
    throw CaseError({path, 0, 0}, "", std::string("cannot read case file: ") + e.what());
  }
  const fs::path dir = fs::path(path).parent_path();
  return load_case_text(text, path, overrides, dir.empty() ? "." : dir.string());
}

int time_block_asked(const Case& c) {
  const WorkloadInfo& info = workload_info(c.workload);
  return info.time_block ? info.time_block(c) : 0;
}

}  // namespace gf
