// Helpers shared by the case-loader tests.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "io/case.hpp"
#include "solvers/prepare.hpp"

namespace gf::test {

// Loads a case from text, labelled "case.yaml" in messages, and prepares it
// as the app does (solvers/prepare.hpp: the auto SOR ω, f's balance).
inline Case load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return prepare_case(load_case_text(text, "case.yaml", overrides));
}

// The whole message of the CaseError that loading and preparing `text`
// throws (and that it means exit 2), or "(no error)".
inline std::string error_of(const std::string& text,
                            const std::vector<std::string>& overrides = {}) {
  try {
    load(text, overrides);
  } catch (const CaseError& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "(no error)";
}

}  // namespace gf::test
