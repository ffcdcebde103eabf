// The VTK half of the field series (io/vtk_series.hpp): .vti files written by
// VTK's XML writer to a hidden temporary and renamed, the .pvd (and over MPI
// ranks each step's .pvti) rewritten whole after every step.
#include "io/vtk_series.hpp"

#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkDataCompressor.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataWriter.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/mpi.hpp"
#include "grid/view.hpp"
#include "io/input_file.hpp"
#include "io/vtk_compress.hpp"

namespace gf::io::series {

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


// -------------------------------------------------------------- VTK series

// Forwards VTK's error messages to us instead of the terminal.

namespace {

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

// The .vti of `fields` on g, compressed as spec says (io/vtk_compress.hpp);
// adds what the compression did to `stats`.
void write_vti(const fs::path& path, const Grid& g, const std::vector<FieldView>& fields,
               const SeriesSpec& spec, VtkWriteStats& stats) {
  const auto image = make_image(g, fields);
  const fs::path tmp = temp_sibling(path);
  vtkNew<vtkXMLImageDataWriter> writer;
  VtkErrorLog errors(writer);
  writer->SetFileName(tmp.c_str());
  writer->SetInputData(image);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetHeaderTypeToUInt64();  // arrays over 4 GiB
  writer->SetBlockSize(spec.vtk_block_bytes);
  AheadCompressor ahead;
  if (spec.compression.method == Compression::Method::None) {
    writer->SetCompressorTypeToNone();
  } else {
    std::vector<ArrayBytes> arrays;
    for (const FieldView& f : fields)
      arrays.push_back({static_cast<const unsigned char*>(f.data),
                        std::size_t(g.size()) * std::size_t(bytes_of(f.precision))});
    ahead = make_ahead_compressor(spec.compression, spec.threads, spec.vtk_block_bytes,
                                  std::move(arrays));
    writer->SetCompressor(ahead.vtk);
  }
  const bool ok = writer->Write() == 1 && writer->GetErrorCode() == vtkErrorCode::NoError;
  if (ahead.record) {
    const VtkWriteStats s = ahead.record->stats();
    stats.bytes_in += s.bytes_in;
    stats.bytes_out += s.bytes_out;
    stats.compress_s += s.compress_s;
    stats.compress_cpu_s += s.compress_cpu_s;
    stats.blocks_ahead += s.blocks_ahead;
    stats.blocks_inline += s.blocks_inline;
  }
  if (!ok) {
    remove_quietly(tmp);
    throw IoError(
        fmt::format("cannot write '{}': {}", path.string(), errors.reason(writer->GetErrorCode())));
  }
  start_writeback(tmp);
  commit_temp(tmp, path);
}

// One <DataSet> of a .pvd gridforge wrote.

// "x0 x1 y0 y1 z0 z1" of a grid placed by its offset.
std::string extent_str(const Grid& p) {
  std::string s;
  for (int a = 0; a < 3; ++a)
    s += fmt::format("{}{} {}", a ? " " : "", p.offset[a], p.offset[a] + p.n[a] - 1);
  return s;
}
}  // namespace


// The datasets of a .pvd (read back from the lines pvd_text writes); none
// when there is no file. Throws IoError saying what is wrong.
std::optional<std::vector<PvdEntry>> read_pvd(const fs::path& pvd) {
  std::error_code ec;
  if (!fs::exists(pvd, ec)) return std::nullopt;
  std::string text;
  try {
    text = read_input_file(pvd);  // not a device or a pipe that a link may name
  } catch (const IoError& e) {
    throw IoError(fmt::format("cannot read '{}': {}", pvd.string(), e.what()));
  }
  const auto not_ours = [&] {
    return IoError(fmt::format("cannot continue '{}': not a series gridforge wrote", pvd.string()));
  };
  if (text.find("<VTKFile type=\"Collection\"") == std::string::npos ||
      text.find("</VTKFile>") == std::string::npos)
    throw not_ours();
  std::vector<PvdEntry> entries;
  const std::string ts = "timestep=\"", fl = "file=\"";
  for (std::size_t p = text.find("<DataSet "); p != std::string::npos;
       p = text.find("<DataSet ", p + 1)) {
    const std::size_t t = text.find(ts, p), q = text.find(fl, p);
    const std::size_t qe = q == std::string::npos ? q : text.find('"', q + fl.size());
    if (t == std::string::npos || qe == std::string::npos) throw not_ours();
    PvdEntry e;
    e.time = std::strtod(text.c_str() + t + ts.size(), nullptr);
    e.file = xml_unescape(text.substr(q + fl.size(), qe - q - fl.size()));
    const std::size_t us = e.file.rfind('_'), dot = e.file.rfind('.');
    if (us == std::string::npos || dot == std::string::npos || dot < us) throw not_ours();
    e.step = std::strtoll(e.file.c_str() + us + 1, nullptr, 10);
    entries.push_back(std::move(e));
  }
  return entries;
}


VtkSeries::VtkSeries(const SeriesSpec& spec) : spec_(spec) {
  std::error_code ec;
  fs::create_directories(spec.dir / "vtk", ec);
  if (ec)
    throw IoError(
        fmt::format("cannot create folder '{}': {}", (spec.dir / "vtk").string(), ec.message()));
  // Parallel: the .pvd is rank 0's.
  if (spec.resume_before && (!spec.decomp || mpi::rank() == 0)) resume(*spec.resume_before);
}


void VtkSeries::write_step(std::int64_t step, double time, const std::vector<FieldView>& fields) {
  if (spec_.decomp) return write_pieces(step, time, fields);
  const std::string rel = fmt::format("vtk/{}_{}.vti", spec_.name, step6(step));
  write_vti(spec_.dir / rel, spec_.grid, fields, spec_, stats_);
  datasets_.emplace_back(time, rel);
  write_text_atomic(spec_.dir / (spec_.name + ".pvd"), pvd_text(datasets_));
}
// Parallel: vtk/<name>_<step6>/<name>_<step6>_<rank>.vti, each rank's
// owned block and one more layer toward each higher neighbour (so that the
// cells between blocks exist; not across a periodic wrap), then rank 0's
// vtk/<name>_<step6>.pvti over the pieces, listed in the .pvd.
void VtkSeries::write_pieces(std::int64_t step, double time, const std::vector<FieldView>& fields) {
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
  write_vti(folder / piece_name, mine, views, spec_, stats_);
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
// Restart: the datasets the .pvd already lists before step `before`; the
// later ones and their .vti go.
void VtkSeries::resume(std::int64_t before) {
  const fs::path pvd = spec_.dir / (spec_.name + ".pvd");
  const auto entries = read_pvd(pvd);
  if (!entries) return;
  for (const PvdEntry& e : *entries) {
    if (e.step < before) {
      datasets_.emplace_back(e.time, e.file);
    } else {
      remove_quietly(spec_.dir / e.file);
      if (e.file.ends_with(".pvti")) {
        std::error_code ignored;
        fs::remove_all(spec_.dir / e.file.substr(0, e.file.rfind('.')), ignored);
      }
    }
  }
  write_text_atomic(pvd, pvd_text(datasets_));
}
}  // namespace gf::io::series
