// The initial: section (SPEC §3): a value, an expression of x, y, z and the
// parameters, or a dataset of an HDF5 file (checked: readable, the grid's
// shape); echoed in the resolved case.
#include "io/case_sections.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "io/expression.hpp"
#include "io/input_file.hpp"
#include "io/output.hpp"

namespace gf::case_sections {

namespace {

namespace fs = std::filesystem;

// Why the file cannot be read, or "" when it can.
std::string unreadable(const fs::path& p) {
  // First without opening it: a pipe would block the open.
  if (std::string why = io::input_file_problem(p); !why.empty()) return why;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::strerror(errno);
  return "";
}

// The dataset must exist and hold one value per grid point, slowest axis
// first ([nz][ny][nx]), as fields.h5 stores them.
void check_initial_dataset(const Value& dataset, const InitialSpec& init, const Grid& g) {
  std::vector<std::int64_t> shape;
  try {
    shape = io::h5_dataset_shape(init.path, init.dataset);
  } catch (const IoError& e) {
    dataset.fail(e.what());
  }
  std::vector<std::int64_t> want;
  for (int a = g.ndim - 1; a >= 0; --a) want.push_back(g.n[a]);
  if (shape != want) {
    auto str = [](const std::vector<std::int64_t>& v) {
      std::string s = "[";
      for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
      return s + "]";
    };
    dataset.fail(fmt::format("dataset '{}' has shape {}; the grid needs {} (slowest axis first)",
                             init.dataset, str(shape), str(want)));
  }
}

void read_initial_file(const Value& v, const fs::path& base_dir, const Grid& grid,
                       InitialSpec& init) {
  const Map m = v.map(schema::kInitialFileKeys);
  const Value path = m.require("path");
  const Value dataset = m.require("dataset");
  const std::string rel = path.text();
  if (rel.empty()) path.fail("expected a file path, got nothing");
  init.dataset = dataset.text();
  if (init.dataset.empty())
    dataset.fail("expected an HDF5 dataset path like /steps/000100/u, got nothing");
  // Relative to the case file, as a user moving a case folder expects; kept
  // absolute so that resolved_yaml still names it from anywhere.
  fs::path p(rel);
  if (p.is_relative()) p = base_dir / p;
  p = fs::absolute(p).lexically_normal();
  if (const std::string why = unreadable(p); !why.empty())
    path.fail(fmt::format("cannot read '{}': {}", p.string(), why));
  init.kind = InitialSpec::Kind::File;
  init.path = p.string();
  check_initial_dataset(dataset, init, grid);
}

}  // namespace

void read_initial(const Map& top, const Params& params, const fs::path& base_dir,
                  const Grid& grid, InitialSpec& init) {
  if (!top.has("initial")) return;  // value 0
  read_field_values(top.get("initial"), params, base_dir, grid, init);
}

void read_field_values(const Value& at, const Params& params, const fs::path& base_dir,
                       const Grid& grid, InitialSpec& init) {
  const Map m = at.map(schema::kInitialKeys);
  const std::vector<std::string> kinds = m.keys();
  if (kinds.empty()) m.self().fail("missing required key 'value', 'expr' or 'file'");
  if (kinds.size() > 1) fail_only_one(m, kinds[1], "'value', 'expr' and 'file'");
  const Value v = m.get(kinds[0]);
  init.loc = v.loc();
  if (kinds[0] == "value") {
    init.kind = InitialSpec::Kind::Value;
    init.value = v.number();
  } else if (kinds[0] == "expr") {
    init.kind = InitialSpec::Kind::Expr;
    init.expr = v.expr();
    check_expression(init.expr, params);
  } else {
    read_initial_file(v, base_dir, grid, init);
  }
}

void emit_initial(YAML::Emitter& out, const InitialSpec& init) {
  out << YAML::Key << "initial" << YAML::Value << YAML::BeginMap;
  switch (init.kind) {
    case InitialSpec::Kind::Value:
      out << YAML::Key << "value" << YAML::Value << num(init.value);
      break;
    case InitialSpec::Kind::Expr:
      out << YAML::Key << "expr" << YAML::Value << init.expr.text;
      break;
    case InitialSpec::Kind::File:
      out << YAML::Key << "file" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
          << "path" << YAML::Value << init.path << YAML::Key << "dataset" << YAML::Value
          << init.dataset << YAML::EndMap;
      break;
  }
  out << YAML::EndMap;
}

}  // namespace gf::case_sections
