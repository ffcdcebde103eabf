// checkpoint.h5: one HDF5 file, written whole under a temporary name and
// renamed. Root attributes: format, format_version, gridforge_version,
// workload, precision, dims/spacing/origin (x y z order, ndim entries),
// step, time. /case: the resolved case YAML (a string dataset). /state: one
// scalar attribute per named solver value. /fields/<name>: grid-sized
// datasets, slowest axis first, in the run's precision.
#include "io/checkpoint.hpp"
#include "io/case_text.hpp"

#include <cmath>
#include <fmt/format.h>
#include <hdf5.h>
#include <yaml-cpp/yaml.h>

#include <cstring>

#include "core/error.hpp"
#include "io/h5.hpp"
#include "io/output.hpp"
#include "io/workload.hpp"

namespace gf::io {

using namespace h5;

namespace {

constexpr const char* kFormat = "gridforge checkpoint";
constexpr std::int64_t kFormatVersion = 1;

Grid grid_of(const Checkpoint& ck) {
  Grid g;
  g.ndim = ck.ndim;
  g.n = ck.dims;
  return g;
}

void write_string_dataset(hid_t parent, const char* name, const std::string& text) {
  H5Handle type = h5_own(H5Tcopy(H5T_C_S1), H5Tclose, "cannot create string type");
  h5_ok(H5Tset_size(type.get(), text.size() + 1), "cannot size string type");
  h5_ok(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "cannot set string padding");
  H5Handle space = h5_own(H5Screate(H5S_SCALAR), H5Sclose, "cannot create dataspace");
  H5Handle ds = h5_own(H5Dcreate2(parent, name, type.get(), space.get(), H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose, fmt::format("cannot create dataset '{}'", name));
  h5_ok(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.c_str()),
        fmt::format("cannot write dataset '{}'", name));
}

std::string read_string(hid_t obj, bool is_attr, const std::string& what) {
  H5Handle type = is_attr ? h5_own(H5Aget_type(obj), H5Tclose, "cannot read " + what)
                          : h5_own(H5Dget_type(obj), H5Tclose, "cannot read " + what);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0)
    throw H5Failure(what + " is not a fixed-length string");
  std::string s(H5Tget_size(type.get()), '\0');
  H5Handle mem = h5_own(H5Tcopy(H5T_C_S1), H5Tclose, "cannot create string type");
  h5_ok(H5Tset_size(mem.get(), s.size()), "cannot size string type");
  h5_ok(is_attr ? H5Aread(obj, mem.get(), s.data())
                : H5Dread(obj, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()),
        "cannot read " + what);
  s.resize(std::strlen(s.c_str()));
  return s;
}

bool has_attr(hid_t obj, const char* name) { return H5Aexists(obj, name) > 0; }

H5Handle open_attr(hid_t obj, const std::string& name) {
  return h5_own(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose,
                fmt::format("no attribute '{}'", name));
}

std::string attr_string(hid_t obj, const std::string& name) {
  H5Handle a = open_attr(obj, name);
  return read_string(a.get(), true, fmt::format("attribute '{}'", name));
}

template <class V>
V attr_scalar(hid_t obj, const std::string& name, hid_t type) {
  H5Handle a = open_attr(obj, name);
  V v{};
  h5_ok(H5Aread(a.get(), type, &v), fmt::format("cannot read attribute '{}'", name));
  return v;
}

template <class V>
std::vector<V> attr_vector(hid_t obj, const std::string& name, hid_t type) {
  H5Handle a = open_attr(obj, name);
  H5Handle space = h5_own(H5Aget_space(a.get()), H5Sclose, "cannot read attribute " + name);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 1 || n > 3) throw H5Failure(fmt::format("attribute '{}' has {} values", name, n));
  std::vector<V> v(static_cast<std::size_t>(n));
  h5_ok(H5Aread(a.get(), type, v.data()), fmt::format("cannot read attribute '{}'", name));
  return v;
}

