// Where a run's outputs are written: by a background thread from snapshots
// of the field, so that the time steps go on meanwhile (the default on one
// rank), or in turn in the time loop. solvers/run.cpp drives it; the files
// and their contents are the same either way.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/background_writer.hpp"
#include "kernels/backend.hpp"

namespace gf {

template <class T>
class OutputWriter {
 public:
  // background false: everything is written in the caller's thread, and
  // `why` says why (timing.json). grid: the fields' grid (rank-local).
  OutputWriter(Backend<T>& backend, const Grid& grid, bool background, std::string why);
  // Runs what is queued (errors dropped: a run that is failing already) and
  // joins the writer's thread.
  ~OutputWriter();
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  bool background() const { return writer_ != nullptr; }

  // Writes f as it stands now: write(host values) runs on the writer's
  // thread with a snapshot (the call waits first until the snapshot's buffer
  // is free, i.e. until the previous field is written), or here after a
  // download. Throws the error of an earlier write (IoError: no space left,
  // ...). write must not touch what the caller's thread uses meanwhile.
  void field(const Field<T>& f, std::function<void(const T*)> write);
  // The same for several fields of the grid at once (a pde run's): write
  // gets their host values in the order given. Every call of a run passes
  // the same number of fields.
  void fields(const std::vector<const Field<T>*>& fs,
              std::function<void(const std::vector<const T*>&)> write);
  // A write that needs no snapshot (an in-situ frame's PNG): queued on a
  // thread of its own (started at the first, so that a frame never waits
  // behind a field's files, nor a field behind a frame), or run here.
  void task(std::function<void()> write);
  // What the in-situ frames hand their encoding to: task() when writing in
  // the background, empty (write in turn) otherwise.
  std::function<void(std::function<void()>)> queue() {
    if (!background()) return {};
    return [this](std::function<void()> t) { task(std::move(t)); };
  }
  // Returns once everything queued (fields and frames) is written; throws
  // the first write error.
  void drain();
  // drain() for a run that fails for another reason: an error of the writer
  // is returned as its message ("" when none) instead of thrown.
  std::string drain_quietly() noexcept;

  // Milliseconds the caller spent taking the fields' copies: on the GPU the
  // device-to-device copy (CUDA events), synchronously the whole download.
  double download_ms() const { return download_ms_; }
  // timing.json's "output_writer".
  nlohmann::json summary();

 private:
  Backend<T>& be_;
  Grid grid_;
  std::string why_;
  std::unique_ptr<Timer> timer_;
  double download_ms_ = 0;
  std::vector<std::vector<T>> host_;  // the synchronous path's downloads, one a field
  bool tried_snapshots_ = false;
  std::unique_ptr<Snapshots<T>> snaps_;
  int per_output_ = 1;  // snapshot slots an output takes: one a field
  std::vector<std::uint64_t> slot_ticket_;  // the writer's task using each group of slots (0: none)
  int next_group_ = 0;
  static std::string drain_one(BackgroundWriter& w) noexcept;  // its error's message, or ""

  std::unique_ptr<BackgroundWriter> writer_;  // last: joined before the buffers go
  std::unique_ptr<BackgroundWriter> frames_;  // task()'s thread, once there is one
};

// Snapshot buffers of the field: one is enough for the overlap (the steps
// between two outputs run while the previous output is written); a second
// would only absorb an output that writes slower than the others.
inline constexpr int kSnapshotSlots = 1;

}  // namespace gf
