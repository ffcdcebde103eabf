// Internal to io/: the known keys of each case section, and the small readers
// that check one YAML node while remembering where it came from (file:line:col
// or the command line) and its dotted key path, so every fault becomes a
// CaseError that points at the right place.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/case.hpp"

namespace gf::schema {

using Keys = std::span<const std::string_view>;

// Known keys per section, in the order the reference documents them. They
// drive both the unknown-key check and the "did you mean" suggestion.
inline constexpr std::string_view kTopKeys[] = {
    "name",     "workload", "precision", "device",  "parameters", "grid",     "initial",
    "boundary", "heat",     "output",    "laplace", "stencil",    "raymarch", "render",
    "wave",     "pde"};
inline constexpr std::string_view kGridKeys[] = {"dims", "extent", "spacing", "origin", "ranks"};
inline constexpr std::string_view kInitialKeys[] = {"value", "expr", "file"};
inline constexpr std::string_view kInitialFileKeys[] = {"path", "dataset"};
inline constexpr std::string_view kBoundaryKeys[] = {"default", "x",  "y",  "z",  "x-",
                                                     "x+",      "y-", "y+", "z-", "z+"};
inline constexpr std::string_view kBcKeys[] = {"type", "value", "gradient"};
inline constexpr std::string_view kHeatKeys[] = {"alpha", "scheme", "dt",    "steps",
                                                 "t_end", "source", "solver", "time_block"};
inline constexpr std::string_view kSolverKeys[] = {"tolerance", "max_iters", "operator",
                                                   "preconditioner"};
inline constexpr std::string_view kWaveKeys[] = {"c", "dt", "steps", "t_end", "velocity", "source"};
inline constexpr std::string_view kPdeKeys[] = {"fields", "coefficients", "equations", "integrator",
                                                "dt",     "steps",        "t_end"};
inline constexpr std::string_view kPdeFieldKeys[] = {"initial", "boundary"};
inline constexpr std::string_view kOutputKeys[] = {
    "dir", "every", "check_every", "formats", "compression", "hdf5_compression",
    "checkpoint_every"};
inline constexpr std::string_view kStencilKeys[] = {"preset", "points", "form", "coeff", "steps", "time_block"};
inline constexpr std::string_view kLaplaceKeys[] = {"method",      "rhs",   "tolerance",  "max_iters",
                                                    "check_every", "omega", "remove_mean",
                                                    "time_block",  "cycle", "preconditioner",
                                                    "operator",    "precision"};

// The "give only one of" groups: a section (dotted path) and its keys, of
// which a case gives at most one. An override of one key of a group replaces
// the file's partner (io/case.cpp); the readers report two given together.
struct OneOfGroup {
  std::string_view section;
  Keys keys;
};
inline constexpr std::string_view kDurationKeys[] = {"steps", "t_end"};
inline constexpr std::string_view kStencilSourceKeys[] = {"preset", "points"};
inline constexpr std::string_view kGridLengthKeys[] = {"extent", "spacing"};
inline constexpr std::string_view kVolumeKindKeys[] = {"expr", "sdf", "file"};
inline constexpr OneOfGroup kOneOfGroups[] = {
    {"heat", kDurationKeys},        {"wave", kDurationKeys},        {"pde", kDurationKeys},
    {"stencil", kStencilSourceKeys}, {"initial", kInitialKeys},
    {"grid", kGridLengthKeys},      {"raymarch.volume", kVolumeKindKeys}};

// The known keys of the section at a dotted path ("" is the top level), or
// an empty span for a section this table does not list.
Keys known_keys(std::string_view section);

// Allowed values of the keys that take a name.
// Each workload has a section of the same name, which no other workload takes.
inline constexpr std::string_view kWorkloads[] = {"heat", "laplace", "stencil", "raymarch", "wave",
                                                  "pde"};
// The workloads this version runs; the others are known names that fail kindly.
inline constexpr std::string_view kAvailableWorkloads[] = {"heat", "laplace", "stencil", "raymarch",
                                                           "wave", "pde"};
inline constexpr std::string_view kLaplaceMethods[] = {"jacobi", "sor", "cg", "fft", "multigrid"};
inline constexpr std::string_view kPdeIntegrators[] = {"euler", "ssprk2", "ssprk3", "rk4"};
inline constexpr std::string_view kMgCycles[] = {"v", "f"};
inline constexpr std::string_view kLaplacePreconditioners[] = {"none", "jacobi", "multigrid"};
inline constexpr std::string_view kHeatPreconditioners[] = {"auto", "none", "jacobi", "multigrid"};
inline constexpr std::string_view kLaplaceOperators[] = {"matrix-free", "csr"};
inline constexpr std::string_view kLaplacePrecisions[] = {"uniform", "mixed"};
inline constexpr std::string_view kPrecisions[] = {"float32", "float64"};
inline constexpr std::string_view kSchemes[] = {"explicit", "implicit", "crank-nicolson"};
inline constexpr std::string_view kBcTypes[] = {"dirichlet", "neumann", "periodic", "absorbing"};
inline constexpr std::string_view kFormats[] = {"vtk", "hdf5"};
// output.compression's methods; lz4 and zlib take a level 1-9 (io/compression.hpp).
inline constexpr std::string_view kCompressions[] = {"none", "lz4", "zlib"};
inline constexpr std::string_view kStencilPresets[] = {"star5", "star7", "star9",
                                                       "star13", "box9", "box27"};
inline constexpr std::string_view kStencilForms[] = {"update", "replace"};
// Largest |offset| of a stencil point on any axis (SPEC §1).
inline constexpr int kMaxStencilRadius = 4;

// Levenshtein distance (insert, delete, substitute: 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The known word nearest to `word` (case-insensitive), or "" when none is
// close enough to be a likely typo.
std::string_view nearest(std::string_view word, Keys known);
// "a, b, c"
std::string join(Keys words);

// Why `name` cannot be a parameter, or "" when it can (implemented beside the
// muparser code in expression.cpp, which knows the built-in names).
std::string parameter_name_problem(const std::string& name);

// Where nodes came from: the case file, or KEY=VALUE overrides, whose nodes
// are located as "command line".
class Sources {
 public:
  explicit Sources(std::string label) : label_(std::move(label)) {}
  const std::string& label() const { return label_; }
  void set_root(const YAML::Node& root) { root_.reset(root); }
  // Marks `node` and every node below it as written on the command line.
  void add_command_line(const YAML::Node& node);
  SourceLoc loc(const YAML::Node& node) const;

