// The text of a case (io/case_text.hpp): UTF-8, one YAML document.
#include "io/case_text.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

namespace gf::case_text {

namespace {

SourceLoc file_loc(const std::string& label, const YAML::Mark& m) {
  if (m.is_null()) return {label, 0, 0};
  return {label, m.line + 1, m.column + 1};
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

}  // namespace

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


}  // namespace gf::case_text
