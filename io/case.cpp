// Case loading (SPEC §3): parse the YAML, apply KEY=VALUE overrides to the
// tree, then read every section through the checked readers of case_schema,
// resolving defaults, the grid spacing, the boundary per face and the step.
#include "io/case.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "io/case_raymarch.hpp"
#include "io/case_schema.hpp"
#include "io/expression.hpp"
#include "io/output.hpp"

namespace gf {

const char* to_string(Workload w) {
  switch (w) {
    case Workload::Heat:
      return "heat";
    case Workload::Laplace:
      return "laplace";
    case Workload::Stencil:
      return "stencil";
    case Workload::Raymarch:
      return "raymarch";
  }
  return "?";
}

namespace {

namespace fs = std::filesystem;
using schema::Map;
using schema::Sources;
using schema::Value;

// ---- YAML text and overrides ------------------------------------------------

SourceLoc file_loc(const std::string& label, const YAML::Mark& m) {
  if (m.is_null()) return {label, 0, 0};
  return {label, m.line + 1, m.column + 1};
}

// Where `text` stops being UTF-8 (the offset of the first bad byte), if it
// does. yaml-cpp passes stray bytes through into names and values, which then
// cannot be written into run.json or shown; so a case must be UTF-8, as YAML
// says. Overlong forms, surrogates and code points past U+10FFFF are refused.
std::optional<std::size_t> invalid_utf8_at(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = s[i];
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return i;
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const unsigned b = s[i + k];
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += len;
  }
  return std::nullopt;
}

// line:col (1-based, columns in characters) of a byte offset in valid UTF-8 before it.
SourceLoc loc_of_offset(const std::string& label, std::string_view text, std::size_t at) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < at; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++col;
    }
  }
  return {label, line, col};
}

std::string utf8_problem(std::string_view text, std::size_t at) {
  return fmt::format("not UTF-8 text (byte 0x{:02x}); save the case file as UTF-8",
                     static_cast<unsigned char>(text[at]));
}

// Where each YAML document of a text starts (the mark of its root node).
class DocumentMarks final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> roots;
  void OnDocumentStart(const YAML::Mark&) override { first_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& m) {
    if (first_) roots.push_back(m);
    first_ = false;
  }
  bool first_ = false;
};

// The documents of `text`, counted without YAML::LoadAll: yaml-cpp 0.7 (Debian
// 12) loops there for ever, allocating, on a token no node can start with,
// such as a stray ',' at the top level (jbeder/yaml-cpp#1040, fixed upstream
// by #1319 in 0.9): each call returns the same empty document again. Found by
// the fuzzer (tests/fuzz/); a document that starts where the last one did
// is that token, reported as a syntax error instead.
std::vector<YAML::Mark> document_roots(const std::string& text, const std::string& label) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentMarks marks;
  try {
    while (parser.HandleNextDocument(marks)) {
      const auto& r = marks.roots;
      if (r.size() >= 2 && r[r.size() - 1].pos == r[r.size() - 2].pos) {
        const YAML::Mark m = r.back();
        const char c = m.pos >= 0 && std::size_t(m.pos) < text.size() ? text[m.pos] : '?';
        throw CaseError(file_loc(label, m), "",
                        fmt::format("YAML syntax error: unexpected '{}'", c));
      }
    }
  } catch (const YAML::Exception& e) {
    throw CaseError(file_loc(label, e.mark), "", "YAML syntax error: " + e.msg);
  }
  return marks.roots;
}

YAML::Node parse_document(const std::string& text, const std::string& label) {
  if (const auto bad = invalid_utf8_at(text))
    throw CaseError(loc_of_offset(label, text, *bad), "", utf8_problem(text, *bad));
  const std::vector<YAML::Mark> roots = document_roots(text, label);
  if (roots.size() > 1)
    throw CaseError(file_loc(label, roots[1]), "",
                    fmt::format("the file holds {} YAML documents; a case is one", roots.size()));
  YAML::Node doc;
  try {
    doc = YAML::Load(text);  // the one document (no LoadAll: see document_roots)
  } catch (const YAML::Exception& e) {
    throw CaseError(file_loc(label, e.mark), "", "YAML syntax error: " + e.msg);
  }
  // An empty file is an empty map, so that it reports its first missing key.
  if (roots.empty() || doc.IsNull()) return YAML::Node(YAML::NodeType::Map);
  return doc;
}

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
        fmt::format("malformed override '{}': expected KEY=VALUE, e.g. heat.steps=10", arg));
  if (const auto bad = invalid_utf8_at(arg))
    throw CaseError(schema::command_line_loc(), ov.dotted,
                    fmt::format("not UTF-8 text (byte 0x{:02x})", static_cast<unsigned char>(arg[*bad])));
  try {
    ov.value = YAML::Load(arg.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw CaseError(schema::command_line_loc(), ov.dotted,
                    "cannot read the value as YAML: " + e.msg);
  }
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
                                  next.IsSequence() ? "a list" : "'" + next.Scalar() + "'"));
    cur.reset(next);
  }
  cur.remove(ov.path.back());  // re-insert, so a file node never aliases the new value
  cur[ov.path.back()] = ov.value;
}

void apply_overrides(YAML::Node root, const std::vector<std::string>& overrides, Sources& src) {
  for (const std::string& arg : overrides) {
    Override ov = parse_override(arg);
    if (!root.IsMap()) return;  // the top-level check reports it
    src.add_command_line(ov.value);
    set_path(root, ov);
  }
}

// ---- top-level keys -------------------------------------------------------------

std::string default_name(const std::string& label) {
  const fs::path p(label);
  const std::string ext = p.extension().string();
  std::string name = (ext == ".yaml" || ext == ".yml") ? p.stem().string() : p.filename().string();
  return name.empty() ? "case" : name;
}

