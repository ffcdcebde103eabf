// Internal to io/: the text of a case before yaml-cpp builds its nodes. The
// loader, not yaml-cpp, checks the characters, counts the documents and
// bounds the size and depth of the tree
// (docs/design.md, "Reliability checks"), then loads the one document.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace gf::case_text {

// Limits on a case's text (docs/cases.md, "Limits"): its size, its nesting
// and its values, each alias counted as the values it repeats.
inline constexpr std::size_t kMaxBytes = std::size_t(4) << 20;
inline constexpr int kMaxDepth = 64;
inline constexpr std::int64_t kMaxNodes = 100'000;

// Where `text` stops being UTF-8 (the offset of the first bad byte), if it does.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

// The one YAML document of a case file's text, checked; an empty file is an
// empty map. Faults are CaseErrors at label:line:col.
YAML::Node parse_document(const std::string& text, const std::string& label);

// The value of a KEY=VALUE override, checked as a case's text is; faults are
// CaseErrors on the command line at `key`.
YAML::Node parse_value(const std::string& text, const std::string& key);

}  // namespace gf::case_text
