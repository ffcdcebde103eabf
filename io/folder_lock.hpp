// One run at a time per output folder: the lock file ".gridforge.lock" in
// the folder, held with flock() for as long as the FolderLock lives. The
// kernel drops the lock when its holder dies (SIGKILL included), so a lock
// file left by a dead run never blocks the next one.
#pragma once
#include <filesystem>

namespace gf::io {

inline constexpr const char* kLockFile = ".gridforge.lock";

class FolderLock {
 public:
  // Takes the lock of `dir` (which exists) without waiting. Throws BusyError
  // (exit 3) naming the folder and the holder's pid when another process
  // holds it, IoError when the lock file cannot be made.
  explicit FolderLock(const std::filesystem::path& dir);
  // Throws the same BusyError when another process holds the lock of `dir`
  // now; creates and changes nothing (a check before the folder's files are
  // looked at, so that a running run's folder reads as in use).
  static void check_free(const std::filesystem::path& dir);
  ~FolderLock();  // removes the lock file, then lets go of it
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace gf::io