std::string read_name(const Map& top, const std::string& label) {
  if (!top.has("name")) return default_name(label);
  const Value v = top.get("name");
  const std::string s = v.text();
  // The name becomes out/<name> and <name>.pvd: keep it one plain path part.
  if (s.empty() || s == "." || s == ".." || s.find_first_of("/\\ \t\r\n") != std::string::npos)
    v.fail("expected a name without '/' or spaces (it names the output files), got " +
           v.describe());
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
  const std::string w = v.choice(schema::kWorkloads);
  const auto& ok = schema::kAvailableWorkloads;
  if (std::find(std::begin(ok), std::end(ok), w) == std::end(ok))
    v.fail(fmt::format("workload '{}' is not available in this version of gridforge ({} only)", w,
                       and_list(ok)));
  return w == "stencil"    ? Workload::Stencil
         : w == "laplace"  ? Workload::Laplace
         : w == "raymarch" ? Workload::Raymarch
                           : Workload::Heat;
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
  return s;
}

Params read_parameters(const Map& top) {
  Params params;
  if (!top.has("parameters")) return params;
  for (const auto& [k, v] : top.get("parameters").items()) {
    const std::string name = k.node().Scalar();
    if (const std::string why = schema::parameter_name_problem(name); !why.empty()) k.fail(why);
    params.emplace_back(name, v.number());
  }
  return params;
}

// ---- grid and boundary ------------------------------------------------------------

std::string count_of(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::vector<double> read_axis_list(const Value& v, int ndim, bool positive) {
  const std::string expected = fmt::format("expected a list of {} (one per axis of grid.dims)",
                                           count_of(ndim, "number", "numbers"));
  if (!v.node().IsSequence()) v.fail(expected + ", got " + v.describe());
  if (v.node().size() != std::size_t(ndim))
    v.fail(fmt::format("{}, got {}", expected, count_of(v.node().size(), "number", "numbers")));
  std::vector<double> out;
  for (const Value& item : v.list()) out.push_back(positive ? item.positive() : item.number());
  return out;
}

// extent or spacing as written: the grid spacing needs the boundary first.
GridLengths read_grid(const Map& top, Grid& g) {
  const Map m = top.require("grid").map(schema::kGridKeys);
  const Value dims = m.require("dims");
  const std::size_t nd = dims.node().IsSequence() ? dims.node().size() : 0;
  if (nd < 1 || nd > 3) {
    dims.fail("expected a list of 1 to 3 integers, got " +
              (dims.node().IsSequence() ? count_of(nd, "entry", "entries") : dims.describe()));
  }
  g.ndim = int(nd);
  double points = 1;
  const auto items = dims.list();
  for (int a = 0; a < g.ndim; ++a) {
    g.n[a] = items[a].integer(3);
    points *= double(g.n[a]);
  }
  if (points > 0x1p48)
    dims.fail(fmt::format("{:.3g} points is more than gridforge can hold", points));
  if (m.has("extent") && m.has("spacing"))
    m.key_node("spacing").fail("give extent or spacing, not both");
  GridLengths in;
  in.by_spacing = m.has("spacing");
  const Value lengths = m.get(in.by_spacing ? "spacing" : "extent");
  in.lengths =
      lengths.present() ? read_axis_list(lengths, g.ndim, true) : std::vector<double>(g.ndim, 1.0);
  if (m.has("origin")) {
    const auto origin = read_axis_list(m.get("origin"), g.ndim, false);
    std::copy(origin.begin(), origin.end(), g.origin.begin());
  }
  return in;
}

// grid.ranks: MPI ranks per axis (checked against the ranks of the run and
// the grid by grid/decomp.cpp, where both are known).
void read_grid_ranks(const Map& top, Case& c) {
  const Map m = top.require("grid").map(schema::kGridKeys);
  if (!m.has("ranks")) return;
  const Value v = m.get("ranks");
  const std::string expected = fmt::format("expected a list of {} (ranks per axis of grid.dims)",
                                           count_of(c.grid.ndim, "integer", "integers"));
  if (!v.node().IsSequence()) v.fail(expected + ", got " + v.describe());
  if (v.node().size() != std::size_t(c.grid.ndim))
    v.fail(fmt::format("{}, got {}", expected, count_of(v.node().size(), "entry", "entries")));
  for (const Value& item : v.list()) {
    const std::int64_t r = item.integer(1);
    if (r > 1 << 20) item.fail(fmt::format("{} ranks on an axis is more than gridforge runs", r));
    c.ranks.push_back(int(r));
  }
  c.ranks_loc = v.loc();
}

// Node-centred (SPEC §1): a walled axis stores both end points, a periodic one
// does not store the point that would repeat point 0.
void set_spacing(Grid& g, const GridLengths& in) {
  for (int a = 0; a < g.ndim; ++a) {
    const double n = double(g.n[a]);
    g.h[a] = in.by_spacing ? in.lengths[a] : in.lengths[a] / (g.periodic[a] ? n : n - 1);
  }
}

FaceBc read_bc(const Value& v, const Params& params) {
  const Map m = v.map(schema::kBcKeys);
  const std::string type = m.require("type").choice(schema::kBcTypes);
  FaceBc bc;
  bc.type = type == "dirichlet" ? BcType::Dirichlet
            : type == "neumann" ? BcType::Neumann
                                : BcType::Periodic;
  const std::string_view takes = bc.type == BcType::Dirichlet ? "value"
                                 : bc.type == BcType::Neumann ? "gradient"
                                                              : "";
  for (const std::string& k : m.keys()) {
    if (k == "type" || k == takes) continue;
    m.key_node(k).fail(fmt::format("does not apply to type {}{}", type,
                                   takes.empty() ? "" : fmt::format(" (it takes '{}')", takes)));
  }
  if (bc.type == BcType::Dirichlet) {
    bc.value = m.has("value") ? m.get("value").expr() : Expr{"0", v.loc(), m.path("value")};
    check_expression(bc.value, params);
  } else if (bc.type == BcType::Neumann && m.has("gradient")) {
    bc.gradient = m.get("gradient").number();
  }
  return bc;
}

// The key of `boundary` that sets face f: the face, else its axis, else default.
std::optional<std::string> source_of_face(const std::optional<Map>& m, int f) {
  const std::string face = face_name(f);
  for (const std::string& key : {face, face.substr(0, 1), std::string("default")})
    if (m && m->has(key)) return key;
  return std::nullopt;
}

std::array<FaceBc, kFaces> read_boundary(const Map& top, const Params& params, Grid& g) {
  std::optional<Map> m;
  if (top.has("boundary")) m.emplace(top.get("boundary").map(schema::kBoundaryKeys));
  std::map<std::string, FaceBc> given;  // every key is checked, used or not
  for (const std::string& key : m ? m->keys() : std::vector<std::string>{}) {
    if (key != "default" && key[0] - 'x' >= g.ndim)
      m->key_node(key).fail(fmt::format("the grid has no {} axis (grid.dims has {})", key[0],
                                        count_of(g.ndim, "entry", "entries")));
    given.emplace(key, read_bc(m->get(key), params));
  }
  FaceBc builtin;  // {type: dirichlet, value: 0}
  builtin.value.key = "boundary.default.value";
  std::array<FaceBc, kFaces> faces;
  faces.fill(builtin);
  for (int f = 0; f < 2 * g.ndim; ++f)
    if (const auto key = source_of_face(m, f)) faces[f] = given.at(*key);
  for (int a = 0; a < g.ndim; ++a) {
    const bool lo = faces[2 * a].type == BcType::Periodic,
               hi = faces[2 * a + 1].type == BcType::Periodic;
    if (lo != hi) {
      const int f = lo ? 2 * a : 2 * a + 1;
      m->get(*source_of_face(m, f))
          .fail(fmt::format("periodic face {} needs its partner {} periodic too", face_name(f),
                            face_name(f ^ 1)));
    }
    g.periodic[a] = lo;
  }
  return faces;
}

// ---- initial ------------------------------------------------------------------------

// Why the file cannot be read, or "" when it can.
std::string unreadable(const fs::path& p) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) return "it is a folder";
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::strerror(errno);
  return "";
}

