// HDF5 helpers shared by the writers of io/ (fields.h5, checkpoint.h5):
// owned ids, quiet error handling, attributes, readers. Internal to io/.
#pragma once
#include <hdf5.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/precision.hpp"
#include "grid/grid.hpp"

namespace gf::io::h5 {

namespace fs = std::filesystem;

// ------------------------------------------------------------- HDF5 basics

// Owns one HDF5 id and closes it with the matching H5Xclose.
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  H5Handle(H5Handle&& o) noexcept
      : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
  H5Handle& operator=(H5Handle&& o) noexcept {
    if (this != &o) {
      close();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      closer_ = o.closer_;
    }
    return *this;
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle() { close(); }

  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  // Returns the close status: closing a file is where its last writes land.
  herr_t close() {
    herr_t rc = 0;
    if (id_ >= 0) rc = closer_(id_);
    id_ = H5I_INVALID_HID;
    return rc;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};


// The library prints its whole error stack to stderr by default; we report
// one message through IoError instead. Restores the previous handler.
class H5Quiet {
 public:
  H5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~H5Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  H5Quiet(const H5Quiet&) = delete;
  H5Quiet& operator=(const H5Quiet&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The innermost entry of the error stack is the one that says what went wrong
// ("errno = 28, error message = 'No space left on device'").
inline std::string h5_reason() {
  std::string desc;
  auto take_first = [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
    if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_first, &desc);
  H5Eclear2(H5E_DEFAULT);
  const std::string key = "error message = '";
  if (auto p = desc.find(key); p != std::string::npos) {
    auto q = desc.find('\'', p + key.size());
    return desc.substr(p + key.size(), q - p - key.size());
  }
  return desc.empty() ? "HDF5 error" : desc;
}

// An HDF5 call failed; the message says which, the caller adds the file.
struct H5Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline H5Handle h5_own(hid_t id, H5Handle::Closer closer, std::string_view what) {
  if (id < 0) throw H5Failure(fmt::format("{}: {}", what, h5_reason()));
  return H5Handle(id, closer);
}

inline void h5_ok(herr_t rc, std::string_view what) {
  if (rc < 0) throw H5Failure(fmt::format("{}: {}", what, h5_reason()));
}

inline hid_t h5_native(Precision p) {
  return p == Precision::Float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

// Slowest axis first: [nz][ny][nx], [ny][nx] or [nx].
inline std::vector<hsize_t> h5_shape(const Grid& g) {
  std::vector<hsize_t> dims;
  for (int a = g.ndim - 1; a >= 0; --a) dims.push_back(hsize_t(g.n[a]));
  return dims;
}

inline void h5_attr(hid_t obj, const char* name, hid_t type, const std::vector<hsize_t>& dims,
             const void* data) {
  H5Handle space = dims.empty() ? h5_own(H5Screate(H5S_SCALAR), H5Sclose, "cannot create dataspace")
                                : h5_own(H5Screate_simple(int(dims.size()), dims.data(), nullptr),
                                         H5Sclose, "cannot create dataspace");
  H5Handle attr = h5_own(H5Acreate2(obj, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                         H5Aclose, fmt::format("cannot create attribute '{}'", name));
  h5_ok(H5Awrite(attr.get(), type, data), fmt::format("cannot write attribute '{}'", name));
}

inline void h5_attr(hid_t obj, const char* name, double v) {
  h5_attr(obj, name, H5T_NATIVE_DOUBLE, {}, &v);
}

inline void h5_attr(hid_t obj, const char* name, std::int64_t v) {
  h5_attr(obj, name, H5T_NATIVE_INT64, {}, &v);
}

// Fixed-length, NUL-terminated ASCII: what h5py and h5dump show as a plain string.
inline void h5_attr(hid_t obj, const char* name, const std::string& v) {
  H5Handle type = h5_own(H5Tcopy(H5T_C_S1), H5Tclose, "cannot create string type");
  h5_ok(H5Tset_size(type.get(), v.size() + 1), "cannot size string type");
  h5_ok(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "cannot set string padding");
  h5_attr(obj, name, type.get(), {}, v.c_str());
}


inline H5Handle open_for_reading(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw IoError(fmt::format("cannot open HDF5 file '{}': no such file", path));
  // A device or a pipe: H5Fopen would block on a pipe, or read a device.
  if (fs::exists(path, ec) && !fs::is_directory(path, ec) && !fs::is_regular_file(path, ec))
    throw IoError(fmt::format("cannot open HDF5 file '{}': it is not a regular file (a device, a "
                              "pipe or a socket)", path));
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    std::string reason = h5_reason();
    if (H5Fis_hdf5(path.c_str()) <= 0) reason = "not an HDF5 file";
    H5Eclear2(H5E_DEFAULT);
    throw IoError(fmt::format("cannot open HDF5 file '{}': {}", path, reason));
  }
  return H5Handle(id, H5Fclose);
}

// "; '/steps' holds 000000, 000100, ... (11 names)": what the group that
// should have held a missing name holds instead, for the error.
inline std::string members_hint(hid_t file, const std::string& group) {
  H5Handle g(H5Gopen2(file, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g) {
    H5Eclear2(H5E_DEFAULT);
    return "";
  }
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* n, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(n);
    return 0;
  };
  if (H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return "";
  }
  if (names.empty()) return fmt::format("; '{}' is empty", group);
  std::string list;
  const std::size_t shown = names.size() <= 12 ? names.size() : 10;
  for (std::size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + names[i];
  if (shown < names.size())
    list += fmt::format(", ..., {} ({} names)", names.back(), names.size());
  return fmt::format("; '{}' holds {}", group, list);
}

// H5Dopen on "/a/b" with "/a" missing fails deep in the library; walking the
// links first gives the plain "no dataset" message, with what the last group
// that exists holds (the steps of a fields.h5, the fields of a step).
inline H5Handle open_dataset(hid_t file, const std::string& path, const std::string& dataset) {
  const std::string name = dataset.starts_with('/') ? dataset : "/" + dataset;
  for (std::size_t p = name.find('/', 1);; p = name.find('/', p + 1)) {
    const std::string prefix = name.substr(0, p);
    if (prefix.size() > 1 && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      const std::size_t up = prefix.rfind('/');
      throw IoError(fmt::format("no dataset '{}' in '{}'{}", name, path,
                                members_hint(file, up == 0 ? "/" : prefix.substr(0, up))));
    }
    if (p == std::string::npos) break;
  }
  hid_t id = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (id < 0) {
    H5Eclear2(H5E_DEFAULT);
    throw IoError(fmt::format("'{}' in '{}' is not a dataset", name, path));
  }
  return H5Handle(id, H5Dclose);
}

inline std::vector<std::int64_t> shape_of(hid_t ds) {
  H5Handle space(H5Dget_space(ds), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(std::max(rank, 0));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return std::vector<std::int64_t>(dims.begin(), dims.end());
}

}  // namespace gf::io::h5
