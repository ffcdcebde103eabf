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
//   keeps the steps it finished.
// - fields.xdmf names fields.h5, so it appears only once fields.h5 is in
//   place: during the run the index of the steps flushed so far is kept under
//   ".fields.xdmf.partial" (rewritten after each flush), and finish() removes
//   the earlier run's fields.xdmf, renames the partial fields.h5, then the
//   partial index. At no moment does a fields.xdmf name another fields.h5
//   than the one beside it, or a step it does not hold.
// - When writing fields.h5 itself fails (disk full), the file on disk is
//   still the one flushed after the last complete step: the library's handle
//   is detached from it (its descriptor pointed at /dev/null) before HDF5
//   closes it, so the close cannot write half of the failed step's metadata
//   into it; the file is then checked, and kept with its index as at the end
//   of a run.
#include "io/output.hpp"

#include <fmt/format.h>
#include <hdf5.h>

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

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/mpi.hpp"
#include "core/rank_errors.hpp"
#include "grid/view.hpp"
#include "io/h5.hpp"
#include "io/h5_chunks.hpp"
#include "io/vtk_series.hpp"

namespace gf::io {

using namespace h5;
using namespace series;

namespace {

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

// ------------------------------------------------------------- HDF5 series

// fields.h5 (under its partial name while the run goes on) + fields.xdmf.
class H5Series {
 public:
  explicit H5Series(const SeriesSpec& spec)
      : spec_(spec),
        final_(spec.dir / "fields.h5"),
        partial_(spec.dir / ".fields.h5.partial"),
        index_(spec.dir / "fields.xdmf"),
        index_partial_(spec.dir / ".fields.xdmf.partial") {
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
    write_text_atomic(index_partial_, xdmf_text(spec_, steps_));
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
    if (const std::string why = reserve(fields); !why.empty())
      throw IoError(fmt::format("cannot write '{}' at step {}: {}{}", final_.string(), step, why,
                                keep_last_complete(/*clean=*/true)));
    try {
      write_group(step, time, fields);
      h5_ok(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "cannot flush");
      trim();
      if (!spec_.decomp || mpi::rank() == 0) start_writeback(partial_);
    } catch (const H5Failure& e) {
      throw IoError(fmt::format("cannot write '{}' at step {}: {}{}", final_.string(), step,
                                e.what(), keep_last_complete()));
    }
    StepRecord r{step, time, {}};
    for (const auto& f : fields) r.fields.emplace_back(f.name, f.precision);
    steps_.push_back(std::move(r));
    write_text_atomic(index_partial_, xdmf_text(spec_, steps_));
  }

  const ChunkWriteStats& stats() const { return stats_; }

  // Idempotent; after an error there is nothing left to finish.
  void finish() {
    if (!file_) return;
    H5Quiet quiet;
    // Flushed first, so that a failure here is one of a step's writes: the
    // file on disk is then still the last complete one.
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0 || (!spec_.decomp && file_.close() < 0)) {
      const std::string reason = h5_reason();
      throw IoError(
          fmt::format("cannot write '{}': {}{}", final_.string(), reason, keep_last_complete()));
    }
    if (spec_.decomp && file_.close() < 0) {
      const std::string reason = h5_reason();
      abandon();
      throw IoError(fmt::format("cannot write '{}': {}", final_.string(), reason));
    }
    // Parallel: every rank has closed the file before rank 0 renames it.
    if (spec_.decomp) mpi::barrier();
    if (mpi::rank() == 0) publish();
  }

 private:
  // fields.h5 and then its index into place; the earlier run's index goes
  // first, so that no fields.xdmf ever names a fields.h5 it does not match.
  void publish() {
    remove_quietly(index_);
    commit_temp(partial_, final_);
    std::error_code ec;
    fs::rename(index_partial_, index_, ec);
    if (ec) {  // e.g. the prepared index could not be written: write it now
      remove_quietly(index_partial_);
      write_text_atomic(index_, xdmf_text(spec_, steps_));
    }
  }

  // After a failed write of fields.h5: keeps the file as it was after the
  // last complete step (fields.h5 with those steps, fields.xdmf naming them)
  // and returns what the message adds. Over MPI ranks (MPI-IO handles) the
  // partial file is removed instead, and the earlier fields.h5 stays.
  // clean: nothing of the step was written yet, so the library may close the
  // file itself (which also gives back the space reserved past its end).
  std::string keep_last_complete(bool clean = false) {
    if (spec_.decomp) {
      abandon();
      return "";
    }
    if (!clean || file_.close() < 0) {
      detach();
      file_.close();  // writes nothing now: errors are expected and ignored
    }
    try {
      check_steps();
      publish();
    } catch (const std::exception& e) {
      remove_quietly(partial_);
      remove_quietly(index_partial_);
      return fmt::format("; the steps before it could not be kept ({})", e.what());
    }
    return fmt::format("; fields.h5 keeps the {} step{} written before it", steps_.size(),
                       steps_.size() == 1 ? "" : "s");
  }