// The dataset must exist and hold one value per grid point, slowest axis
// first ([nz][ny][nx]), as fields.h5 stores them.
void check_initial_dataset(const Value& dataset, const InitialSpec& init, const Grid& g) {
  std::vector<std::int64_t> shape;
  try {
    shape = io::h5_dataset_shape(init.path, init.dataset);
  } catch (const IoError& e) {
    dataset.fail(e.what());
  }
  std::vector<std::int64_t> want;
  for (int a = g.ndim - 1; a >= 0; --a) want.push_back(g.n[a]);
  if (shape != want) {
    auto str = [](const std::vector<std::int64_t>& v) {
      std::string s = "[";
      for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
      return s + "]";
    };
    dataset.fail(fmt::format("dataset '{}' has shape {}; the grid needs {} (slowest axis first)",
                             init.dataset, str(shape), str(want)));
  }
}

void read_initial_file(const Value& v, const fs::path& base_dir, const Grid& grid,
                       InitialSpec& init) {
  const Map m = v.map(schema::kInitialFileKeys);
  const Value path = m.require("path");
  const Value dataset = m.require("dataset");
  const std::string rel = path.text();
  if (rel.empty()) path.fail("expected a file path, got nothing");
  init.dataset = dataset.text();
  if (init.dataset.empty())
    dataset.fail("expected an HDF5 dataset path like /steps/000100/u, got nothing");
  // Relative to the case file, as a user moving a case folder expects; kept
  // absolute so that resolved_yaml still names it from anywhere.
  fs::path p(rel);
  if (p.is_relative()) p = base_dir / p;
  p = fs::absolute(p).lexically_normal();
  if (const std::string why = unreadable(p); !why.empty())
    path.fail(fmt::format("cannot read '{}': {}", p.string(), why));
  init.kind = InitialSpec::Kind::File;
  init.path = p.string();
  check_initial_dataset(dataset, init, grid);
}

void read_initial(const Map& top, const Params& params, const fs::path& base_dir,
                  const Grid& grid, InitialSpec& init) {
  if (!top.has("initial")) return;  // value 0
  const Map m = top.get("initial").map(schema::kInitialKeys);
  const std::vector<std::string> kinds = m.keys();
  if (kinds.empty()) m.self().fail("missing required key 'value', 'expr' or 'file'");
  if (kinds.size() > 1) m.key_node(kinds[1]).fail("give only one of 'value', 'expr' and 'file'");
  const Value v = m.get(kinds[0]);
  if (kinds[0] == "value") {
    init.kind = InitialSpec::Kind::Value;
    init.value = v.number();
  } else if (kinds[0] == "expr") {
    init.kind = InitialSpec::Kind::Expr;
    init.expr = v.expr();
    check_expression(init.expr, params);
  } else {
    read_initial_file(v, base_dir, grid, init);
  }
}

// ---- heat -------------------------------------------------------------------------------

bool equal_spacing(const Grid& g) {
  for (int a = 1; a < g.ndim; ++a)
    if (std::abs(g.h[a] - g.h[0]) > 1e-12 * g.h[0]) return false;
  return true;
}

// FTCS is stable for dt ≤ 1 / (2α Σ 1/h²), i.e. h²/(2·d·α) on equal spacing.
double stability_limit(const Grid& g, double alpha) {
  double sum = 0;
  for (int a = 0; a < g.ndim; ++a) sum += 1.0 / (g.h[a] * g.h[a]);
  return 1.0 / (2.0 * alpha * sum);
}

