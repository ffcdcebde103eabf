#include "io/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gf::io {

namespace {

// The holder's pid as it wrote it ("" when it has not yet).
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, std::size_t(n)) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

FolderLock::FolderLock(const std::filesystem::path& dir) : path_(dir / kLockFile) {
  // A holder removes the file before it lets go: a lock taken on a file
  // that is no longer at the path is worth nothing, so try again.
  for (;;) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw IoError(fmt::format("cannot lock output folder '{}': {}", dir.string(),
                                std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) < 0) {
      const int err = errno;
      const std::string pid = holder_of(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw BusyError(fmt::format(
            "output folder '{}' is in use by another gridforge run{}; wait for it to end or "
            "choose another --out",
            dir.string(), pid.empty() ? "" : " (pid " + pid + ")"));
      throw IoError(
          fmt::format("cannot lock output folder '{}': {}", dir.string(), std::strerror(err)));
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &now) == 0 &&
        held.st_ino == now.st_ino && held.st_dev == now.st_dev) {
      fd_ = fd;
      break;
    }
    ::close(fd);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

void FolderLock::check_free(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kLockFile;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // no lock file: no holder
  if (::flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
    const std::string pid = holder_of(fd);
    ::close(fd);
    throw BusyError(fmt::format(
        "output folder '{}' is in use by another gridforge run{}; wait for it to end or "
        "choose another --out",
        dir.string(), pid.empty() ? "" : " (pid " + pid + ")"));
  }
  ::close(fd);  // lets go of the lock if it was taken
}

FolderLock::~FolderLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace gf::io
