// The output: section (SPEC §3): the folder, the output, NaN-check and
// checkpoint cadence, the formats and the compression of the .vti files and
// of fields.h5; echoed in the resolved case.
#include "io/case_sections.hpp"

namespace gf::case_sections {

namespace {

void read_formats(const Value& v, OutputSpec& o) {
  const std::string expected = "expected a non-empty list of " + schema::join(schema::kFormats);
  if (!v.node().IsSequence() || v.node().size() == 0) v.fail(expected + ", got " + v.describe());
  o.vtk = o.hdf5 = false;
  for (const Value& item : v.list()) {
    const std::string f = item.choice(schema::kFormats);
    (f == "vtk" ? o.vtk : o.hdf5) = true;
  }
}

// none, lz4, zlib, or lz4:L / zlib:L with a level L from 1 to 9 (the
// btrfs/zstd way of naming a method and its level in one word).
io::Compression read_compression(const Value& v) {
  const std::string expected =
      "expected none, lz4 or zlib, or lz4:L or zlib:L with a level L from 1 (fastest) to 9 "
      "(smallest)";
  if (!v.node().IsScalar()) v.fail(expected + ", got " + v.describe());
  const std::string& text = v.node().Scalar();
  if (const auto c = io::parse_compression(text)) return *c;
  const std::string name = text.substr(0, text.find(':'));
  if (name == "none") v.fail("none takes no level, got " + v.describe());
  std::string msg = expected + ", got " + v.describe();
  const bool known = std::find(std::begin(schema::kCompressions), std::end(schema::kCompressions),
                               name) != std::end(schema::kCompressions);
  if (!known)
    if (auto near = schema::nearest(name, schema::kCompressions); !near.empty())
      msg += fmt::format("; did you mean '{}'?", near);
  v.fail(msg);
}

// none, zlib or zlib:L: HDF5's built-in shuffle + deflate; lz4 is refused
// with the reason (no built-in HDF5 filter: h5py and ParaView need a plugin).
io::Compression read_hdf5_compression(const Value& v) {
  const std::string expected =
      "expected none or zlib, or zlib:L with a level L from 1 (fastest) to 9 (smallest)";
  if (!v.node().IsScalar()) v.fail(expected + ", got " + v.describe());
  const std::string& text = v.node().Scalar();
  if (const auto c = io::parse_hdf5_compression(text)) return *c;
  const std::string name = text.substr(0, text.find(':'));
  if (name == "none") v.fail("none takes no level, got " + v.describe());
  if (name == "lz4")
    v.fail(expected + ", got " + v.describe() +
           "; LZ4 is no built-in HDF5 filter (h5py and ParaView would need a plugin to read it)");
  std::string msg = expected + ", got " + v.describe();
  const std::string_view methods[] = {"none", "zlib"};
  if (name == "gzip" || name == "deflate")  // h5py's and HDF5's names of the same filter
    msg += "; did you mean 'zlib'?";
  else if (name != "zlib")
    if (auto near = schema::nearest(name, methods); !near.empty())
      msg += fmt::format("; did you mean '{}'?", near);
  v.fail(msg);
}

}  // namespace

void read_output(const Map& top, const std::string& name, OutputSpec& o) {
  o.dir = "out/" + name;
  if (!top.has("output")) return;
  const Map m = top.get("output").map(schema::kOutputKeys);
  if (m.has("dir")) {
    const Value v = m.get("dir");
    o.dir = v.text();
    if (o.dir.empty()) v.fail("expected a folder path, got nothing");
  }
  if (m.has("every")) o.every = m.get("every").integer(0);
  if (m.has("check_every")) o.check_every = m.get("check_every").integer(1);
  if (m.has("formats")) read_formats(m.get("formats"), o);
  if (m.has("compression")) o.compression = read_compression(m.get("compression"));
  if (m.has("hdf5_compression"))
    o.hdf5_compression = read_hdf5_compression(m.get("hdf5_compression"));
  if (m.has("checkpoint_every")) {
    const Value v = m.get("checkpoint_every");
    o.checkpoint_every = v.integer(0);
  }
}

void emit_output(YAML::Emitter& out, const OutputSpec& o) {
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dir" << YAML::Value << o.dir;
  out << YAML::Key << "every" << YAML::Value << o.every;
  out << YAML::Key << "check_every" << YAML::Value << o.check_every;
  out << YAML::Key << "formats" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  if (o.vtk) out << "vtk";
  if (o.hdf5) out << "hdf5";
  out << YAML::EndSeq;
  out << YAML::Key << "compression" << YAML::Value << io::to_string(o.compression);
  out << YAML::Key << "hdf5_compression" << YAML::Value << io::to_string(o.hdf5_compression);
  out << YAML::Key << "checkpoint_every" << YAML::Value << o.checkpoint_every;
  out << YAML::EndMap;
}

}  // namespace gf::case_sections
