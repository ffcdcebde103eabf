// One fuzz input, as the libFuzzer target (fuzz_case.cpp) and the corpus
// replay test (tests/unit/test_fuzz_corpus.cpp) both read it: a case file's
// text, optionally followed by KEY=VALUE overrides each after a NUL byte
// ("workload: heat\n...\0heat.steps=10\0grid.dims=[8]").
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "io/case.hpp"

namespace gf::fuzz {

struct Input {
  std::string text;
  std::vector<std::string> overrides;
};

inline Input split_input(std::string_view all) {
  Input in;
  const std::size_t nul = all.find('\0');
  in.text = std::string(all.substr(0, nul));
  for (std::size_t at = nul; at != std::string_view::npos && at < all.size();) {
    const std::size_t next = all.find('\0', at + 1);
    in.overrides.emplace_back(
        all.substr(at + 1, next == std::string_view::npos ? next : next - at - 1));
    at = next;
  }
  return in;
}

// Loads the input (relative initial.file paths against `base_dir`) and, when
// it loads, its resolved case, which must load too. Every fault must be a
// CaseError; anything else escapes to the caller as a bug. Returns whether
// the input loaded.
inline bool load_input(std::string_view all, const std::string& base_dir) {
  const Input in = split_input(all);
  try {
    const Case c = load_case_text(in.text, "fuzz.yaml", in.overrides, base_dir);
    load_case_text(c.resolved_yaml, "resolved.yaml", {}, "/");
    return true;
  } catch (const CaseError&) {
    return false;
  }
}

}  // namespace gf::fuzz
