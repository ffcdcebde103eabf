// output.compression (docs/cases.md): how the .vti files' appended data is
// compressed; output.hdf5_compression: how fields.h5's datasets are (none,
// or zlib: HDF5's shuffle + deflate filters, io/h5_chunks.hpp).
#pragma once
#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace gf::io {

struct Compression {
  enum class Method { None, Lz4, Zlib };
  Method method = Method::Lz4;
  // VTK's scale, 1 (fastest) to 9 (smallest); for lz4 VTK makes it LZ4's
  // acceleration 10 - level. Not used by none.
  int level = 9;

  bool operator==(const Compression&) const = default;
};

// The default level of each method (docs/performance.md: measured, with the
// block size of vtk_compress.hpp).
inline int default_level(Compression::Method m) { return m == Compression::Method::Zlib ? 1 : 9; }

inline std::string_view method_name(Compression::Method m) {
  return m == Compression::Method::None ? "none" : m == Compression::Method::Lz4 ? "lz4" : "zlib";
}

// "none", "lz4:9", "zlib:1": what a case file says, level written out.
inline std::string to_string(const Compression& c) {
  if (c.method == Compression::Method::None) return "none";
  return fmt::format("{}:{}", method_name(c.method), c.level);
}

// "none", "lz4", "zlib", "lz4:L", "zlib:L" (L a digit 1 to 9); nothing when
// the text is none of them.
inline std::optional<Compression> parse_compression(std::string_view text) {
  const std::string_view name = text.substr(0, text.find(':'));
  Compression c;
  if (name == "none")
    c.method = Compression::Method::None;
  else if (name == "lz4")
    c.method = Compression::Method::Lz4;
  else if (name == "zlib")
    c.method = Compression::Method::Zlib;
  else
    return std::nullopt;
  c.level = default_level(c.method);
  if (name.size() == text.size()) return c;
  const std::string_view level = text.substr(name.size() + 1);
  if (c.method == Compression::Method::None || level.size() != 1 || level[0] < '1' ||
      level[0] > '9')
    return std::nullopt;
  c.level = level[0] - '0';
  return c;
}

// output.hdf5_compression: "none", "zlib" or "zlib:L" (L 1 to 9), HDF5's
// built-in filters only (lz4 would need a plugin to be read); nothing else.
inline std::optional<Compression> parse_hdf5_compression(std::string_view text) {
  auto c = parse_compression(text);
  if (!c || c->method == Compression::Method::Lz4) return std::nullopt;
  return c;
}

}  // namespace gf::io
