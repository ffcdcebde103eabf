#include "core/background_writer.hpp"

#include <pthread.h>

#include <chrono>
#include <csignal>

namespace gf {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

BackgroundWriter::BackgroundWriter(int max_waiting)
    : max_waiting_(max_waiting < 1 ? 1 : max_waiting) {
  // SIGINT and SIGTERM stay with the main thread (the new thread inherits
  // this mask): the time loop polls the flag the handler raises there, and a
  // second Ctrl-C exits from it at once while this thread writes.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  thread_ = std::thread([this] { loop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundWriter::loop() {
  std::unique_lock<std::mutex> lk(m_);
  while (true) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    const bool failed = static_cast<bool>(error_);
    lk.unlock();
    const auto t0 = Clock::now();
    std::exception_ptr err;
    if (!failed) {
      try {
        task();
      } catch (...) {
        err = std::current_exception();
      }
    }
    task = nullptr;  // its buffers are released before the caller hears it is done
    const double s = since(t0);
    lk.lock();
    busy_s_ += s;
    if (err && !error_) error_ = err;
    ++done_;
    cv_.notify_all();
  }
}

void BackgroundWriter::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

std::uint64_t BackgroundWriter::submit(std::function<void()> task) {
  const auto t0 = Clock::now();
  std::unique_lock<std::mutex> lk(m_);
  cv_.wait(lk, [&] { return error_ || queue_.size() < std::size_t(max_waiting_); });
  waited_s_ += since(t0);
  rethrow_locked();
  queue_.push_back(std::move(task));
  const std::uint64_t ticket = ++submitted_;
  lk.unlock();
  cv_.notify_all();
  return ticket;
}

void BackgroundWriter::wait_for(std::uint64_t ticket) {
  const auto t0 = Clock::now();
  std::unique_lock<std::mutex> lk(m_);
  cv_.wait(lk, [&] { return done_ >= ticket; });
  waited_s_ += since(t0);
  rethrow_locked();
}

void BackgroundWriter::drain() {
  std::uint64_t last;
  {
    std::lock_guard<std::mutex> lk(m_);
    last = submitted_;
  }
  wait_for(last);
}

void BackgroundWriter::drain_quietly() noexcept {
  try {
    drain();
  } catch (...) {
  }
}

double BackgroundWriter::busy_s() {
  std::lock_guard<std::mutex> lk(m_);
  return busy_s_;
}

}  // namespace gf
