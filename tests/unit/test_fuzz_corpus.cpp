// Replays the fuzzer's corpus (tests/fuzz/corpus, kept in git) through the
// case loader in every build, so that what the fuzzer once found stays fixed
// without clang: under make test's ASan + UBSan build too.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fuzz/fuzz_input.hpp"

namespace fs = std::filesystem;

TEST_CASE("every input of the fuzz corpus loads or is a CaseError", "[case][fuzz]") {
  const fs::path corpus = fs::path(GF_SOURCE_DIR) / "tests/fuzz/corpus";
  int inputs = 0, loaded = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    INFO(entry.path().string());
    bool ok = false;
    REQUIRE_NOTHROW(ok = gf::fuzz::load_input(bytes.str(), GF_TEST_DATA_DIR "/bad_cases"));
    loaded += ok;
    ++inputs;
  }
  CHECK(inputs > 100);
  CHECK(loaded > 0);  // the corpus holds cases that load, not only errors
}