// dt and its limit with as few digits as still tell them apart (2 at least).
std::pair<std::string, std::string> distinct_digits(double dt, double limit) {
  for (int p = 2;; ++p) {
    std::string a = fmt::format("{:.{}g}", dt, p), b = fmt::format("{:.{}g}", limit, p);
    if (a != b || p >= 17) return {a, b};
  }
}

void read_dt(const Value& v, const Value& scheme, const Grid& g, HeatSpec& h) {
  h.dt_auto = !v.present() || (v.node().IsScalar() && v.node().Scalar() == "auto");
  if (h.dt_auto) {
    // auto is a fraction of the explicit limit; an implicit scheme is there to go past it.
    if (h.implicit())
      (v.present() ? v : scheme)
          .fail(fmt::format("scheme {} needs a number for dt (auto is for the explicit scheme); "
                            "any dt > 0 is stable",
                            h.scheme));
    h.dt = 0.9 * h.dt_limit;
    return;
  }
  double dt = 0;
  if (!v.node().IsScalar() || !YAML::convert<double>::decode(v.node(), dt) || !std::isfinite(dt) ||
      !(dt > 0))
    v.fail("expected auto or a number > 0, got " + v.describe());
  if (!h.implicit() && dt > h.dt_limit * (1 + 1e-12)) {
    const auto [shown_dt, shown_limit] = distinct_digits(dt, h.dt_limit);
    const std::string formula =
        equal_spacing(g) ? fmt::format("h²/(2·{}·α)", g.ndim) : std::string("1/(2·α·Σ1/h²)");
    v.fail(fmt::format(
        "{} exceeds the explicit stability limit {} ({}); use dt: auto or a scheme: implicit",
        shown_dt, shown_limit, formula));
  }
  h.dt = dt;
}

// Which of the keys `a` and `b` the map holds, when it holds exactly one.
std::string exactly_one_of(const Map& m, const std::string& a, const std::string& b) {
  if (!m.has(a) && !m.has(b)) m.self().fail(fmt::format("missing required key '{}' or '{}'", a, b));
  if (m.has(a) && m.has(b)) {
    // Point at the later of the two: an override comes after the file's key.
    const std::vector<std::string> keys = m.keys();
    const auto later =
        std::find_if(keys.rbegin(), keys.rend(), [&](const auto& k) { return k == a || k == b; });
    m.key_node(*later).fail(fmt::format("give only one of '{}' and '{}'", a, b));
  }
  return m.has(a) ? a : b;
}

// steps, or t_end with the last step shortened to land on it.
void read_duration(const Map& m, HeatSpec& h) {
  const bool has_steps = exactly_one_of(m, "steps", "t_end") == "steps";
  h.last_dt = h.dt;
  if (has_steps) {
    h.steps = m.get("steps").integer(0);
    return;
  }
  const Value v = m.get("t_end");
  h.use_t_end = true;
  h.t_end = v.positive();
  const double r = h.t_end / h.dt;
  if (r > 1e15) v.fail(fmt::format("t_end / dt = {:.3g} steps is more than gridforge can run", r));
  // t_end = 10·dt must give 10 steps, not 11 for a rounding error of 1 ulp.
  const double nearest = std::round(r);
  h.steps = std::max<std::int64_t>(
      1, std::int64_t(std::abs(r - nearest) <= 1e-9 * std::max(1.0, r) ? nearest : std::ceil(r)));
  h.last_dt = h.t_end - double(h.steps - 1) * h.dt;
}

// Accepted for implicit schemes (SPEC §3) and echoed in resolved_yaml, unused
// by the explicit scheme.
void read_solver(const Value& v, HeatSpec& h) {
  const Map m = v.map(schema::kSolverKeys);
  if (m.has("tolerance")) h.solver_tolerance_asked = m.get("tolerance").positive();
  if (m.has("max_iters")) h.solver_max_iters_asked = m.get("max_iters").integer(1);
}

// float32 cannot reach a relative residual much below 1e-6: a smaller
// tolerance is raised to kFloat32ToleranceFloor instead of running to max_iters.
double effective_tolerance(double asked, Precision p) {
  return p == Precision::Float32 ? std::max(asked, kFloat32ToleranceFloor) : asked;
}

// heat.time_block, stencil.time_block: auto (0) or the steps per pass, 1 to kMaxTimeBlock.
int read_time_block(const Value& v) {
  if (v.node().IsScalar() && v.node().Scalar() == "auto") return 0;
  long long k = 0;
  if (!v.node().IsScalar() || !YAML::convert<long long>::decode(v.node(), k) || k < 1 ||
      k > kMaxTimeBlock)
    v.fail(fmt::format("expected auto or a whole number of steps from 1 to {}, got {}",
                       kMaxTimeBlock, v.describe()));
  return int(k);
}

int read_time_block(const Value& v, const HeatSpec& h) {
  const int k = read_time_block(v);
  if (k > 1 && h.implicit())
    v.fail(fmt::format("temporal blocking is for the explicit scheme, not {}", h.scheme));
  return k;
}

void read_heat(const Map& top, const Params& params, const Grid& g, Precision prec, HeatSpec& h) {
  const Map m = top.require("heat").map(schema::kHeatKeys);
  h.alpha = m.require("alpha").positive();
  if (m.has("scheme")) h.scheme = m.get("scheme").choice(schema::kSchemes);
  h.dt_limit = stability_limit(g, h.alpha);
  read_dt(m.get("dt"), m.has("scheme") ? m.get("scheme") : m.self(), g, h);
  read_duration(m, h);
  h.source = m.has("source") ? m.get("source").expr() : Expr{"0", m.self().loc(), m.path("source")};
  check_expression(h.source, params);
  if (m.has("solver")) read_solver(m.get("solver"), h);
  if (h.solver_tolerance_asked) h.solver_tolerance = *h.solver_tolerance_asked;
  if (h.solver_max_iters_asked) h.solver_max_iters = *h.solver_max_iters_asked;
  h.solver_tolerance = effective_tolerance(h.solver_tolerance, prec);
  if (m.has("time_block")) h.time_block = read_time_block(m.get("time_block"), h);
}

