#include "solvers/output_writer.hpp"

#include <spdlog/spdlog.h>

#include <exception>
#include <stdexcept>

namespace gf {

template <class T>
OutputWriter<T>::OutputWriter(Backend<T>& backend, const Grid& grid, bool background,
                              std::string why)
    : be_(backend), grid_(grid), why_(std::move(why)), timer_(backend.make_timer()) {
  // Queued fields: the next step's field waits for the snapshot slot anyway
  // (frames have a thread of their own: task()).
  if (background) writer_ = std::make_unique<BackgroundWriter>(2);
}

template <class T>
OutputWriter<T>::~OutputWriter() {
  frames_.reset();
  writer_.reset();  // runs what is queued and joins, while the snapshots still exist
}

template <class T>
void OutputWriter<T>::field(const Field<T>& f, std::function<void(const T*)> write) {
  fields({&f}, [write = std::move(write)](const std::vector<const T*>& h) { write(h[0]); });
}

template <class T>
void OutputWriter<T>::fields(const std::vector<const Field<T>*>& fs,
                             std::function<void(const std::vector<const T*>&)> write) {
  const int nf = int(fs.size());
  if (writer_ && !tried_snapshots_) {
    tried_snapshots_ = true;
    per_output_ = nf;
    std::string why;
    snaps_ = be_.make_snapshots(grid_, kSnapshotSlots * nf, &why);
    if (snaps_) {
      slot_ticket_.assign(std::size_t(kSnapshotSlots), 0);
    } else {
      why_ = "no memory for the snapshot: " + why;
      spdlog::info("outputs: written in turn by the time loop ({})", why_);
    }
  }
  if (!snaps_) {
    // In turn: download, write (frames go on meanwhile on their own thread).
    timer_->start();
    host_.resize(fs.size());
    std::vector<const T*> h;
    for (std::size_t k = 0; k < fs.size(); ++k) {
      host_[k].resize(fs[k]->points());
      be_.download(*fs[k], host_[k].data());
      h.push_back(host_[k].data());
    }
    download_ms_ += timer_->stop_ms();
    write(h);
    return;
  }
  if (nf != per_output_)
    throw std::logic_error("OutputWriter::fields: another number of fields than the run's first output");
  const int g = next_group_;
  next_group_ = (g + 1) % kSnapshotSlots;
  if (slot_ticket_[std::size_t(g)]) writer_->wait_for(slot_ticket_[std::size_t(g)]);
  timer_->start();
  for (int k = 0; k < nf; ++k) snaps_->take(*fs[std::size_t(k)], g * nf + k);
  download_ms_ += timer_->stop_ms();
  Snapshots<T>* snaps = snaps_.get();
  slot_ticket_[std::size_t(g)] = writer_->submit([snaps, g, nf, write = std::move(write)] {
    std::vector<const T*> h;
    for (int k = 0; k < nf; ++k) {
      snaps->wait(g * nf + k);
      h.push_back(snaps->host(g * nf + k));
    }
    write(h);
  });
}

template <class T>
void OutputWriter<T>::task(std::function<void()> write) {
  if (!writer_) return write();
  // Frames queue on their own: a frame is small, a field's files may take a
  // while; two frames' images held waiting at most (InSituFrames' buffers).
  if (!frames_) frames_ = std::make_unique<BackgroundWriter>(1);
  frames_->submit(std::move(write));
}

template <class T>
void OutputWriter<T>::drain() {
  // Both threads, whatever the other's outcome; then the first error (its own type).
  std::exception_ptr first;
  for (BackgroundWriter* w : {writer_.get(), frames_.get()}) {
    if (!w) continue;
    try {
      w->drain();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

template <class T>
std::string OutputWriter<T>::drain_quietly() noexcept {
  std::string err = writer_ ? drain_one(*writer_) : "";
  const std::string frames = frames_ ? drain_one(*frames_) : "";
  return err.empty() ? frames : err;
}

template <class T>
std::string OutputWriter<T>::drain_one(BackgroundWriter& w) noexcept {
  try {
    w.drain();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown error in the output writer";
  }
  return "";
}

template <class T>
nlohmann::json OutputWriter<T>::summary() {
  nlohmann::json j = {{"background", writer_ && (snaps_ || !tried_snapshots_)}};
  if (writer_) {
    j["writer_busy_s"] = writer_->busy_s();
    j["waited_s"] = writer_->waited_s() + (frames_ ? frames_->waited_s() : 0.0);
    if (frames_) j["frames_busy_s"] = frames_->busy_s();
  }
  if (!why_.empty()) j["why"] = why_;
  return j;
}

template class OutputWriter<float>;
template class OutputWriter<double>;

}  // namespace gf