  // Makes room on the disk for the step before writing any of it: its values
  // and 64 KiB for the library's metadata, past the end of what the file
  // uses (posix_fallocate; the file's length past that end is slack that
  // trim() cuts once the step is written, or closing a failed file). A full disk is then found while the file
  // is whole, rather than in the middle of the library's writes. Returns why
  // not ("" when done, or when the file is not one descriptor: MPI-IO).
  std::string reserve(const std::vector<FieldView>& fields) {
    if (spec_.decomp) return "";
    void* handle = nullptr;
    haddr_t eoa = 0;
    if (H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) < 0 || !handle ||
        H5Fget_eoa(file_.get(), &eoa) < 0)
      return "";
    std::uint64_t bytes = 64 * 1024;
    for (const auto& f : fields) bytes += std::uint64_t(spec_.grid.size()) * bytes_of(f.precision);
    const int rc = ::posix_fallocate(*static_cast<int*>(handle), 0, off_t(eoa + bytes));
    // EINVAL, EOPNOTSUPP: a file system that cannot reserve; the writes tell.
    if (rc == 0 || rc == EINVAL || rc == EOPNOTSUPP) return "";
    return std::strerror(rc);
  }

  // Cuts what reserve() set aside past the end the library uses, once the
  // step is written: compressed chunks take less than the values' bytes
  // reserved, and HDF5 does not cut the rest on close (it knows of no
  // length past the last byte it wrote).
  void trim() {
    if (spec_.decomp) return;
    void* handle = nullptr;
    haddr_t eoa = 0;
    if (H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) < 0 || !handle ||
        H5Fget_eoa(file_.get(), &eoa) < 0)
      return;
    struct stat st{};
    const int fd = *static_cast<int*>(handle);
    if (::fstat(fd, &st) == 0 && std::uint64_t(st.st_size) > eoa) (void)::ftruncate(fd, off_t(eoa));
  }

  // Points the open file's descriptor at /dev/null, so that nothing the
  // library still holds reaches the file (dup2 swaps it atomically: no other
  // open() can take the number in between).
  void detach() {
    void* handle = nullptr;
    if (H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) < 0 || !handle) return;
    const int fd = *static_cast<int*>(handle);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) return;
    ::dup2(null, fd);
    ::close(null);
  }

  // The partial file, reopened, holds every step listed (a failed flush may
  // have written part of its metadata).
  void check_steps() const {
    H5Handle f = h5_own(H5Fopen(partial_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                        "cannot reopen it");
    for (const StepRecord& r : steps_)
      for (const auto& [name, prec] : r.fields) {
        const std::string path = "/steps/" + step6(r.step) + "/" + name;
        H5Handle ds = h5_own(H5Dopen2(f.get(), path.c_str(), H5P_DEFAULT), H5Dclose,
                             "no dataset " + path);
        H5Handle space = h5_own(H5Dget_space(ds.get()), H5Sclose, "cannot read " + path);
        if (H5Sget_simple_extent_npoints(space.get()) != hssize_t(spec_.grid.size()))
          throw H5Failure("dataset " + path + " is not whole");
      }
  }

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
    write_text_atomic(index_partial_, xdmf_text(spec_, steps_));
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
    // One rank: shuffled and deflated chunks, compressed over threads
    // (io/h5_chunks.hpp); over MPI ranks the collective writes of one
    // contiguous dataset, uncompressed (docs/cases.md#output).
    const bool deflate =
        !spec_.decomp && spec_.hdf5_compression.method != Compression::Method::None;
    for (const auto& f : fields) {
      const hid_t type = h5_native(f.precision);
      const std::string what = fmt::format("dataset '{}/{}'", path, f.name);
      const std::vector<hsize_t> chunk = chunk_shape(dims, bytes_of(f.precision));
      H5Handle dcpl = deflate ? deflate_creation(chunk, spec_.hdf5_compression.level)
                              : h5_own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose,
                                       "cannot create dataset list");
      H5Handle ds = h5_own(H5Dcreate2(group.get(), f.name.c_str(), type, space.get(), H5P_DEFAULT,
                                      dcpl.get(), H5P_DEFAULT),
                           H5Dclose, "cannot create " + what);
      if (deflate)
        write_deflated(ds.get(), f.data, bytes_of(f.precision), dims, chunk,
                       spec_.hdf5_compression.level, spec_.threads, stats_);
      else if (spec_.decomp)
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
    if (mpi::rank() == 0) {
      remove_quietly(partial_);
      remove_quietly(index_partial_);
    }
  }

  const SeriesSpec& spec_;
  fs::path final_, partial_, index_, index_partial_;
  H5Handle file_;
  std::vector<StepRecord> steps_;
  ChunkWriteStats stats_;  // the compressed chunks written so far
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

