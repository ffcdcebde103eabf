// The one family of errors gridforge throws. They are raised where a fault is
// found and turned into a message and an exit code in app/ only (SPEC §2).
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace gf {

// Exit codes of SPEC §2.
enum ExitCode : int {
  kExitOk = 0,
  kExitRunFailed = 1,
  kExitBadInput = 2,
  kExitDevice = 3,
  kExitMismatch = 4,
  kExitInterrupted = 130,
};

// A place in a case file (1-based line and column), or on the command line.
struct SourceLoc {
  std::string file;  // case file path, or "command line" for KEY=VALUE overrides
  int line = 0;      // 0: unknown
  int col = 0;
  std::string str() const {
    if (line <= 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(col);
  }
};

// How a value from the user is quoted in a message: control characters as
// \xNN (so a message stays one line), and past `max` characters the first
// `max` and "… (N characters)", so a 100 kB expression is not echoed whole.
inline std::string shown(std::string_view s, std::size_t max = 80) {
  std::string out;
  std::size_t chars = 0, cut = std::string::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) {  // a UTF-8 continuation byte belongs to the last character
      if (cut == std::string::npos) out += char(c);
      continue;
    }
    if (++chars > max && cut == std::string::npos) cut = out.size();
    if (cut != std::string::npos) continue;
    if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  if (cut != std::string::npos) out += "… (" + std::to_string(chars) + " characters)";
  return out;
}

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const = 0;
};

// Bad case file, bad override or bad command line: exit 2. what() is the whole
// message "file:line:col: key.path: message".
class CaseError : public Error {
 public:
  CaseError(SourceLoc loc, std::string key, std::string message)
      : Error(format(loc, key, message)), loc_(std::move(loc)), key_(std::move(key)),
        message_(std::move(message)) {}
  int exit_code() const override { return kExitBadInput; }
  const SourceLoc& loc() const { return loc_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  static std::string format(const SourceLoc& loc, const std::string& key, const std::string& m) {
    std::string s = loc.str();
    if (!s.empty()) s += ": ";
    if (!key.empty()) s += key + ": ";
    return s + m;
  }
  SourceLoc loc_;
  std::string key_;
  std::string message_;
};

// Bad command line (not tied to a case file position): exit 2.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitBadInput; }
};

// No usable GPU, out of device memory: exit 3.
class DeviceError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitDevice; }
};

// A resource held by someone else: the output folder another run is
// writing (its lock, io/folder_lock.hpp). Exit 3, like a device in use.
class BusyError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitDevice; }
};

// The run failed: NaN/Inf, no convergence: exit 1.
class SolverError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitRunFailed; }
};

// A file could not be read or written: exit 1 (a missing input named by a
// case is a CaseError instead, raised by the loader).
class IoError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitRunFailed; }
};

// validate/compare found a difference: exit 4.
class MismatchError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitMismatch; }
};

}  // namespace gf