std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  h5_ok(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names),
        "cannot list a group");
  return names;
}

void write_file(const fs::path& tmp, const Checkpoint& ck) {
  H5Handle file = h5_own(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                         H5Fclose, "cannot create file");
  const hid_t f = file.get();
  h5_attr(f, "format", std::string(kFormat));
  h5_attr(f, "format_version", kFormatVersion);
  h5_attr(f, "gridforge_version", ck.version);
  h5_attr(f, "workload", ck.workload);
  h5_attr(f, "precision", std::string(to_string(ck.precision)));
  const std::vector<hsize_t> nd{hsize_t(ck.ndim)};
  h5_attr(f, "dims", H5T_NATIVE_INT64, nd, ck.dims.data());
  h5_attr(f, "spacing", H5T_NATIVE_DOUBLE, nd, ck.spacing.data());
  h5_attr(f, "origin", H5T_NATIVE_DOUBLE, nd, ck.origin.data());
  h5_attr(f, "step", ck.step);
  h5_attr(f, "time", ck.time);
  write_string_dataset(f, "case", ck.case_yaml);
  {
    H5Handle state = h5_own(H5Gcreate2(f, "state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            H5Gclose, "cannot create group '/state'");
    for (const auto& [name, v] : ck.reals) h5_attr(state.get(), name.c_str(), v);
    for (const auto& [name, v] : ck.integers) h5_attr(state.get(), name.c_str(), v);
  }
  H5Handle fields = h5_own(H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                           H5Gclose, "cannot create group '/fields'");
  const auto dims = h5_shape(grid_of(ck));
  H5Handle space = h5_own(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose,
                          "cannot create dataspace");
  const std::size_t bytes = std::size_t(ck.dims[0] * ck.dims[1] * ck.dims[2]) *
                            bytes_of(ck.precision);
  for (const auto& [name, values] : ck.fields) {
    const std::string what = fmt::format("dataset '/fields/{}'", name);
    if (values.size() != bytes)
      throw H5Failure(fmt::format("{}: {} bytes for {} expected", what, values.size(), bytes));
    H5Handle ds = h5_own(H5Dcreate2(fields.get(), name.c_str(), h5_native(ck.precision),
                                    space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         H5Dclose, "cannot create " + what);
    h5_ok(H5Dwrite(ds.get(), h5_native(ck.precision), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                   values.data()),
          "cannot write " + what);
  }
  fields.close();
  if (file.close() < 0) throw H5Failure("cannot close the file: " + h5_reason());
}

// Flow-style text of a YAML node: "[64, 64, 64]", "{type: periodic}", "0.5".
std::string show(const YAML::Node& n) {
  if (!n) return "(absent)";
  if (n.IsScalar()) return shown(n.Scalar());
  std::string s;
  if (n.IsSequence()) {
    for (const auto& item : n) s += (s.empty() ? "" : ", ") + show(item);
    return "[" + s + "]";
  }
  if (n.IsMap()) {
    for (const auto& kv : n)
      s += (s.empty() ? "" : ", ") + kv.first.Scalar() + ": " + show(kv.second);
    return "{" + s + "}";
  }
  return "null";
}

// Keys a restart may change: these, and the keys of the workload's section
// its entry names (io/workload.cpp).
bool may_differ(const std::string& key) {
  static const char* const keys[] = {"name", "device", "initial", "output", "render", "grid.ranks"};
  for (const char* k : keys)
    if (key == k) return true;
  for (const WorkloadInfo& w : workloads())
    for (std::string_view k : w.restart_may_change)
      if (key.size() == w.name.size() + 1 + k.size() && key.starts_with(w.name) &&
          key[w.name.size()] == '.' && key.ends_with(k))
        return true;
  return false;
}

// The first key (dotted) where a and b differ, formatted; "" when none.
std::string yaml_difference(const YAML::Node& a, const YAML::Node& b, const std::string& key,
                            const std::string& b_is = "the case") {
  if (!key.empty() && may_differ(key)) return "";
  const auto differs = [&] {
    return fmt::format("{} {} in the checkpoint, {} in {}", key.empty() ? "case" : key,
                       show(a), show(b), b_is);
  };
  if (!a || !b || a.Type() != b.Type()) return (!a && !b) ? "" : differs();
  if (a.IsScalar()) return a.Scalar() == b.Scalar() ? "" : differs();
  if (a.IsSequence()) {
    if (a.size() != b.size()) return differs();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!yaml_difference(a[i], b[i], key + "[" + std::to_string(i) + "]", b_is).empty())
        return differs();
    return "";
  }
  if (a.IsMap()) {
    std::vector<std::string> names;
    for (const auto& kv : a) names.push_back(kv.first.Scalar());
    for (const auto& kv : b)
      if (!a[kv.first.Scalar()]) names.push_back(kv.first.Scalar());
    for (const std::string& n : names) {
      const std::string sub = key.empty() ? n : key + "." + n;
      std::string d = yaml_difference(a[n], b[n], sub, b_is);
      if (!d.empty()) return d;
    }
  }
  return "";
}

std::string list(const auto& v, int n) {
  std::string s;
  for (int a = 0; a < n; ++a) s += (a ? ", " : "") + fmt::format("{}", v[a]);
  return "[" + s + "]";
}

}  // namespace

std::string checkpoint_mismatch(const Checkpoint& ck, const Case& c) {
  const auto differs = [](const std::string& key, const std::string& a, const std::string& b) {
    return fmt::format("{} {} in the checkpoint, {} in the case", key, a, b);
  };
  if (ck.workload != to_string(c.workload))
    return differs("workload", ck.workload, to_string(c.workload));
  if (ck.precision != c.precision)
    return differs("precision", to_string(ck.precision), to_string(c.precision));
  const Grid& g = c.grid;
  const int nd = std::max(ck.ndim, g.ndim);
  bool dims = ck.ndim != g.ndim, spacing = false, origin = false;
  for (int a = 0; a < nd; ++a) {
    dims = dims || ck.dims[a] != g.n[a];
    spacing = spacing || ck.spacing[a] != g.h[a];
    origin = origin || ck.origin[a] != g.origin[a];
  }
  if (dims) return differs("grid.dims", list(ck.dims, ck.ndim), list(g.n, g.ndim));
  if (spacing) return differs("grid spacing", list(ck.spacing, ck.ndim), list(g.h, g.ndim));
  if (origin) return differs("grid.origin", list(ck.origin, ck.ndim), list(g.origin, g.ndim));
  YAML::Node a, b;
  try {
    // The file's text is checked as a case file's is: an alias loop or aliases
    // of aliases there would make yaml_difference recurse for ever.
    a = case_text::parse_document(ck.case_yaml, "case");
    b = YAML::Load(c.resolved_yaml);
  } catch (const CaseError& e) {
    return fmt::format("the case in the checkpoint cannot be read: {}", e.what());
  } catch (const YAML::Exception& e) {
    return fmt::format("the case in the checkpoint cannot be read: {}", e.what());
  }
  if (std::string d = yaml_difference(a, b, ""); !d.empty()) return d;
  const WorkloadInfo& w = workload_info(c.workload);
  if (w.state_fields)
    for (const std::string& name : w.state_fields(c)) {
      bool has = false;
      for (const auto& [n, v] : ck.fields) has = has || n == name;
      if (!has) return fmt::format("the checkpoint has no field '{}' (/fields/{})", name, name);
    }
  const std::int64_t last = w.time_steps ? w.steps(c) : ck.step;
  if (ck.step < last)
    for (const auto& [name, v] : ck.integers)
      if (name == "short_last_step" && v != 0)
        return fmt::format("the checkpoint is the end of a run whose last step was shortened to "
                           "land on its t_end (t = {}): steps of dt cannot continue it; restart "
                           "from an earlier checkpoint",
                           ck.time);
  if (ck.step > last)
    return fmt::format("the checkpoint is at step {}, past the case's last step {} (raise {}.{})",
                       ck.step, last, w.name, w.end_key(c));
  return "";
}

std::string case_difference(const std::string& checkpoint_case, const std::string& other_case,
                            const std::string& other_is) {
  try {
    return yaml_difference(case_text::parse_document(checkpoint_case, "case"),
                           case_text::parse_document(other_case, "case"), "", other_is);
  } catch (const CaseError& e) {
    return fmt::format("a case that cannot be read: {}", e.what());
  } catch (const YAML::Exception& e) {
    return fmt::format("a case that cannot be read: {}", e.what());
  }
}

double Checkpoint::real(const std::string& name) const {
  for (const auto& [n, v] : reals)
    if (n == name) return v;
  throw IoError(fmt::format("checkpoint: no state value '{}'", name));
}

std::int64_t Checkpoint::integer(const std::string& name) const {
  for (const auto& [n, v] : integers)
    if (n == name) return v;
  throw IoError(fmt::format("checkpoint: no state value '{}'", name));
}

const std::vector<unsigned char>& Checkpoint::field(const std::string& name) const {
  for (const auto& [n, v] : fields)
    if (n == name) return v;
  throw IoError(fmt::format("checkpoint: no field '{}'", name));
}

void write_checkpoint(const fs::path& path, const Checkpoint& ck) {
  const fs::path tmp = path.parent_path() / fmt::format(".{}.tmp", path.filename().string());
  H5Quiet quiet;
  try {
    write_file(tmp, ck);
  } catch (const H5Failure& e) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), e.what()));
  }
  start_writeback(tmp);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