// ---- laplace ----------------------------------------------------------------------------

const char* bc_name(BcType t) {
  return t == BcType::Dirichlet ? "dirichlet" : t == BcType::Neumann ? "neumann" : "periodic";
}

bool read_bool(const Value& v) {
  bool b = false;
  if (!v.node().IsScalar() || !YAML::convert<bool>::decode(v.node(), b))
    v.fail("expected true or false, got " + v.describe());
  return b;
}

void read_omega(const Value& v, LaplaceSpec& L) {
  if (!v.present() || (v.node().IsScalar() && v.node().Scalar() == "auto")) return;
  double w = 0;
  if (!v.node().IsScalar() || !YAML::convert<double>::decode(v.node(), w) || !(w > 0 && w < 2))
    v.fail("expected auto or a number in (0, 2), got " + v.describe());
  L.omega_auto = false;
  L.omega = w;
}

// fft is periodic by nature; red-black SOR needs two colours that alternate
// across the wrap of a periodic axis too, so an even number of points there.
void check_method_fits(const Value& method, const LaplaceSpec& L, const Case& c) {
  const Grid& g = c.grid;
  for (int a = 0; a < g.ndim; ++a) {
    if (L.method == "fft" && !g.periodic[a]) {
      const int f = c.boundary[2 * a].type != BcType::Periodic ? 2 * a : 2 * a + 1;
      method.fail(fmt::format("fft needs every axis periodic (the FFT solve is periodic); "
                              "boundary {} is {}",
                              face_name(f), bc_name(c.boundary[f].type)));
    }
    if (L.method == "sor" && g.periodic[a] && g.n[a] % 2 != 0)
      method.fail(fmt::format("sor colours the grid red-black, which needs an even number of "
                              "points on a periodic axis; grid.dims[{}] is {}",
                              a, g.n[a]));
  }
}

void read_laplace(const Map& top, const Case& c, LaplaceSpec& L) {
  const Value section = top.get("laplace");
  const std::optional<Map> m =
      section.present() ? std::optional<Map>(section.map(schema::kLaplaceKeys)) : std::nullopt;
  auto get = [&](std::string_view k) {
    return m ? m->get(k)
             : Value(top.self().sources(), YAML::Node(YAML::NodeType::Undefined),
                     "laplace." + std::string(k));
  };
  const Value method = get("method");
  if (method.present()) L.method = method.choice(schema::kLaplaceMethods);
  const Value rhs = get("rhs");
  L.rhs = rhs.present() ? rhs.expr() : Expr{"0", section.loc(), "laplace.rhs"};
  check_expression(L.rhs, c.parameters);
  if (get("tolerance").present()) L.tolerance_asked = get("tolerance").positive();
  L.tolerance = effective_tolerance(L.tolerance_asked, c.precision);
  if (get("max_iters").present()) L.max_iters = get("max_iters").integer(1);
  if (get("check_every").present()) L.check_every = get("check_every").integer(1);
  read_omega(get("omega"), L);
  if (get("remove_mean").present()) L.remove_mean = read_bool(get("remove_mean"));
  if (get("time_block").present()) {
    L.time_block = read_time_block(get("time_block"));
    if (L.time_block > 1 && L.method != "jacobi")
      get("time_block").fail(fmt::format("temporal blocking is for the jacobi method, not {}",
                                         L.method));
  }
  check_method_fits(method.present() ? method : (m ? m->self() : top.self()), L, c);
  L.singular = true;
  for (int f = 0; f < 2 * c.grid.ndim; ++f)
    if (c.boundary[f].type == BcType::Dirichlet) L.singular = false;
  // With no Dirichlet face ∇²u = f has a solution only when f balances the
  // boundary flux: solvers' prepare_case checks it, pointing here.
  const Value& balance = rhs.present() ? rhs : (m ? m->self() : top.self());
  L.balance_loc = balance.loc();
  L.balance_key = balance.key();
}

// ---- stencil ----------------------------------------------------------------------------

// A preset is a discrete Laplacian; its weights are w[k] / (den·h²).
//  star: w[0] is the centre's share per axis, w[k] the weight of the offsets ±k on one axis.
//  box:  w[m] is the weight of a point of the 3^d box with m nonzero offsets (equal h only).
struct PresetDef {
  std::string_view name;
  int ndim;
  bool box;
  int radius;
  double den;
  std::array<double, 4> w;
};

constexpr PresetDef kPresetDefs[] = {
    {"star5", 2, false, 1, 1, {-2, 1, 0, 0}},          // second order
    {"star7", 3, false, 1, 1, {-2, 1, 0, 0}},          //
    {"star9", 2, false, 2, 12, {-30, 16, -1, 0}},      // fourth order: -5/2, 4/3, -1/12
    {"star13", 3, false, 2, 12, {-30, 16, -1, 0}},     //
    {"box9", 2, true, 1, 6, {-20, 4, 1, 0}},           // isotropic 9-point
    {"box27", 3, true, 1, 30, {-128, 14, 3, 1}},       // 27-point
};

const PresetDef& preset_def(std::string_view name) {
  for (const PresetDef& p : kPresetDefs)
    if (p.name == name) return p;
  throw std::logic_error("stencil preset without a definition");  // kStencilPresets drifted
}

std::vector<StencilPoint> star_points(const PresetDef& p, const Grid& g) {
  std::vector<StencilPoint> pts(1);  // the centre first
  for (int a = 0; a < g.ndim; ++a) {
    const double scale = 1.0 / (p.den * g.h[a] * g.h[a]);
    pts[0].w += p.w[0] * scale;
    for (int k = 1; k <= p.radius; ++k)
      for (int sign : {-1, 1}) {
        StencilPoint q;
        q.d[a] = sign * k;
        q.w = p.w[k] * scale;
        pts.push_back(q);
      }
  }
  return pts;
}

