#include "io/case_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <unordered_set>

namespace gf::schema {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string_view nearest(std::string_view word, Keys known) {
  const std::string w = lower(word);
  std::string_view best;
  std::size_t best_d = SIZE_MAX;
  for (std::string_view k : known) {
    const std::size_t d = edit_distance(w, lower(k));
    // Short names are one typo apart at most, or everything would match.
    const std::size_t limit = k.size() <= 3 ? 1 : 2;
    if (d <= limit && (d < w.size() || d == 0) && d < best_d) {
      best = k;
      best_d = d;
    }
  }
  return best;
}

std::string join(Keys words) {
  std::string s;
  for (std::string_view w : words) {
    if (!s.empty()) s += ", ";
    s += w;
  }
  return s;
}

Keys known_keys(std::string_view section) {
  struct Entry {
    std::string_view section;
    Keys keys;
  };
  static const Entry table[] = {
      {"", kTopKeys},           {"grid", kGridKeys},       {"initial", kInitialKeys},
      {"initial.file", kInitialFileKeys}, {"boundary", kBoundaryKeys}, {"heat", kHeatKeys},
      {"heat.solver", kSolverKeys}, {"wave", kWaveKeys}, {"pde", kPdeKeys},   {"output", kOutputKeys},
      {"stencil", kStencilKeys}, {"laplace", kLaplaceKeys}, {"raymarch.volume", kVolumeKindKeys}};
  for (const Entry& e : table)
    if (e.section == section) return e.keys;
  return {};
}

// ---- Sources --------------------------------------------------------------

void Sources::add_command_line(const YAML::Node& node) {
  command_line_.push_back(node);
  if (node.IsMap()) {
    for (const auto& kv : node) {
      add_command_line(kv.first);
      add_command_line(kv.second);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) add_command_line(item);
  }
}

bool Sources::from_command_line(const YAML::Node& node) const {
  return std::any_of(command_line_.begin(), command_line_.end(),
                     [&](const YAML::Node& n) { return n.is(node); });
}

SourceLoc Sources::loc(const YAML::Node& node) const {
  if (!node.IsDefined()) return {label_, 0, 0};
  const YAML::Mark m = node.Mark();
  // Nodes built while applying overrides have no mark; the root of an empty
  // file has none either but still belongs to the file.
  if (m.is_null())
    return root_.IsDefined() && node.is(root_) ? SourceLoc{label_, 1, 1} : command_line_loc();
  if (from_command_line(node)) return command_line_loc();
  return {label_, m.line + 1, m.column + 1};
}

// ---- Value ----------------------------------------------------------------

SourceLoc Value::loc() const { return src_->loc(where_); }

void Value::fail(const std::string& message) const { throw CaseError(loc(), key_, message); }

std::string Value::describe() const {
  if (!present() || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a map";
  if (node_.IsSequence()) return "a list";
  return "'" + shown(node_.Scalar()) + "'";
}

double Value::number() const {
  double v = 0;
  if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, v)) {
    // yaml-cpp refuses 1e400 like 'abc'; say what is wrong with it.
    const std::string& t = node_.IsScalar() ? node_.Scalar() : std::string();
    char* end = nullptr;
    const double big = t.empty() ? 0.0 : std::strtod(t.c_str(), &end);
    if (!t.empty() && end && *end == '\0' && std::isinf(big) &&
        t.find_first_of("iI") == std::string::npos)
      fail("expected a finite number, got " + describe());
    fail("expected a number, got " + describe());
  }
  if (!std::isfinite(v)) fail("expected a finite number, got " + describe());
  return v;
}

double Value::positive() const {
  const double v = number();
  if (!(v > 0)) fail(fmt::format("expected a number > 0, got {}", shown(node_.Scalar())));
  return v;
}

std::int64_t Value::integer(std::int64_t min) const {
  long long v = 0;
  if (!node_.IsScalar() || !YAML::convert<long long>::decode(node_, v))
    fail("expected an integer, got " + describe());
  if (v < min) fail(fmt::format("expected an integer ≥ {}, got {}", min, v));
  return v;
}

std::string Value::text() const {
  if (!node_.IsScalar()) fail("expected a text value, got " + describe());
  // A quoted YAML string may write them as escapes ("a\0b", "dir\n"); texts
  // name files and folders, where they cut or split the name.
  const std::string& s = node_.Scalar();
  if (std::any_of(s.begin(), s.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; }))
    fail("expected text without control characters, got " + describe());
  return s;
}

std::string Value::choice(Keys allowed) const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
  }
  std::string msg = fmt::format("expected one of {}, got {}", join(allowed), describe());
  if (node_.IsScalar()) {
    if (auto near = nearest(node_.Scalar(), allowed); !near.empty())
      msg += fmt::format("; did you mean '{}'?", near);
  }
  fail(msg);
}

Expr Value::expr() const {
  if (!node_.IsScalar()) fail("expected an expression (text or number), got " + describe());
  return Expr{node_.Scalar(), loc(), key_};
}

std::vector<Value> Value::list() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe());
  std::vector<Value> out;
  for (std::size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(*src_, node_[i], fmt::format("{}[{}]", key_, i));
  return out;
}

std::vector<std::pair<Value, Value>> Value::items() const {
  if (!node_.IsMap()) fail("expected a map of keys, got " + describe());
  std::vector<std::pair<Value, Value>> out;
  std::unordered_set<std::string> seen;  // a hash, not a scan of `out`: maps may be long
  const std::string prefix = key_.empty() ? "" : key_ + ".";
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar())
      Value(*src_, kv.first, key_)
          .fail("expected a key name, got " + Value(*src_, kv.first, "").describe());
    const std::string& name = kv.first.Scalar();
    Value k(*src_, kv.first, prefix + shown(name, 40));
    if (!seen.insert(name).second) k.fail(fmt::format("duplicate key '{}'", shown(name, 40)));
    Value v(*src_, kv.second, prefix + shown(name, 40));
    if (kv.second.IsNull()) v.locate_at(kv.first);
    out.emplace_back(std::move(k), std::move(v));
  }
  return out;
}

Map Value::map(Keys known) const { return Map(*this, known); }

// ---- Map ------------------------------------------------------------------

Map::Map(const Value& self, Keys known) : self_(self), items_(self.items()) {
  for (const auto& [k, v] : items_) {
    const std::string& name = k.node().Scalar();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    if (auto near = nearest(name, known); !near.empty())
      k.fail(fmt::format("unknown key; did you mean '{}'?", near));
    k.fail("unknown key; expected one of " + join(known));
  }
}

const std::pair<Value, Value>* Map::find(std::string_view key) const {
  for (const auto& item : items_)
    if (item.first.node().Scalar() == key) return &item;
  return nullptr;
}

Value Map::get(std::string_view key) const {
  if (const auto* item = find(key)) return item->second;
  return Value(self_.sources(), YAML::Node(YAML::NodeType::Undefined), path(key));
}

Value Map::require(std::string_view key) const {
  if (const auto* item = find(key)) return item->second;
  self_.fail(fmt::format("missing required key '{}'", key));
}

Value Map::key_node(std::string_view key) const {
  if (const auto* item = find(key)) return item->first;
  return get(key);
}

std::vector<std::string> Map::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) out.push_back(item.first.node().Scalar());
  return out;
}

std::string Map::path(std::string_view key) const {
  return self_.key().empty() ? std::string(key) : self_.key() + "." + std::string(key);
}

}  // namespace gf::schema
