#include "io/input_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

#include "core/error.hpp"

namespace gf::io {

namespace fs = std::filesystem;

namespace {

std::string mib(std::uintmax_t bytes) {
  return fmt::format("{:.1f} MiB", double(bytes) / double(1 << 20));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::string input_file_problem(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);  // follows links
  if (ec) return ec.message();
  if (st.type() == fs::file_type::directory) return "it is a folder";
  if (st.type() != fs::file_type::regular)
    return "it is not a regular file (a device, a pipe or a socket)";
  return "";
}

std::string read_input_file(const fs::path& p, std::uintmax_t max_bytes) {
  if (std::string why = input_file_problem(p); !why.empty()) throw IoError(why);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(p, ec);
  if (!ec && size > max_bytes)
    throw IoError(fmt::format("it is {} bytes; at most {} ({})", size, max_bytes, mib(max_bytes)));
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(p.c_str(), "rb"));
  if (!f) throw IoError(std::strerror(errno));
  std::string text;
  char buf[65536];
  // Stops past max_bytes even if the file grows while it is read.
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f.get())) > 0;) {
    text.append(buf, n);
    if (text.size() > max_bytes)
      throw IoError(fmt::format("it is more than {} bytes; at most {} ({})", max_bytes, max_bytes,
                                mib(max_bytes)));
  }
  if (std::ferror(f.get())) throw IoError(std::strerror(errno));
  return text;
}

}  // namespace gf::io