std::vector<StencilPoint> box_points(const PresetDef& p, const Grid& g) {
  const double scale = 1.0 / (p.den * g.h[0] * g.h[0]);
  std::vector<StencilPoint> pts;
  const int span[3] = {1, g.ndim > 1 ? 1 : 0, g.ndim > 2 ? 1 : 0};
  for (int dz = -span[2]; dz <= span[2]; ++dz)
    for (int dy = -span[1]; dy <= span[1]; ++dy)
      for (int dx = -span[0]; dx <= span[0]; ++dx) {
        const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
        pts.push_back(StencilPoint{{dx, dy, dz}, p.w[nonzero] * scale});
      }
  return pts;
}

std::vector<StencilPoint> preset_points(const Value& v, const Grid& g, std::string& name) {
  name = v.choice(schema::kStencilPresets);
  const PresetDef& p = preset_def(name);
  if (p.ndim != g.ndim)
    v.fail(fmt::format("{} is a {}D stencil; the grid is {}D", name, p.ndim, g.ndim));
  if (p.box && !equal_spacing(g))
    v.fail(fmt::format("{} needs equal grid spacing on every axis", name));
  return p.box ? box_points(p, g) : star_points(p, g);
}

// One offset of a user point: an integer within the radius limit, and 0 on
// the axes the grid lacks.
int read_offset(const Value& v, int axis, const Grid& g) {
  const std::int64_t d = v.integer(INT64_MIN);
  if (axis >= g.ndim && d != 0)
    v.fail(fmt::format("d{} = {} on a {}D grid: the grid has no {} axis", char('x' + axis), d,
                       g.ndim, char('x' + axis)));
  const int r = schema::kMaxStencilRadius;
  if (d > r) v.fail(fmt::format("offset {} is larger than {} (stencil radius ≤ {})", d, r, r));
  if (d < -r) v.fail(fmt::format("offset {} is below -{} (stencil radius ≤ {})", d, r, r));
  return int(d);
}

// Always [dx, dy, dz, w], whatever the grid's dimension: one form to read and write.
StencilPoint read_point(const Value& v, const Grid& g) {
  const std::string expected = "expected [dx, dy, dz, w]";
  if (!v.node().IsSequence()) v.fail(expected + ", got " + v.describe());
  if (v.node().size() != 4)
    v.fail(fmt::format("{}, got {}", expected, count_of(v.node().size(), "entry", "entries")));
  const auto items = v.list();
  StencilPoint p;
  for (int a = 0; a < 3; ++a) p.d[a] = read_offset(items[a], a, g);
  p.w = items[3].number();
  return p;
}

std::vector<StencilPoint> user_points(const Value& v, const Grid& g) {
  if (!v.node().IsSequence() || v.node().size() == 0)
    v.fail("expected a non-empty list of points [dx, dy, dz, w], got " +
           (v.node().IsSequence() ? std::string("an empty list") : v.describe()));
  std::vector<StencilPoint> pts;
  for (const Value& item : v.list()) {
    const StencilPoint p = read_point(item, g);
    // Two weights at one offset are most likely a typo in the offset.
    for (const StencilPoint& q : pts)
      if (std::equal(p.d, p.d + 3, q.d))
        item.fail(fmt::format("offset ({}, {}, {}) appears twice", p.d[0], p.d[1], p.d[2]));
    pts.push_back(p);
  }
  return pts;
}

int radius_of(const std::vector<StencilPoint>& pts) {
  int r = 0;
  for (const StencilPoint& p : pts)
    for (int d : p.d) r = std::max(r, std::abs(d));
  return r;
}

// Each axis must hold the whole stencil, so that filling the points beyond a
// wall (one mirror) or a periodic end (one wrap) never reaches past the grid.
void check_fits(const Map& top, const Grid& g, int radius) {
  for (int a = 0; a < g.ndim; ++a)
    if (g.n[a] < 2 * radius + 1)
      top.require("grid").map(schema::kGridKeys).require("dims").fail(
          fmt::format("a stencil of radius {} needs at least {} points per axis", radius,
                      2 * radius + 1));
}

void read_stencil(const Map& top, const Grid& g, StencilSpec& s) {
  const Map m = top.require("stencil").map(schema::kStencilKeys);
  const std::string source = exactly_one_of(m, "preset", "points");
  s.points = source == "preset" ? preset_points(m.get("preset"), g, s.preset)
                                : user_points(m.get("points"), g);
  s.radius = radius_of(s.points);
  check_fits(top, g, s.radius);
  if (m.has("form"))
    s.form = m.get("form").choice(schema::kStencilForms) == "replace" ? StencilSpec::Form::Replace
                                                                      : StencilSpec::Form::Update;
  if (m.has("coeff")) s.coeff = m.get("coeff").number();
  s.steps = m.require("steps").integer(0);
  if (m.has("time_block")) {
    s.time_block = read_time_block(m.get("time_block"));
    if (s.time_block > 1 && !star_order(s.points, g))
      m.get("time_block")
          .fail("temporal blocking is for stars of radius 1 in 2D or 3D (star5 or star7, or "
                "points in their order: centre, -x, +x, -y, +y, and in 3D -z, +z)");
  }
}

// ---- output -----------------------------------------------------------------------------

void read_formats(const Value& v, OutputSpec& o) {
  const std::string expected = "expected a non-empty list of " + schema::join(schema::kFormats);
  if (!v.node().IsSequence() || v.node().size() == 0) v.fail(expected + ", got " + v.describe());
  o.vtk = o.hdf5 = false;
  for (const Value& item : v.list()) {
    const std::string f = item.choice(schema::kFormats);
    (f == "vtk" ? o.vtk : o.hdf5) = true;
  }
}

