// Whole-file writes for the small text outputs (run.json, timing.json,
// log.csv, <name>.pvd, fields.xdmf). SPEC §4: a file appears whole or not at
// all, so each is written to a hidden sibling ".<name>.tmp" and renamed over
// the target; rename() within one folder is atomic on POSIX, so a reader (or
// a run killed halfway) sees either the old file or the new one.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "core/error.hpp"
#include "io/input_file.hpp"
#include "io/output.hpp"
#include "core/mpi.hpp"


namespace gf::io {

namespace {

// Same folder as the target, so the rename never crosses a file system; the
// leading dot keeps half-written files out of ParaView's file dialogs.
fs::path temp_sibling(const fs::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp", path.filename().string());
}

[[noreturn]] void throw_write_error(const fs::path& path, const std::string& reason) {
  throw IoError(fmt::format("cannot write '{}': {}", path.string(), reason));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Writes `text` to `tmp`; on failure removes `tmp` and throws naming `path`.
void write_temp(const fs::path& tmp, const fs::path& path, const std::string& text) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(tmp.c_str(), "wb"));
  if (!f) throw_write_error(path, std::strerror(errno));
  bool failed = false;
  int err = 0;
  // fflush and fclose are where a full disk usually shows up, not fwrite.
  if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size() ||
      std::fflush(f.get()) != 0) {
    failed = true;
    err = errno;
  }
  if (std::fclose(f.release()) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  if (failed) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw_write_error(path, err ? std::strerror(err) : "write failed");
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';  // RFC 4180: a quote inside quotes is doubled
    q += c;
  }
  q += '"';
  return q;
}

}  // namespace

#if defined(__linux__)
namespace {

// The files whose writeback was asked for, each as an open descriptor (it
// outlives the rename that follows), and one thread that starts them in
// turn: sync_file_range blocks while the disk's request queue is full, and
// that must not hold up the writer that asked (measured: a 512³ run's wall
// time went from 2.5 to 4.2 s when the writer called it itself).
// Detached and never freed: at exit the operating system closes what is
// left and writes those pages in its own time, as it would have anyway.
struct WritebackQueue {
  std::mutex m;
  std::condition_variable cv;
  std::deque<int> fds;
};

WritebackQueue* writeback_queue() noexcept {
  static WritebackQueue* const q = []() -> WritebackQueue* {
    auto* s = new (std::nothrow) WritebackQueue;
    if (!s) return nullptr;
    try {
      std::thread([s] {
        for (;;) {
          int fd = -1;
          {
            std::unique_lock<std::mutex> lock(s->m);
            s->cv.wait(lock, [s] { return !s->fds.empty(); });
            fd = s->fds.front();
            s->fds.pop_front();
          }
          // offset 0, nbytes 0: the whole file; WRITE alone starts the
          // writes of the pages not yet under writeback, waiting for none.
          (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
          ::close(fd);
        }
      }).detach();
    } catch (...) {  // no thread to be had: the hint is dropped
      delete s;
      return nullptr;
    }
    return s;
  }();
  return q;
}

}  // namespace
#endif

void start_writeback(const fs::path& path) noexcept {
#if defined(__linux__)
  WritebackQueue* q = writeback_queue();
  if (!q) return;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  try {
    {
      std::lock_guard<std::mutex> lock(q->m);
      q->fds.push_back(fd);
    }
    q->cv.notify_one();
  } catch (...) {
    ::close(fd);
  }
#else
  (void)path;
#endif
}

// On several MPI ranks the run's small files (run.json, timing.json,
// log.csv, the .pvd, .pvti and .xdmf) are rank 0's to write: every rank
// calls, rank 0 writes, the others return.
void write_text_atomic(const fs::path& path, const std::string& text) {
  if (mpi::rank() != 0) return;
  const fs::path tmp = temp_sibling(path);
  write_temp(tmp, path, text);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw_write_error(path, ec.message());
  }
}

void write_json_atomic(const fs::path& path, const nlohmann::json& j) {
  // Invalid UTF-8 (a folder name from the command line) is written as U+FFFD
  // rather than failing the whole file.
  write_text_atomic(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

CsvLog::CsvLog(fs::path path, std::vector<std::string> columns)
    : path_(std::move(path)), columns_(std::move(columns)) {}

void CsvLog::row(const std::vector<double>& values) {
  if (values.size() != columns_.size())
    throw std::invalid_argument(fmt::format("{}: a row of {} values for {} columns", path_.string(),
                                            values.size(), columns_.size()));
  // fmt's "{}" is the shortest text that reads back to the same double:
  // steps print as integers, times keep every digit they have.
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) body_ += ',';
    fmt::format_to(std::back_inserter(body_), "{}", values[i]);
  }
  body_ += '\n';
}

void CsvLog::resume(double limit, bool inclusive) {
  std::error_code ec;
  if (!fs::exists(path_, ec)) return;
  std::string text;
  try {
    text = read_input_file(path_);  // not a device or a pipe that a link may name
  } catch (const IoError& e) {
    throw IoError(fmt::format("cannot read '{}': {}", path_.string(), e.what()));
  }
  std::string header;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i) header += ',';
    header += csv_field(columns_[i]);
  }
  const std::size_t eol = text.find('\n');
  if (text.substr(0, eol) != header)
    throw IoError(fmt::format("cannot continue '{}': its columns are '{}', not '{}'",
                              path_.string(), text.substr(0, eol), header));
  body_.clear();
  for (std::size_t p = eol == std::string::npos ? text.size() : eol + 1; p < text.size();) {
    std::size_t q = text.find('\n', p);
    if (q == std::string::npos) q = text.size();
    const std::string line = text.substr(p, q - p);
    p = q + 1;
    if (line.empty()) continue;
    const double first = std::strtod(line.c_str(), nullptr);
    if (first < limit || (inclusive && first == limit)) body_ += line + '\n';
  }
}

void CsvLog::flush() {
  std::string text;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i) text += ',';
    text += csv_field(columns_[i]);
  }
  text += '\n';
  text += body_;
  write_text_atomic(path_, text);
}

}  // namespace gf::io
