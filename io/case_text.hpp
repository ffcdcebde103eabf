// Internal to io/: the text of a case before yaml-cpp builds its nodes. The
// loader, not yaml-cpp, checks the encoding and counts the documents (see
// docs/design.md, "Reliability checks"), then loads the one document.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace gf::case_text {

// Where `text` stops being UTF-8 (the offset of the first bad byte), if it does.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

// The one YAML document of a case file's text, checked; an empty file is an
// empty map. Faults are CaseErrors at label:line:col.
YAML::Node parse_document(const std::string& text, const std::string& label);

}  // namespace gf::case_text