void read_output(const Map& top, const std::string& name, OutputSpec& o) {
  o.dir = "out/" + name;
  if (!top.has("output")) return;
  const Map m = top.get("output").map(schema::kOutputKeys);
  if (m.has("dir")) {
    const Value v = m.get("dir");
    o.dir = v.text();
    if (o.dir.empty()) v.fail("expected a folder path, got nothing");
  }
  if (m.has("every")) o.every = m.get("every").integer(0);
  if (m.has("check_every")) o.check_every = m.get("check_every").integer(1);
  if (m.has("formats")) read_formats(m.get("formats"), o);
  if (m.has("checkpoint_every")) {
    const Value v = m.get("checkpoint_every");
    o.checkpoint_every = v.integer(0);
  }
}

// ---- resolved case -----------------------------------------------------------------------

// Shortest text that reads back as the same double: resolved_yaml can be
// loaded again and gives the same case, bit for bit.
std::string num(double v) { return fmt::format("{}", v); }

void emit_numbers(YAML::Emitter& out, const char* key, const double* v, int n) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int a = 0; a < n; ++a) out << num(v[a]);
  out << YAML::EndSeq;
}

void emit_grid(YAML::Emitter& out, const Grid& g, const GridLengths& in, const std::vector<int>& ranks) {
  out << YAML::Key << "grid" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dims" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int a = 0; a < g.ndim; ++a) out << g.n[a];
  out << YAML::EndSeq;
  emit_numbers(out, in.by_spacing ? "spacing" : "extent", in.lengths.data(), g.ndim);
  if (!in.by_spacing) {
    std::string h;
    for (int a = 0; a < g.ndim; ++a) h += (a ? ", " : "") + num(g.h[a]);
    out << YAML::Comment("spacing: [" + h + "]");
  }
  emit_numbers(out, "origin", g.origin.data(), g.ndim);
  if (!ranks.empty()) {
    out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int r : ranks) out << r;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

void emit_initial(YAML::Emitter& out, const InitialSpec& init) {
  out << YAML::Key << "initial" << YAML::Value << YAML::BeginMap;
  switch (init.kind) {
    case InitialSpec::Kind::Value:
      out << YAML::Key << "value" << YAML::Value << num(init.value);
      break;
    case InitialSpec::Kind::Expr:
      out << YAML::Key << "expr" << YAML::Value << init.expr.text;
      break;
    case InitialSpec::Kind::File:
      out << YAML::Key << "file" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
          << "path" << YAML::Value << init.path << YAML::Key << "dataset" << YAML::Value
          << init.dataset << YAML::EndMap;
      break;
  }
  out << YAML::EndMap;
}

void emit_boundary(YAML::Emitter& out, const Case& c) {
  out << YAML::Key << "boundary" << YAML::Value << YAML::BeginMap;
  for (int f = 0; f < 2 * c.grid.ndim; ++f) {
    const FaceBc& bc = c.boundary[f];
    out << YAML::Key << face_name(f) << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value
        << (bc.type == BcType::Dirichlet ? "dirichlet"
            : bc.type == BcType::Neumann ? "neumann"
                                         : "periodic");
    if (bc.type == BcType::Dirichlet) out << YAML::Key << "value" << YAML::Value << bc.value.text;
    if (bc.type == BcType::Neumann)
      out << YAML::Key << "gradient" << YAML::Value << num(bc.gradient);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_heat(YAML::Emitter& out, const HeatSpec& h) {
  out << YAML::Key << "heat" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "alpha" << YAML::Value << num(h.alpha);
  out << YAML::Key << "scheme" << YAML::Value << h.scheme;
  if (h.implicit())
    out << YAML::Key << "dt" << YAML::Value << num(h.dt)
        << YAML::Comment(fmt::format("{:.3g} × the explicit stability limit {}",
                                     h.dt / h.dt_limit, num(h.dt_limit)));
  else
    out << YAML::Key << "dt" << YAML::Value << num(h.dt)
        << YAML::Comment(fmt::format("{}stability limit {}", h.dt_auto ? "auto: 0.9 × " : "",
                                     num(h.dt_limit)));
  if (h.use_t_end)
    out << YAML::Key << "t_end" << YAML::Value << num(h.t_end)
        << YAML::Comment(fmt::format("{} steps, the last one {}", h.steps, num(h.last_dt)));
  else
    out << YAML::Key << "steps" << YAML::Value << h.steps;
  out << YAML::Key << "source" << YAML::Value << h.source.text;
  if (h.time_block > 0) out << YAML::Key << "time_block" << YAML::Value << h.time_block;
  if (h.implicit()) {  // resolved in full: the implicit schemes use it
    out << YAML::Key << "solver" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "tolerance" << YAML::Value << num(h.solver_tolerance);
    out << YAML::Key << "max_iters" << YAML::Value << h.solver_max_iters;
    out << YAML::EndMap;
  } else if (h.solver_tolerance_asked || h.solver_max_iters_asked) {
    out << YAML::Key << "solver" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (h.solver_tolerance_asked)
      out << YAML::Key << "tolerance" << YAML::Value << num(*h.solver_tolerance_asked);
    if (h.solver_max_iters_asked)
      out << YAML::Key << "max_iters" << YAML::Value << *h.solver_max_iters_asked;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_stencil(YAML::Emitter& out, const StencilSpec& s) {
  out << YAML::Key << "stencil" << YAML::Value << YAML::BeginMap;
  if (!s.preset.empty()) {
    out << YAML::Key << "preset" << YAML::Value << s.preset
        << YAML::Comment(fmt::format("{} points, radius {}", s.points.size(), s.radius));
  } else {
    out << YAML::Key << "points" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const StencilPoint& p : s.points)
      out << YAML::Flow << YAML::BeginSeq << p.d[0] << p.d[1] << p.d[2] << num(p.w)
          << YAML::EndSeq;
    out << YAML::EndSeq << YAML::Comment(fmt::format("radius {}", s.radius));
  }
  out << YAML::Key << "form" << YAML::Value
      << (s.form == StencilSpec::Form::Update ? "update" : "replace");
  out << YAML::Key << "coeff" << YAML::Value << num(s.coeff);
  out << YAML::Key << "steps" << YAML::Value << s.steps;
  if (s.time_block > 0) out << YAML::Key << "time_block" << YAML::Value << s.time_block;
  out << YAML::EndMap;
}

void emit_laplace(YAML::Emitter& out, const LaplaceSpec& L) {
  out << YAML::Key << "laplace" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "method" << YAML::Value << L.method;
  out << YAML::Key << "rhs" << YAML::Value << L.rhs.text;
  out << YAML::Key << "tolerance" << YAML::Value << num(L.tolerance);
  if (L.tolerance != L.tolerance_asked)
    out << YAML::Comment(fmt::format("float32: raised from {}", num(L.tolerance_asked)));
  out << YAML::Key << "max_iters" << YAML::Value << L.max_iters;
  out << YAML::Key << "check_every" << YAML::Value << L.check_every;
  if (L.omega_auto) {
    out << YAML::Key << "omega" << YAML::Value << "auto";
    if (L.omega > 0)  // resolved (solvers' prepare_case)
      out << YAML::Comment(fmt::format("{}{}", num(L.omega), L.method == "sor" ? "" : "; sor only"));
  } else
    out << YAML::Key << "omega" << YAML::Value << num(L.omega);
  out << YAML::Key << "remove_mean" << YAML::Value << L.remove_mean;
  if (L.time_block > 0) out << YAML::Key << "time_block" << YAML::Value << L.time_block;
  out << YAML::EndMap;
}

void emit_output(YAML::Emitter& out, const OutputSpec& o) {
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dir" << YAML::Value << o.dir;
  out << YAML::Key << "every" << YAML::Value << o.every;
  out << YAML::Key << "check_every" << YAML::Value << o.check_every;
  out << YAML::Key << "formats" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  if (o.vtk) out << "vtk";
  if (o.hdf5) out << "hdf5";
  out << YAML::EndSeq;
  out << YAML::Key << "checkpoint_every" << YAML::Value << o.checkpoint_every;
  out << YAML::EndMap;
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
  c.grid_lengths = read_grid(top, c.grid);
  read_grid_ranks(top, c);
  c.boundary = read_boundary(top, c.parameters, c.grid);
  set_spacing(c.grid, c.grid_lengths);
  if (c.workload == Workload::Raymarch)
    raymarch_case::read_raymarch(top, c, base_dir, c.raymarch);
  else
    read_initial(top, c.parameters, base_dir, c.grid, c.initial);
  if (c.workload == Workload::Stencil)
    read_stencil(top, c.grid, c.stencil);
  else if (c.workload == Workload::Laplace)
    read_laplace(top, c, c.laplace);
  else if (c.workload == Workload::Heat)
    read_heat(top, c.parameters, c.grid, c.precision, c.heat);
  if (c.workload != Workload::Raymarch) raymarch_case::read_render(top, c, c.render);
  read_output(top, c.name, c.output);
  c.resolved_yaml = emit_resolved(c);
  return c;
}

}  // namespace

// True when the points have star5's offsets in its order on the 2D grid g,
// or star7's on the 3D grid g (whatever the weights): the stencils the
// temporally blocked passes run (ops/time_block.hpp).
bool star_order(const std::vector<StencilPoint>& pts, const Grid& g) {
  if (g.ndim != 2 && g.ndim != 3) return false;
  const std::vector<StencilPoint> star = star_points(preset_def(g.ndim == 2 ? "star5" : "star7"), g);
  if (pts.size() != star.size()) return false;
  for (std::size_t t = 0; t < pts.size(); ++t)
    for (int ax = 0; ax < 3; ++ax)
      if (pts[t].d[ax] != star[t].d[ax]) return false;
  return true;
}

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
      out << YAML::Key << name << YAML::Value << num(value);
    out << YAML::EndMap;
  }
  emit_grid(out, c.grid, c.grid_lengths, c.ranks);
  if (c.workload != Workload::Raymarch) {
    emit_initial(out, c.initial);
    emit_boundary(out, c);
  }
  if (c.workload == Workload::Stencil)
    emit_stencil(out, c.stencil);
  else if (c.workload == Workload::Laplace)
    emit_laplace(out, c.laplace);
  else if (c.workload == Workload::Raymarch)
    raymarch_case::emit(out, "raymarch", c.raymarch, false);
  else
    emit_heat(out, c.heat);
  if (c.render.enabled) raymarch_case::emit(out, "render", c.render, true);
  emit_output(out, c.output);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Case load_case_text(const std::string& text, const std::string& label,
                    const std::vector<std::string>& overrides, const std::string& base_dir) {
  YAML::Node root = parse_document(text, label);
  Sources src(label);
  src.set_root(root);
  apply_overrides(root, overrides, src);
  return read_case(root, src, base_dir.empty() ? fs::path(".") : fs::path(base_dir));
}

Case load_case(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw CaseError({path, 0, 0}, "", "cannot read case file: it is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw CaseError({path, 0, 0}, "",
                    std::string("cannot read case file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw CaseError({path, 0, 0}, "",
                    std::string("cannot read case file: ") + std::strerror(errno));
  const fs::path dir = fs::path(path).parent_path();
  return load_case_text(text.str(), path, overrides, dir.empty() ? "." : dir.string());
}

int time_block_asked(const Case& c) {
  switch (c.workload) {
    case Workload::Heat: return c.heat.time_block;
    case Workload::Stencil: return c.stencil.time_block;
    case Workload::Laplace: return c.laplace.time_block;
    default: return 0;
  }
}

}  // namespace gf