 private:
  bool from_command_line(const YAML::Node& node) const;
  std::string label_;
  YAML::Node root_;
  std::vector<YAML::Node> command_line_;
};

inline SourceLoc command_line_loc() { return {"command line", 0, 0}; }

class Map;

// One node with its dotted key path: reads it as one type, or throws a
// CaseError at the node ("expected a number, got 'abc'").
class Value {
 public:
  Value(const Sources& src, YAML::Node node, std::string key)
      : src_(&src), node_(std::move(node)), key_(std::move(key)) {
    where_.reset(node_);
  }
  Value(const Value&) = default;
  // YAML::Node's assignment rebinds the node inside the tree, not the handle:
  // forbid it so that no Value can edit the case by accident.
  Value& operator=(const Value&) = delete;
  // An empty value (`alpha:`) carries the mark of the next token, so faults
  // about it point at its key instead.
  void locate_at(const YAML::Node& key_node) { where_.reset(key_node); }

  bool present() const { return node_.IsDefined(); }
  const YAML::Node& node() const { return node_; }
  const std::string& key() const { return key_; }
  const Sources& sources() const { return *src_; }
  SourceLoc loc() const;
  [[noreturn]] void fail(const std::string& message) const;
  // 'abc', a list, a map, nothing: how a wrong value is named in messages.
  std::string describe() const;

  double number() const;                         // a finite number
  double positive() const;                       // a number > 0
  std::int64_t integer(std::int64_t min) const;  // an integer ≥ min
  std::string text() const;                      // a scalar as written
  std::string choice(Keys allowed) const;        // one of `allowed`
  Expr expr() const;                             // an expression or a number
  std::vector<Value> list() const;               // elements keyed "key[i]"
  // Key/value pairs of a map, checking that keys are names and unique.
  std::vector<std::pair<Value, Value>> items() const;
  Map map(Keys known) const;

 private:
  const Sources* src_;
  YAML::Node node_;
  std::string key_;
  YAML::Node where_;
};

// A map whose keys were all checked against the section's known keys.
class Map {
 public:
  Map(const Value& self, Keys known);
  const Value& self() const { return self_; }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The value under `key`; not present() when the map lacks it.
  Value get(std::string_view key) const;
  // The value under `key`, or a CaseError at the map when it is missing.
  Value require(std::string_view key) const;
  // The key node itself, for faults about the key rather than its value.
  Value key_node(std::string_view key) const;
  // The keys present, in file order (overrides last).
  std::vector<std::string> keys() const;
  std::string path(std::string_view key) const;

 private:
  const std::pair<Value, Value>* find(std::string_view key) const;
  Value self_;
  std::vector<std::pair<Value, Value>> items_;
};

}  // namespace gf::schema