// Restart: the fields.h5 a series would continue (its partial file when the
// earlier run did not finish), opened read-only and checked against the
// grid and the layout H5Series::resume reads. Nothing when there is none.
void check_h5_resume(const SeriesSpec& spec) {
  const fs::path partial = spec.dir / ".fields.h5.partial", final = spec.dir / "fields.h5";
  std::error_code ec;
  const fs::path source = fs::exists(partial, ec) ? partial : final;
  if (!fs::exists(source, ec)) return;
  H5Quiet quiet;
  try {
    H5Handle file = h5_own(H5Fopen(source.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                           "cannot open it");
    std::vector<std::int64_t> dims(spec.grid.ndim);
    H5Handle a = h5_own(H5Aopen(file.get(), "dims", H5P_DEFAULT), H5Aclose, "no attribute 'dims'");
    H5Handle space = h5_own(H5Aget_space(a.get()), H5Sclose, "cannot read 'dims'");
    if (H5Sget_simple_extent_npoints(space.get()) != hssize_t(dims.size()))
      throw H5Failure("it holds fields of another grid");
    h5_ok(H5Aread(a.get(), H5T_NATIVE_INT64, dims.data()), "cannot read 'dims'");
    for (int ax = 0; ax < spec.grid.ndim; ++ax)
      if (dims[ax] != spec.grid.n[ax]) throw H5Failure("it holds fields of another grid");
    H5Handle g = h5_own(H5Gopen2(file.get(), "/steps", H5P_DEFAULT), H5Gclose, "no group '/steps'");
    auto check = [](hid_t group, const char* name, const H5L_info_t*, void*) -> herr_t {
      H5Handle s(H5Gopen2(group, name, H5P_DEFAULT), H5Gclose);
      if (!s || H5Aexists(s.get(), "step") <= 0 || H5Aexists(s.get(), "time") <= 0) return -1;
      return 0;
    };
    h5_ok(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, check, nullptr),
          "a step in '/steps' without its 'step' and 'time'");
  } catch (const H5Failure& e) {
    throw IoError(fmt::format("cannot continue '{}': {}", source.string(), e.what()));
  }
}

}  // namespace

void check_series_resume(const SeriesSpec& spec, std::int64_t) {
  try {
    if (spec.vtk) read_pvd(spec.dir / (spec.name + ".pvd"));
    if (spec.hdf5) check_h5_resume(spec);
  } catch (const IoError& e) {
    throw UsageError(fmt::format("--restart: {}; continue into a new --out, or remove the "
                                 "series there",
                                 e.what()));
  }
}

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
  // A restart changes the earlier series only once all of it is known good.
  // Split over ranks, rank 0 reads it for all of them, and every rank waits
  // for that verdict: rank 0 opens fields.h5 for writing next, and HDF5's
  // file lock would refuse a read another rank were still making.
  if (s.resume_before)
    on_every_rank(s.decomp != nullptr, [&] {
      if (!s.decomp || mpi::rank() == 0) check_series_resume(s, *s.resume_before);
    });
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

VtkWriteStats FieldSeriesWriter::vtk_stats() const {
  return impl_->vtk ? impl_->vtk->stats() : VtkWriteStats{};
}

