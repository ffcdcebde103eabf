// One worker thread that runs a run's file writes in the order they were
// queued while the time loop goes on (solvers/run.cpp). std::thread and a
// condition variable: no library.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace gf {

class BackgroundWriter {
 public:
  // At most max_waiting tasks wait behind the one running; submit() blocks
  // beyond that, so memory held by queued tasks stays bounded.
  explicit BackgroundWriter(int max_waiting = 2);
  // Runs what is still queued (unless a task failed: then nothing more
  // runs), drops any error, and joins the thread.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues a task and returns its ticket (1, 2, ...). Throws the error of an
  // earlier task instead (the first one), once a task has failed: after a
  // failure no further task runs, it is only destroyed, as a synchronous
  // run would have stopped at the failed write.
  std::uint64_t submit(std::function<void()> task);
  // Waits until the task of this ticket (and every one before it) has run or
  // been dropped; throws the first error of any task.
  void wait_for(std::uint64_t ticket);
  // wait_for(every ticket given out).
  void drain();
  // drain() that keeps any error to itself: for a run already failing.
  void drain_quietly() noexcept;

  // Seconds the caller waited in submit, wait_for and drain.
  double waited_s() const { return waited_s_; }
  // Seconds the worker spent running tasks (read after drain()).
  double busy_s();

 private:
  void loop();
  void rethrow_locked();

  std::mutex m_;
  std::condition_variable cv_;  // every change of state; both sides wait on it
  std::deque<std::function<void()>> queue_;
  std::uint64_t submitted_ = 0, done_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
  double busy_s_ = 0;    // under m_
  double waited_s_ = 0;  // the caller's thread only
  int max_waiting_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace gf
