// The text of a case (io/case_text.hpp): UTF-8, one YAML document.
#include "io/case_text.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gf::case_text {

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


namespace {

// line:col (1-based, columns in characters) of a byte offset in valid UTF-8 before it.
std::pair<int, int> line_col(std::string_view text, std::size_t at) {
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
  return {line, col};
}

// Where faults are reported: a case file (label:line:col), or an override
// (the command line, with its dotted key).
struct Place {
  std::string label;
  std::string key;
  bool in_file = true;
  CaseError at(const YAML::Mark& m, const std::string& message) const {
    if (!in_file || m.is_null()) return CaseError({label, 0, 0}, key, message);
    return CaseError({label, m.line + 1, m.column + 1}, key, message);
  }
  CaseError at_offset(std::string_view text, std::size_t off, const std::string& message) const {
    if (!in_file) return CaseError({label, 0, 0}, key, message);
    const auto [line, col] = line_col(text, off);
    return CaseError({label, line, col}, key, message);
  }
};

// What is wrong with the characters of `text`, and where: not UTF-8, or a
// control character, which YAML does not allow in its text (tab and line
// breaks aside; U+0085 is a line break too). yaml-cpp passes them through or
// reports them a line late.
std::optional<std::pair<std::size_t, std::string>> character_problem(std::string_view text,
                                                                          bool in_file) {
  if (const auto bad = invalid_utf8_at(text))
    return std::pair{*bad, fmt::format("not UTF-8 text (byte 0x{:02x}){}",
                                       static_cast<unsigned char>(text[*bad]),
                                       in_file ? "; save the case file as UTF-8" : "")};
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    unsigned cp = c;
    if (c == 0xC2 && i + 1 < text.size()) cp = static_cast<unsigned char>(text[i + 1]);  // U+0080..U+00BF
    const bool control = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F ||
                         (c == 0xC2 && cp >= 0x80 && cp <= 0x9F && cp != 0x85);
    if (control)
      return std::pair{i, fmt::format("control character U+{:04X} in the text; YAML allows only "
                                      "tab and line breaks",
                                      cp)};
  }
  return std::nullopt;
}

// One pass of yaml-cpp's event parser over the text, before any node is
// built: where each document starts, and how big and deep the tree would be
// once its aliases are followed. yaml-cpp 0.7 builds an alias as the node it
// names, so an alias inside its own anchor (`&a [*a]`) makes a loop that
// recursion never leaves, and ten aliases of ten aliases ... (the "billion
// laughs") a tree that grows tenfold a level; its own nesting guard (500
// levels) fails with "bad file" and no place. Each fault is reported at the
// node or alias that makes it.
class Scan final : public YAML::EventHandler {
 public:
  Scan(std::string_view text, const Place& place) : text_(text), place_(place) {}
  std::vector<YAML::Mark> roots;

  void OnDocumentStart(const YAML::Mark&) override {
    first_ = true;
    open_.clear();
    anchors_.clear();
    total_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                const std::string&) override {
    leaf(m, a);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
    root(m);
    const auto it = anchors_.find(a);
    if (it == anchors_.end()) return;  // yaml-cpp refuses an unknown anchor itself
    if (!it->second.closed)
      throw place_.at(m, fmt::format("alias {} is inside the node it names (a loop)", alias(m)));
    add(m, it->second.nodes, it->second.height, alias(m));
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::Mark mark;
    YAML::anchor_t anchor;
    std::int64_t nodes;  // this node and all below it, aliases followed
    int height;          // levels from this node down, aliases followed
  };
  struct Anchored {
    std::int64_t nodes = 0;
    int height = 0;
    bool closed = false;
  };