H5WriteStats FieldSeriesWriter::h5_stats() const {
  if (!impl_->h5) return {};
  const ChunkWriteStats& c = impl_->h5->stats();
  return {c.bytes_in, c.bytes_out, c.compress_s, c.compress_cpu_s, c.write_s, c.chunks,
          c.chunks_stored, deflate_library()};
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
  H5Handle type(H5Dget_type(ds.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    const char* kind = cls == H5T_ENUM       ? "booleans or another enumeration"
                       : cls == H5T_COMPOUND ? "compound values (complex numbers, records)"
                       : cls == H5T_STRING   ? "text"
                                             : "values that are not numbers";
    throw IoError(fmt::format("dataset '{}' in '{}' holds {}; a field needs integers or floats",
                              dataset, path, kind));
  }
  // Raw data kept in external files (H5Pset_external): each must be there,
  // or the read fails when the run has already started.
  H5Handle dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
  const int externals = H5Pget_external_count(dcpl.get());
  for (int e = 0; e < externals; ++e) {
    char name[4096] = {};
    off_t offset = 0;
    hsize_t size = 0;
    if (H5Pget_external(dcpl.get(), unsigned(e), sizeof name, name, &offset, &size) < 0) continue;
    fs::path ext(name);
    if (ext.is_relative()) ext = fs::path(path).parent_path() / ext;
    std::error_code ec;
    if (!fs::is_regular_file(ext, ec))
      throw IoError(fmt::format("dataset '{}' in '{}' keeps its values in the external file "
                                "'{}', which is missing",
                                dataset, path, ext.string()));
  }
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

StepsListing h5_list_steps(const std::string& path) {
  H5Quiet quiet;
  H5Handle file = open_for_reading(path);
  auto collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  StepsListing l;
  try {
    if (H5Aexists(file.get(), "dims") <= 0 || H5Lexists(file.get(), "/steps", H5P_DEFAULT) <= 0)
      throw H5Failure("not a gridforge fields file (no 'dims' attribute and '/steps' group)");
    H5Handle a = h5_own(H5Aopen(file.get(), "dims", H5P_DEFAULT), H5Aclose, "no attribute 'dims'");
    H5Handle space = h5_own(H5Aget_space(a.get()), H5Sclose, "cannot read 'dims'");
    const hssize_t nd = H5Sget_simple_extent_npoints(space.get());
    if (nd < 1 || nd > 3) throw H5Failure("its 'dims' attribute is not 1 to 3 numbers");
    l.dims.resize(std::size_t(nd));
    h5_ok(H5Aread(a.get(), H5T_NATIVE_INT64, l.dims.data()), "cannot read 'dims'");
    for (auto [key, out] : {std::pair{"spacing", &l.spacing}, std::pair{"origin", &l.origin}}) {
      if (H5Aexists(file.get(), key) <= 0) continue;
      H5Handle at = h5_own(H5Aopen(file.get(), key, H5P_DEFAULT), H5Aclose, "cannot open attribute");
      H5Handle sp = h5_own(H5Aget_space(at.get()), H5Sclose, "cannot read attribute");
      if (H5Sget_simple_extent_npoints(sp.get()) != nd) continue;
      out->resize(std::size_t(nd));
      h5_ok(H5Aread(at.get(), H5T_NATIVE_DOUBLE, out->data()), "cannot read attribute");
    }
    std::vector<std::string> names;
    H5Handle g = h5_own(H5Gopen2(file.get(), "/steps", H5P_DEFAULT), H5Gclose, "no group '/steps'");
    h5_ok(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names),
          "cannot list '/steps'");
    for (const std::string& name : names) {
      StepsListing::Step st;
      st.group = "/steps/" + name;
      H5Handle sg = h5_own(H5Gopen2(file.get(), st.group.c_str(), H5P_DEFAULT), H5Gclose,
                           "cannot open " + st.group);
      H5Handle sa = h5_own(H5Aopen(sg.get(), "step", H5P_DEFAULT), H5Aclose,
                           "no attribute 'step' on " + st.group);
      h5_ok(H5Aread(sa.get(), H5T_NATIVE_INT64, &st.step), "cannot read " + st.group);
      H5Handle ta = h5_own(H5Aopen(sg.get(), "time", H5P_DEFAULT), H5Aclose,
                           "no attribute 'time' on " + st.group);
      h5_ok(H5Aread(ta.get(), H5T_NATIVE_DOUBLE, &st.time), "cannot read " + st.group);
      std::vector<std::string> fields;
      h5_ok(H5Literate(sg.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &fields),
            "cannot list " + st.group);
      for (const std::string& f : fields) {
        H5Handle ds = h5_own(H5Dopen2(sg.get(), f.c_str(), H5P_DEFAULT), H5Dclose,
                             "cannot open " + st.group + "/" + f);
        H5Handle type = h5_own(H5Dget_type(ds.get()), H5Tclose, "cannot read " + st.group);
        st.fields.push_back({f, H5Tget_size(type.get()) == 4 ? Precision::Float32
                                                               : Precision::Float64});
      }
      l.steps.push_back(std::move(st));
    }
  } catch (const H5Failure& e) {
    throw IoError(fmt::format("cannot read '{}': {}", path, e.what()));
  }
  return l;
}

}  // namespace gf::io
