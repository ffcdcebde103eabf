// The field time series of SPEC §4 (VTK .vti + .pvd, HDF5 fields.h5 +
// fields.xdmf) and the HDF5 dataset readers.
//
// Atomicity (a file appears whole or not at all):
// - each .vti is written by VTK to a hidden sibling ".<file>.tmp" and renamed;
// - <name>.pvd and fields.xdmf are small texts rewritten whole after every
//   output step through write_text_atomic (also ".<file>.tmp" + rename);
// - fields.h5 grows during the run, so it lives under ".fields.h5.partial",
//   flushed after every step, and is closed and renamed to fields.h5 by
//   finish() or by the destructor: a run that fails for any other reason
//   keeps the steps it finished. When writing fields.h5 itself fails (disk
//   full), its content cannot be trusted: the partial file and the
//   fields.xdmf pointing at it are removed and the error is thrown.
#include "io/input_file.hpp"
#include "io/output.hpp"

#include <fmt/format.h>
#include <hdf5.h>
#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataWriter.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/mpi.hpp"
#include "grid/view.hpp"
#include "io/h5.hpp"

namespace gf::io {

using namespace h5;

namespace {

// ---------------------------------------------------------------- text bits

std::string step6(std::int64_t step) { return fmt::format("{:06d}", step); }

// %.17g: times, origins and spacings read back bit for bit.
std::string g17(double v) { return fmt::format("{:.17g}", v); }

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string xml_unescape(std::string_view s) {
  const std::pair<std::string_view, char> entities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&amp;", '&'}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool matched = false;
    for (const auto& [e, c] : entities)
      if (s.substr(i, e.size()) == e) {
        out += c;
        i += e.size();
        matched = true;
        break;
      }
    if (!matched) out += s[i++];
  }
  return out;
}

// Same naming as write_text_atomic: same folder (rename stays atomic),
// hidden (ParaView's file dialog and globbing skip it).
fs::path temp_sibling(const fs::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp", path.filename().string());
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

// Moves a finished temporary into place; removes it when that fails.
void commit_temp(const fs::path& tmp, const fs::path& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    remove_quietly(tmp);
    throw IoError(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

// HDF5 1.10.8 crashes in its atexit handler when it retries closing a file
// whose H5Fclose already failed (disk full: the flush on close fails too).
// Every id we open is closed by H5Handle, so the handler has nothing to do
// for us: it is turned off while the program loads, as it must be before any
// other HDF5 call.
[[maybe_unused]] const bool h5_atexit_off = [] { return H5dont_atexit() >= 0; }();

// Grid metadata per axis, x y z order, ndim entries.
template <class T>
std::vector<T> per_axis(const Grid& g, const std::array<T, 3>& a) {
  return std::vector<T>(a.begin(), a.begin() + g.ndim);
}

void write_root_attributes(hid_t file, const SeriesSpec& spec) {
  const Grid& g = spec.grid;
  const std::vector<hsize_t> nd{hsize_t(g.ndim)};
  const auto dims = per_axis(g, g.n);
  const auto spacing = per_axis(g, g.h);
  const auto origin = per_axis(g, g.origin);
  h5_attr(file, "dims", H5T_NATIVE_INT64, nd, dims.data());
  h5_attr(file, "spacing", H5T_NATIVE_DOUBLE, nd, spacing.data());
  h5_attr(file, "origin", H5T_NATIVE_DOUBLE, nd, origin.data());
  h5_attr(file, "precision", std::string(to_string(spec.precision)));
  h5_attr(file, "gridforge_version", spec.version);
}

// ------------------------------------------------------------- XDMF / PVD

// What one output step holds: enough to list it in the .xdmf.
struct StepRecord {
  std::int64_t step = 0;
  double time = 0;
  std::vector<std::pair<std::string, Precision>> fields;
};

// Values slowest axis first (z y x), as XDMF's CoRectMesh wants them.
std::string zyx(auto value_of) {
  std::string s;
  for (int a = 2; a >= 0; --a) {
    if (!s.empty()) s += ' ';
    s += value_of(a);
  }
  return s;
}

// Every grid is written as a 3DCoRectMesh, missing axes one point thick:
// ParaView 5.11's Xdmf3 reader puts a 2DCoRectMesh in the y-z plane (x = 0),
// so a 2D field would show up rotated against the same field in the .pvd.
// The attribute dimensions match the topology ("1 ny nx"); Xdmf3 reads the
// [ny][nx] dataset into it by element count.
std::string xdmf_step(const Grid& g, const StepRecord& r) {
  const std::string dims = zyx([&](int a) { return std::to_string(g.n[a]); });
  const std::string origin = zyx([&](int a) { return g17(g.origin[a]); });
  const std::string spacing = zyx([&](int a) { return g17(g.h[a]); });
  std::string s = fmt::format(
      "      <Grid Name=\"step_{0}\" GridType=\"Uniform\">\n"
      "        <Time Value=\"{1}\"/>\n"
      "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{2}\"/>\n"
      "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      "          <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" "
      "Precision=\"8\" Format=\"XML\">{3}</DataItem>\n"
      "          <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" "
      "Precision=\"8\" Format=\"XML\">{4}</DataItem>\n"
      "        </Geometry>\n",
      step6(r.step), g17(r.time), dims, origin, spacing);
  for (const auto& [name, prec] : r.fields)
    s += fmt::format(
        "        <Attribute Name=\"{0}\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        "          <DataItem Dimensions=\"{1}\" NumberType=\"Float\" Precision=\"{2}\" "
        "Format=\"HDF\">fields.h5:/steps/{3}/{0}</DataItem>\n"
        "        </Attribute>\n",
        xml_escape(name), dims, bytes_of(prec), step6(r.step));
  return s + "      </Grid>\n";
}

std::string xdmf_text(const SeriesSpec& spec, const std::vector<StepRecord>& steps) {
  std::string s =
      "<?xml version=\"1.0\" ?>\n"
      "<Xdmf Version=\"3.0\">\n"
      "  <Domain>\n" +
      fmt::format("    <Grid Name=\"{}\" GridType=\"Collection\" CollectionType=\"Temporal\">\n",
                  xml_escape(spec.name));
  for (const auto& r : steps) s += xdmf_step(spec.grid, r);
  return s + "    </Grid>\n  </Domain>\n</Xdmf>\n";
}

std::string pvd_text(const std::vector<std::pair<double, std::string>>& datasets) {
  std::string s =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "  <Collection>\n";
  for (const auto& [time, file] : datasets)
    s += fmt::format("    <DataSet timestep=\"{}\" part=\"0\" file=\"{}\"/>\n", g17(time),
                     xml_escape(file));
  return s + "  </Collection>\n</VTKFile>\n";
}

// ------------------------------------------------------------- HDF5 series

// fields.h5 (under its partial name while the run goes on) + fields.xdmf.
class H5Series {
 public:
  explicit H5Series(const SeriesSpec& spec)
      : spec_(spec), final_(spec.dir / "fields.h5"), partial_(spec.dir / ".fields.h5.partial") {
    H5Quiet quiet;
    if (spec.resume_before && !spec.decomp && resume(*spec.resume_before)) return;
    // Parallel restart: rank 0 trims the earlier file alone, then every rank
    // opens it for collective writes.
    if (spec.resume_before && spec.decomp) {
      std::int64_t resumed = 0;
      if (mpi::rank() == 0 && resume(*spec.resume_before)) {
        resumed = 1;
        file_.close();
      }
      if (mpi::broadcast(resumed)) {
        try {
          file_ = h5_own(H5Fopen(partial_.c_str(), H5F_ACC_RDWR, parallel_access().get()),
                         H5Fclose, "cannot open it");
        } catch (const H5Failure& e) {
          throw IoError(fmt::format("cannot continue '{}': {}", partial_.string(), e.what()));
        }
        return;
      }
    }
    try {
      H5Handle fapl = parallel_access();
      file_ = h5_own(H5Fcreate(partial_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
                     "cannot create file");
      write_root_attributes(file_.get(), spec_);
      h5_own(H5Gcreate2(file_.get(), "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
             "cannot create group '/steps'");
      h5_ok(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "cannot flush");
    } catch (const H5Failure& e) {
      abandon();
      throw IoError(fmt::format("cannot write '{}': {}", final_.string(), e.what()));
    }
  }
  H5Series(const H5Series&) = delete;
  H5Series& operator=(const H5Series&) = delete;

  // File access: MPI-IO over every rank when the series is parallel.
  H5Handle parallel_access() const {
    H5Handle fapl = h5_own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create file access");
#if defined(GRIDFORGE_HAVE_MPI) && defined(H5_HAVE_PARALLEL)
    if (spec_.decomp)
      h5_ok(H5Pset_fapl_mpio(fapl.get(), MPI_COMM_WORLD, MPI_INFO_NULL), "cannot set MPI-IO");
#endif
    return fapl;
  }

  void write_step(std::int64_t step, double time, const std::vector<FieldView>& fields) {
    if (!file_)
      throw IoError(fmt::format("cannot write '{}': closed after an earlier error or finish()",
                                final_.string()));
    H5Quiet quiet;
    try {
      write_group(step, time, fields);
      h5_ok(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "cannot flush");
    } catch (const H5Failure& e) {
      abandon();
      remove_quietly(spec_.dir / "fields.xdmf");
      throw IoError(
          fmt::format("cannot write '{}' at step {}: {}", final_.string(), step, e.what()));
    }
    StepRecord r{step, time, {}};
    for (const auto& f : fields) r.fields.emplace_back(f.name, f.precision);
    steps_.push_back(std::move(r));
    write_text_atomic(spec_.dir / "fields.xdmf", xdmf_text(spec_, steps_));
  }

  // Idempotent; after an error there is nothing left to finish.
  void finish() {
    if (!file_) return;
    H5Quiet quiet;
    if (file_.close() < 0) {
      const std::string reason = h5_reason();
      if (mpi::rank() == 0) remove_quietly(partial_);
      throw IoError(fmt::format("cannot write '{}': {}", final_.string(), reason));
    }
    // Parallel: every rank has closed the file before rank 0 renames it.
    if (spec_.decomp) mpi::barrier();
    if (mpi::rank() == 0) commit_temp(partial_, final_);
  }

 private:
  // Restart: continues the fields.h5 of the earlier run (its partial file
  // when that run did not finish, else a copy of fields.h5 under the partial
  // name), without the steps from `before` on. False when there is none.
  bool resume(std::int64_t before) {
    std::error_code ec;
    const bool has_partial = fs::exists(partial_, ec);
    if (!has_partial && !fs::exists(final_, ec)) return false;
    const fs::path& source = has_partial ? partial_ : final_;
    try {
      if (!has_partial) {
        fs::copy_file(final_, partial_, fs::copy_options::overwrite_existing, ec);
        if (ec) throw H5Failure("cannot copy it: " + ec.message());
      }
      file_ = h5_own(H5Fopen(partial_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose,
                     "cannot open it");
      std::vector<std::int64_t> dims(spec_.grid.ndim);
      {
        H5Handle a = h5_own(H5Aopen(file_.get(), "dims", H5P_DEFAULT), H5Aclose,
                            "no attribute 'dims'");
        H5Handle space = h5_own(H5Aget_space(a.get()), H5Sclose, "cannot read 'dims'");
        if (H5Sget_simple_extent_npoints(space.get()) != hssize_t(dims.size()))
          throw H5Failure("it holds fields of another grid");
        h5_ok(H5Aread(a.get(), H5T_NATIVE_INT64, dims.data()), "cannot read 'dims'");
        for (int ax = 0; ax < spec_.grid.ndim; ++ax)
          if (dims[ax] != spec_.grid.n[ax]) throw H5Failure("it holds fields of another grid");
      }
      auto collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      };
      std::vector<std::string> steps;
      {
        H5Handle g = h5_own(H5Gopen2(file_.get(), "/steps", H5P_DEFAULT), H5Gclose,
                            "no group '/steps'");
        h5_ok(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &steps),
              "cannot list '/steps'");
      }
      for (const std::string& name : steps) {
        const std::string path = "/steps/" + name;
        StepRecord r;
        {
          H5Handle g = h5_own(H5Gopen2(file_.get(), path.c_str(), H5P_DEFAULT), H5Gclose,
                              "cannot open " + path);
          H5Handle a = h5_own(H5Aopen(g.get(), "step", H5P_DEFAULT), H5Aclose,
                              "no attribute 'step' on " + path);
          h5_ok(H5Aread(a.get(), H5T_NATIVE_INT64, &r.step), "cannot read " + path);
          H5Handle t = h5_own(H5Aopen(g.get(), "time", H5P_DEFAULT), H5Aclose,
                              "no attribute 'time' on " + path);
          h5_ok(H5Aread(t.get(), H5T_NATIVE_DOUBLE, &r.time), "cannot read " + path);
          if (r.step < before) {
            std::vector<std::string> fields;
            h5_ok(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &fields),
                  "cannot list " + path);
            for (const std::string& f : fields) {
              H5Handle ds = h5_own(H5Dopen2(g.get(), f.c_str(), H5P_DEFAULT), H5Dclose,
                                   "cannot open " + path + "/" + f);
              H5Handle type = h5_own(H5Dget_type(ds.get()), H5Tclose, "cannot read " + path);
              r.fields.emplace_back(f, H5Tget_size(type.get()) == 4 ? Precision::Float32
                                                                     : Precision::Float64);
            }
          }
        }
        if (r.step < before)
          steps_.push_back(std::move(r));
        else
          h5_ok(H5Ldelete(file_.get(), path.c_str(), H5P_DEFAULT), "cannot remove " + path);
      }
      h5_ok(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "cannot flush");
    } catch (const H5Failure& e) {
      file_.close();
      if (!has_partial) remove_quietly(partial_);
      throw IoError(fmt::format("cannot continue '{}': {}", source.string(), e.what()));
    }
    write_text_atomic(spec_.dir / "fields.xdmf", xdmf_text(spec_, steps_));
    return true;
  }

  void write_group(std::int64_t step, double time, const std::vector<FieldView>& fields) {
    const std::string path = "/steps/" + step6(step);
    H5Handle group =
        h5_own(H5Gcreate2(file_.get(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Gclose, fmt::format("cannot create group '{}'", path));
    h5_attr(group.get(), "time", time);
    h5_attr(group.get(), "step", step);
    const auto dims = h5_shape(spec_.grid);
    H5Handle space = h5_own(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose,
                            "cannot create dataspace");
    // Parallel: this rank's owned block, a hyperslab of the file's dataset
    // and of its padded block in memory, written collectively.
    H5Handle mem, file_sel, dxpl;
    if (spec_.decomp) {
      const Decomp& d = *spec_.decomp;
      const Grid lg = d.local_grid();
      const auto start = d.start_of(d.rank), count = d.count_of(d.rank);
      std::vector<hsize_t> mdims, mstart, fstart, cnt;
      for (int a = lg.ndim - 1; a >= 0; --a) {
        mdims.push_back(hsize_t(lg.n[a]));
        mstart.push_back(hsize_t(lg.halo_lo[a]));
        fstart.push_back(hsize_t(start[a]));
        cnt.push_back(hsize_t(count[a]));
      }
      mem = h5_own(H5Screate_simple(int(mdims.size()), mdims.data(), nullptr), H5Sclose,
                   "cannot create dataspace");
      h5_ok(H5Sselect_hyperslab(mem.get(), H5S_SELECT_SET, mstart.data(), nullptr, cnt.data(),
                                nullptr),
            "cannot select the block in memory");
      file_sel = h5_own(H5Scopy(space.get()), H5Sclose, "cannot copy dataspace");
      h5_ok(H5Sselect_hyperslab(file_sel.get(), H5S_SELECT_SET, fstart.data(), nullptr,
                                cnt.data(), nullptr),
            "cannot select the block in the file");
      dxpl = h5_own(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "cannot create transfer list");
#if defined(GRIDFORGE_HAVE_MPI) && defined(H5_HAVE_PARALLEL)
      h5_ok(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "cannot set collective I/O");
#endif
    }
    for (const auto& f : fields) {
      const hid_t type = h5_native(f.precision);
      const std::string what = fmt::format("dataset '{}/{}'", path, f.name);
      H5Handle ds = h5_own(H5Dcreate2(group.get(), f.name.c_str(), type, space.get(), H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT),
                           H5Dclose, "cannot create " + what);
      if (spec_.decomp)
        h5_ok(H5Dwrite(ds.get(), type, mem.get(), file_sel.get(), dxpl.get(), f.data),
              "cannot write " + what);
      else
        h5_ok(H5Dwrite(ds.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, f.data),
              "cannot write " + what);
      h5_attr(ds.get(), "time", time);
      h5_attr(ds.get(), "step", step);
    }
  }

  void abandon() {
    file_.close();
    if (mpi::rank() == 0) remove_quietly(partial_);
  }

  const SeriesSpec& spec_;
  fs::path final_, partial_;
  H5Handle file_;
  std::vector<StepRecord> steps_;
};

// -------------------------------------------------------------- VTK series

// Forwards VTK's error messages to us instead of the terminal.
class VtkErrorLog {
 public:
  // The writer's own message says what failed; its executive then adds a
  // generic "returned failure for request" dump, which is only silenced.
  explicit VtkErrorLog(vtkAlgorithm* watched) {
    auto keep_first = [](vtkObject*, unsigned long, void* client, void* call) {
      auto* message = static_cast<std::string*>(client);
      if (call && message->empty()) *message = static_cast<const char*>(call);
    };
    callback_->SetClientData(&message_);
    callback_->SetCallback(keep_first);
    watched->AddObserver(vtkCommand::ErrorEvent, callback_);
    silence_->SetClientData(&ignored_);
    silence_->SetCallback(keep_first);
    watched->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, silence_);
  }
  // The message without VTK's "ERROR: In file, line" preamble. Codes below
  // FirstVTKErrorCode are the system's errno (vtkErrorCode::GetLastSystemError).
  std::string reason(unsigned long code) const {
    if (code == vtkErrorCode::OutOfDiskSpaceError) return "no space left on device";
    std::string m = message_;
    if (auto p = m.rfind("): "); p != std::string::npos) m = m.substr(p + 3);
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    if (code > 0 && code < vtkErrorCode::FirstVTKErrorCode)
      m += (m.empty() ? "" : ": ") + std::string(std::strerror(int(code)));
    // vtkErrorCode's own names live in VTK::CommonMisc, which we do not link.
    return m.empty() ? fmt::format("VTK writer failed (vtkErrorCode {})", code) : m;
  }

 private:
  std::string message_, ignored_;
  vtkNew<vtkCallbackCommand> callback_, silence_;
};

// Zero copy: the writer only reads the array, and it dies before write() returns.
template <class Array, class T>
vtkSmartPointer<vtkDataArray> borrow_array(const FieldView& f, vtkIdType n) {
  auto a = vtkSmartPointer<Array>::New();
  a->SetName(f.name.c_str());
  a->SetNumberOfComponents(1);
  a->SetArray(const_cast<T*>(static_cast<const T*>(f.data)), n, /*save=*/1);
  return a;
}

// g.offset places a piece of a parallel series in the global extent.
vtkSmartPointer<vtkImageData> make_image(const Grid& g, const std::vector<FieldView>& fields) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  const auto& o = g.offset;
  image->SetExtent(int(o[0]), int(o[0] + g.n[0] - 1), int(o[1]), int(o[1] + g.n[1] - 1),
                   int(o[2]), int(o[2] + g.n[2] - 1));
  image->SetOrigin(g.origin.data());
  image->SetSpacing(g.h.data());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    auto a = f.precision == Precision::Float32 ? borrow_array<vtkFloatArray, float>(f, g.size())
                                               : borrow_array<vtkDoubleArray, double>(f, g.size());
    if (i == 0)
      image->GetPointData()->SetScalars(a);  // what ParaView colours by at first
    else
      image->GetPointData()->AddArray(a);
  }
  return image;
}

void write_vti(const fs::path& path, const Grid& g, const std::vector<FieldView>& fields) {
  const auto image = make_image(g, fields);
  const fs::path tmp = temp_sibling(path);
  vtkNew<vtkXMLImageDataWriter> writer;
  VtkErrorLog errors(writer);
  writer->SetFileName(tmp.c_str());
  writer->SetInputData(image);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();  // arrays over 4 GiB
  const bool ok = writer->Write() == 1 && writer->GetErrorCode() == vtkErrorCode::NoError;
  if (!ok) {
    remove_quietly(tmp);
    throw IoError(
        fmt::format("cannot write '{}': {}", path.string(), errors.reason(writer->GetErrorCode())));
  }
  commit_temp(tmp, path);
}

// vtk/<name>_<step6>.vti per step + <name>.pvd listing them.
class VtkSeries {
 public:
  explicit VtkSeries(const SeriesSpec& spec) : spec_(spec) {
    std::error_code ec;
    fs::create_directories(spec.dir / "vtk", ec);
    if (ec)
      throw IoError(
          fmt::format("cannot create folder '{}': {}", (spec.dir / "vtk").string(), ec.message()));
    // Parallel: the .pvd is rank 0's.
    if (spec.resume_before && (!spec.decomp || mpi::rank() == 0)) resume(*spec.resume_before);
  }

  void write_step(std::int64_t step, double time, const std::vector<FieldView>& fields) {
    if (spec_.decomp) return write_pieces(step, time, fields);
    const std::string rel = fmt::format("vtk/{}_{}.vti", spec_.name, step6(step));
    write_vti(spec_.dir / rel, spec_.grid, fields);
    datasets_.emplace_back(time, rel);
    write_text_atomic(spec_.dir / (spec_.name + ".pvd"), pvd_text(datasets_));
  }

 private:
  // Parallel: vtk/<name>_<step6>/<name>_<step6>_<rank>.vti, each rank's
  // owned block and one more layer toward each higher neighbour (so that the
  // cells between blocks exist; not across a periodic wrap), then rank 0's
  // vtk/<name>_<step6>.pvti over the pieces, listed in the .pvd.
  void write_pieces(std::int64_t step, double time, const std::vector<FieldView>& fields) {
    const Decomp& d = *spec_.decomp;
    const std::string base = fmt::format("{}_{}", spec_.name, step6(step));
    const fs::path folder = spec_.dir / "vtk" / base;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
      throw IoError(fmt::format("cannot create folder '{}': {}", folder.string(), ec.message()));
    const auto piece = [&](int r) {  // the piece's grid: offset = first global index
      Grid p = d.global;
      const auto s = d.start_of(r), c = d.count_of(r);
      const auto rc = d.coords_of(r);
      for (int a = 0; a < 3; ++a) {
        p.halo_lo[a] = p.halo_hi[a] = 0;
        p.offset[a] = s[a];
        p.n[a] = c[a] + (rc[a] + 1 < d.dims[a] ? 1 : 0);
      }
      return p;
    };
    const Grid mine = piece(d.rank), lg = d.local_grid();
    std::vector<std::vector<unsigned char>> copies;
    std::vector<FieldView> views;
    for (const FieldView& f : fields) {
      const std::size_t bytes = std::size_t(bytes_of(f.precision));
      std::vector<unsigned char> v(std::size_t(mine.size()) * bytes);
      const auto* src = static_cast<const unsigned char*>(f.data);
      const std::int64_t row = mine.n[0] * std::int64_t(bytes);
      const Layout from = Layout::dense(lg.n.data()), to = Layout::dense(mine.n.data());
      for (std::int64_t k = 0; k < mine.n[2]; ++k)
        for (std::int64_t j = 0; j < mine.n[1]; ++j) {
          const std::int64_t at = from.index(lg.halo_lo[0], lg.halo_lo[1] + j, lg.halo_lo[2] + k);
          std::memcpy(v.data() + to.index(0, j, k) * std::int64_t(bytes),
                      src + at * std::int64_t(bytes), std::size_t(row));
        }
      views.push_back({f.name, v.data(), f.precision});
      copies.push_back(std::move(v));
    }
    const std::string piece_name = fmt::format("{}_{}.vti", base, d.rank);
    write_vti(folder / piece_name, mine, views);
    mpi::barrier();  // every piece is in place before the .pvti names it
    std::string s = fmt::format(
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
        "header_type=\"UInt64\">\n"
        "  <PImageData WholeExtent=\"{}\" GhostLevel=\"0\" Origin=\"{} {} {}\" "
        "Spacing=\"{} {} {}\">\n"
        "    <PPointData Scalars=\"{}\">\n",
        extent_str(d.global), g17(d.global.origin[0]), g17(d.global.origin[1]),
        g17(d.global.origin[2]), g17(d.global.h[0]), g17(d.global.h[1]), g17(d.global.h[2]),
        xml_escape(fields[0].name));
    for (const FieldView& f : fields)
      s += fmt::format("      <PDataArray type=\"{}\" Name=\"{}\"/>\n",
                       f.precision == Precision::Float32 ? "Float32" : "Float64",
                       xml_escape(f.name));
    s += "    </PPointData>\n";
    for (int r = 0; r < d.nranks; ++r)
      s += fmt::format("    <Piece Extent=\"{}\" Source=\"{}/{}_{}.vti\"/>\n",
                       extent_str(piece(r)), xml_escape(base), xml_escape(base), r);
    s += "  </PImageData>\n</VTKFile>\n";
    const std::string rel = fmt::format("vtk/{}.pvti", base);
    write_text_atomic(spec_.dir / rel, s);
    datasets_.emplace_back(time, rel);
    write_text_atomic(spec_.dir / (spec_.name + ".pvd"), pvd_text(datasets_));
  }

  // "x0 x1 y0 y1 z0 z1" of a grid placed by its offset.
  static std::string extent_str(const Grid& p) {
    std::string s;
    for (int a = 0; a < 3; ++a)
      s += fmt::format("{}{} {}", a ? " " : "", p.offset[a], p.offset[a] + p.n[a] - 1);
    return s;
  }

 public:

 private:
  // Restart: the datasets the .pvd already lists before step `before` (read
  // back from the lines pvd_text writes); the later ones and their .vti go.
  void resume(std::int64_t before) {
    const fs::path pvd = spec_.dir / (spec_.name + ".pvd");
    std::error_code ec;
    if (!fs::exists(pvd, ec)) return;
    std::string text;
    try {
      text = read_input_file(pvd);  // not a device or a pipe that a link may name
    } catch (const IoError& e) {
      throw IoError(fmt::format("cannot read '{}': {}", pvd.string(), e.what()));
    }
    const std::string ts = "timestep=\"", fl = "file=\"";
    for (std::size_t p = text.find("<DataSet "); p != std::string::npos;
         p = text.find("<DataSet ", p + 1)) {
      const std::size_t t = text.find(ts, p), q = text.find(fl, p);
      const std::size_t qe = q == std::string::npos ? q : text.find('"', q + fl.size());
      if (t == std::string::npos || qe == std::string::npos)
        throw IoError(fmt::format("cannot continue '{}': not a series gridforge wrote", pvd.string()));
      const double time = std::strtod(text.c_str() + t + ts.size(), nullptr);
      std::string file = xml_unescape(text.substr(q + fl.size(), qe - q - fl.size()));
      // vtk/<name>_<step6>.vti, or .pvti with its pieces in vtk/<name>_<step6>/
      const std::size_t us = file.rfind('_'), dot = file.rfind('.');
      if (us == std::string::npos || dot == std::string::npos || dot < us)
        throw IoError(fmt::format("cannot continue '{}': not a series gridforge wrote", pvd.string()));
      const std::int64_t step = std::strtoll(file.c_str() + us + 1, nullptr, 10);
      if (step < before) {
        datasets_.emplace_back(time, file);
      } else {
        remove_quietly(spec_.dir / file);
        if (file.ends_with(".pvti")) {
          std::error_code ignored;
          fs::remove_all(spec_.dir / file.substr(0, dot), ignored);
        }
      }
    }
    write_text_atomic(pvd, pvd_text(datasets_));
  }

  const SeriesSpec& spec_;
  std::vector<std::pair<double, std::string>> datasets_;
};

// Programming errors of the caller, not I/O failures. A name becomes an HDF5
// link name and a VTK array name: no '/', not "." or "..".
void check_fields(const std::vector<FieldView>& fields) {
  if (fields.empty()) throw std::invalid_argument("FieldSeriesWriter::write: no fields");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    if (f.name.empty() || f.name == "." || f.name == ".." || f.name.find('/') != std::string::npos)
      throw std::invalid_argument(fmt::format("field name '{}' is not a valid array name", f.name));
    if (!f.data) throw std::invalid_argument(fmt::format("field '{}' has no data", f.name));
    for (std::size_t j = 0; j < i; ++j)
      if (fields[j].name == f.name)
        throw std::invalid_argument(fmt::format("field '{}' given twice", f.name));
  }
}

}  // namespace

// ------------------------------------------------------- FieldSeriesWriter

struct FieldSeriesWriter::Impl {
  SeriesSpec spec;
  std::optional<VtkSeries> vtk;
  std::optional<H5Series> h5;
  std::optional<std::int64_t> last_step;
  bool finished = false;
};

FieldSeriesWriter::FieldSeriesWriter(SeriesSpec spec) : impl_(std::make_unique<Impl>()) {
  impl_->spec = std::move(spec);
  const SeriesSpec& s = impl_->spec;
  std::error_code ec;
  if (!fs::is_directory(s.dir, ec))
    throw IoError(fmt::format("cannot write to '{}': {}", s.dir.string(),
                              fs::exists(s.dir, ec) ? "not a folder" : "no such folder"));
  if (s.vtk) impl_->vtk.emplace(s);
  if (s.hdf5) impl_->h5.emplace(s);
}

FieldSeriesWriter::~FieldSeriesWriter() {
  try {
    finish();
  } catch (...) {
    // A destructor must not throw; finish() already removed what it could not complete.
  }
}

void FieldSeriesWriter::write(std::int64_t step, double time,
                              const std::vector<FieldView>& fields) {
  Impl& m = *impl_;
  if (m.finished) throw std::logic_error("FieldSeriesWriter::write after finish()");
  if (m.last_step && step <= *m.last_step)
    throw std::invalid_argument(
        fmt::format("output step {} after step {}: steps must increase", step, *m.last_step));
  check_fields(fields);
  // VTK first: a VTK failure then leaves fields.h5 without a half-written step.
  if (m.vtk) m.vtk->write_step(step, time, fields);
  if (m.h5) m.h5->write_step(step, time, fields);
  m.last_step = step;
}

void FieldSeriesWriter::finish() {
  if (!impl_ || impl_->finished) return;
  impl_->finished = true;
  if (impl_->h5) impl_->h5->finish();
}

// --------------------------------------------------------------- readers

std::vector<std::int64_t> h5_dataset_shape(const std::string& path, const std::string& dataset) {
  H5Quiet quiet;
  H5Handle file = open_for_reading(path);
  H5Handle ds = open_dataset(file.get(), path, dataset);
  return shape_of(ds.get());
}

std::vector<double> h5_read_dataset(const std::string& path, const std::string& dataset) {
  H5Quiet quiet;
  H5Handle file = open_for_reading(path);
  H5Handle ds = open_dataset(file.get(), path, dataset);
  H5Handle type(H5Dget_type(ds.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw IoError(fmt::format("dataset '{}' in '{}' is not numeric", dataset, path));
  std::int64_t count = 1;
  for (auto d : shape_of(ds.get())) count *= d;
  std::vector<double> values(static_cast<std::size_t>(count));
  // HDF5 converts any integer or float type to double on the way in.
  if (count > 0 &&
      H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw IoError(fmt::format("cannot read dataset '{}' in '{}': {}", dataset, path, h5_reason()));
  return values;
}

}  // namespace gf::io