  void root(const YAML::Mark& m) {
    if (first_) roots.push_back(m);
    first_ = false;
  }
  // `*name` as written at an alias.
  std::string alias(const YAML::Mark& m) const {
    if (m.pos < 0 || std::size_t(m.pos) >= text_.size()) return "*";
    std::size_t end = std::size_t(m.pos) + 1;
    while (end < text_.size() && std::string_view(" \t\r\n,[]{}").find(text_[end]) == std::string_view::npos)
      ++end;
    return shown(text_.substr(std::size_t(m.pos), end - std::size_t(m.pos)), 40);
  }
  // A node of `nodes` values and `height` levels in the open collection.
  void add(const YAML::Mark& m, std::int64_t nodes, int height, const std::string& via) {
    total_ += nodes;
    if (total_ > kMaxNodes)
      throw place_.at(m, via.empty()
                             ? fmt::format("the case holds more than {} values", kMaxNodes)
                             : fmt::format("alias {} makes the case hold more than {} values (an "
                                           "alias counts as the values it repeats)",
                                           via, kMaxNodes));
    if (int(open_.size()) + height > kMaxDepth)
      throw place_.at(m, via.empty()
                             ? fmt::format("nested more than {} levels deep", kMaxDepth)
                             : fmt::format("alias {} nests the case more than {} levels deep",
                                           via, kMaxDepth));
    if (!open_.empty()) {
      open_.back().nodes += nodes;
      open_.back().height = std::max(open_.back().height, height + 1);
    }
  }
  void leaf(const YAML::Mark& m, YAML::anchor_t a) {
    root(m);
    add(m, 1, 1, "");
    if (a) anchors_[a] = {1, 1, true};
  }
  void open(const YAML::Mark& m, YAML::anchor_t a) {
    root(m);
    add(m, 1, 1, "");  // the collection itself; what it holds is added as it comes
    if (!open_.empty()) open_.back().nodes -= 1;  // counted again when it closes
    open_.push_back({m, a, 1, 1});
    if (a) anchors_[a] = {};
  }
  void close() {
    if (open_.empty()) return;
    const Open o = open_.back();
    open_.pop_back();
    if (o.anchor) anchors_[o.anchor] = {o.nodes, o.height, true};
    if (!open_.empty()) {
      open_.back().nodes += o.nodes;
      open_.back().height = std::max(open_.back().height, o.height + 1);
    }
  }

  std::string_view text_;
  const Place& place_;
  bool first_ = false;
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  std::int64_t total_ = 0;
};

// The documents of `text`, counted without YAML::LoadAll: yaml-cpp 0.7 (Debian
// 12) loops there for ever, allocating, on a token no node can start with,
// such as a stray ',' at the top level (jbeder/yaml-cpp#1040, fixed upstream
// by #1319 in 0.9): each call returns the same empty document again. Found by
// the fuzzer (tests/fuzz/); a document that starts where the last one did
// is that token, reported as a syntax error instead. `syntax` prefixes
// yaml-cpp's own messages.
std::vector<YAML::Mark> checked_roots(const std::string& text, const Place& place,
                                      const std::string& syntax) {
  if (text.size() > kMaxBytes)
    throw place.at(YAML::Mark::null_mark(),
                   fmt::format("{:.1f} MiB of text; a case may hold at most {} MiB",
                               double(text.size()) / (1 << 20), kMaxBytes >> 20));
  if (const auto bad = character_problem(text, place.in_file))
    throw place.at_offset(text, bad->first, bad->second);
  std::istringstream in(text);
  YAML::Parser parser(in);
  Scan scan(text, place);
  try {
    while (parser.HandleNextDocument(scan)) {
      const auto& r = scan.roots;
      if (r.size() >= 2 && r[r.size() - 1].pos == r[r.size() - 2].pos) {
        const YAML::Mark m = r.back();
        const char c = m.pos >= 0 && std::size_t(m.pos) < text.size() ? text[m.pos] : '?';
        throw place.at(m, fmt::format("{}unexpected '{}'", syntax, shown(std::string(1, c))));
      }
    }
  } catch (const YAML::Exception& e) {
    throw place.at(e.mark, syntax + e.msg);
  }
  return scan.roots;
}

}  // namespace

YAML::Node parse_document(const std::string& text, const std::string& label) {
  const Place place{label, "", true};
  const std::vector<YAML::Mark> roots = checked_roots(text, place, "YAML syntax error: ");
  if (roots.size() > 1)
    throw place.at(roots[1],
                   fmt::format("the file holds {} YAML documents; a case is one", roots.size()));
  YAML::Node doc;
  try {
    doc = YAML::Load(text);  // the one document (no LoadAll: see checked_roots)
  } catch (const YAML::Exception& e) {
    throw place.at(e.mark, "YAML syntax error: " + e.msg);
  }
  // An empty file is an empty map, so that it reports its first missing key.
  if (roots.empty() || doc.IsNull()) return YAML::Node(YAML::NodeType::Map);
  return doc;
}

YAML::Node parse_value(const std::string& text, const std::string& key) {
  const Place place{"command line", key, false};
  checked_roots(text, place, "cannot read the value as YAML: ");
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw place.at(e.mark, "cannot read the value as YAML: " + e.msg);
  }
}

}  // namespace gf::case_text