Checkpoint read_checkpoint(const fs::path& path) {
  H5Quiet quiet;
  H5Handle file = open_for_reading(path.string());  // IoError: missing, not HDF5
  const hid_t f = file.get();
  Checkpoint ck;
  try {
    if (!has_attr(f, "format") || attr_string(f, "format") != kFormat)
      throw H5Failure("not a gridforge checkpoint (no attribute format = 'gridforge checkpoint')");
    const auto fv = attr_scalar<std::int64_t>(f, "format_version", H5T_NATIVE_INT64);
    if (fv != kFormatVersion)
      throw H5Failure(fmt::format("checkpoint format version {}; this gridforge reads version {}",
                                  fv, kFormatVersion));
    ck.version = attr_string(f, "gridforge_version");
    ck.workload = attr_string(f, "workload");
    const std::string prec = attr_string(f, "precision");
    if (prec == "float32")
      ck.precision = Precision::Float32;
    else if (prec == "float64")
      ck.precision = Precision::Float64;
    else
      throw H5Failure(fmt::format("unknown precision '{}'", prec));
    const auto dims = attr_vector<std::int64_t>(f, "dims", H5T_NATIVE_INT64);
    const auto spacing = attr_vector<double>(f, "spacing", H5T_NATIVE_DOUBLE);
    const auto origin = attr_vector<double>(f, "origin", H5T_NATIVE_DOUBLE);
    ck.ndim = int(dims.size());
    if (spacing.size() != dims.size() || origin.size() != dims.size())
      throw H5Failure("dims, spacing and origin have different lengths");
    for (int a = 0; a < ck.ndim; ++a) {
      ck.dims[a] = dims[a];
      ck.spacing[a] = spacing[a];
      ck.origin[a] = origin[a];
    }
    if (ck.ndim < 1 || ck.ndim > 3) throw H5Failure(fmt::format("dims has {} axes", ck.ndim));
    for (int a = 0; a < ck.ndim; ++a)
      if (ck.dims[a] < 1 || !std::isfinite(ck.spacing[a]) || !(ck.spacing[a] > 0) ||
          !std::isfinite(ck.origin[a]))
        throw H5Failure(fmt::format("axis {}: dims {}, spacing {}, origin {}", a, ck.dims[a],
                                    ck.spacing[a], ck.origin[a]));
    ck.step = attr_scalar<std::int64_t>(f, "step", H5T_NATIVE_INT64);
    ck.time = attr_scalar<double>(f, "time", H5T_NATIVE_DOUBLE);
    if (ck.step < 0) throw H5Failure(fmt::format("step {} is negative", ck.step));
    if (!std::isfinite(ck.time)) throw H5Failure(fmt::format("time {} is not finite", ck.time));
    {
      H5Handle ds = open_dataset(f, path.string(), "/case");
      ck.case_yaml = read_string(ds.get(), false, "dataset '/case'");
    }
    {
      H5Handle state = h5_own(H5Gopen2(f, "state", H5P_DEFAULT), H5Gclose, "no group '/state'");
      H5O_info_t info;
      h5_ok(H5Oget_info(state.get(), &info), "cannot read '/state'");
      for (hsize_t i = 0; i < info.num_attrs; ++i) {
        H5Handle a = h5_own(H5Aopen_by_idx(state.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                           H5P_DEFAULT, H5P_DEFAULT),
                            H5Aclose, "cannot read '/state'");
        std::string name(std::size_t(H5Aget_name(a.get(), 0, nullptr)), '\0');
        H5Aget_name(a.get(), name.size() + 1, name.data());
        H5Handle type = h5_own(H5Aget_type(a.get()), H5Tclose, "cannot read '/state'");
        if (H5Tget_class(type.get()) == H5T_INTEGER) {
          std::int64_t v = 0;
          h5_ok(H5Aread(a.get(), H5T_NATIVE_INT64, &v), "cannot read /state/" + name);
          ck.integers.emplace_back(name, v);
        } else {
          double v = 0;
          h5_ok(H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v), "cannot read /state/" + name);
          ck.reals.emplace_back(name, v);
        }
      }
    }
    H5Handle fields = h5_own(H5Gopen2(f, "fields", H5P_DEFAULT), H5Gclose, "no group '/fields'");
    std::int64_t count = 1;
    for (int a = 0; a < ck.ndim; ++a) count *= ck.dims[a];
    for (const std::string& name : link_names(fields.get())) {
      H5Handle ds = open_dataset(f, path.string(), "/fields/" + name);
      if (std::int64_t n = [&] {
            std::int64_t m = 1;
            for (auto d : shape_of(ds.get())) m *= d;
            return m;
          }();
          n != count)
        throw H5Failure(fmt::format("dataset '/fields/{}' has {} values; dims say {}", name, n,
                                    count));
      // In the checkpoint's precision (HDF5 converts, should the file's type differ).
      std::vector<unsigned char> v(static_cast<std::size_t>(count) * bytes_of(ck.precision));
      h5_ok(H5Dread(ds.get(), h5_native(ck.precision), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
            "cannot read dataset '/fields/" + name + "'");
      // A run checkpoints only a state that passed its NaN/Inf check.
      const auto first_bad = [&]<class T>(const T* x) -> std::int64_t {
        for (std::int64_t q = 0; q < count; ++q)
          if (!std::isfinite(x[q])) return q;
        return -1;
      };
      const std::int64_t bad =
          ck.precision == Precision::Float32
              ? first_bad(reinterpret_cast<const float*>(v.data()))
              : first_bad(reinterpret_cast<const double*>(v.data()));
      if (bad >= 0)
        throw H5Failure(fmt::format("dataset '/fields/{}' holds a NaN or Inf (value {} of {})",
                                    name, bad, count));
      ck.fields.emplace_back(name, std::move(v));
    }
  } catch (const H5Failure& e) {
    throw IoError(fmt::format("'{}': {}", path.string(), e.what()));
  }
  return ck;
}

}  // namespace gf::io
