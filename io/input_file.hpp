// Reading the files a run is given (the case file, files it names, the files
// a restart continues) without trusting what the path names: a device such as
// /dev/zero never ends, a pipe may never open, a huge file fills memory.
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

namespace gf::io {

// Why `p` cannot be read as an input file, or "" when it can be opened: a
// regular file, or a link to one. Never opens it (opening a pipe blocks).
std::string input_file_problem(const std::filesystem::path& p);

// The whole content of the regular file `p`, of at most `max_bytes`. Throws
// IoError whose what() is the reason alone ("it is a folder", "it is 5000000
// bytes; at most 4194304 (4.0 MiB)", "Permission denied"), for the caller to name the file.
std::string read_input_file(const std::filesystem::path& p,
                            std::uintmax_t max_bytes = std::numeric_limits<std::uintmax_t>::max());

}  // namespace gf::io
