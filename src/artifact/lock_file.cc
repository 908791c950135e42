// LockFile: flock with a polled wait, so that an interrupt ends it (flock
// itself is restarted after a signal handled with SA_RESTART).
#include "artifact/lock_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "support/error.h"
#include "toolchain/interrupt.h"

namespace switchyard {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw Error(ErrorKind::kBackend, "cannot " + what + " " + path + ": " + std::strerror(error));
}

// An open descriptor of the regular file at `path`, created when absent.
int open_lock_file(const std::string& path) {
  for (int attempt = 0;; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) return fd;
    int error = errno;
    struct stat found {};
    // A directory, a link or a socket where the lock file belongs: a leftover
    // of something else, removed once; a second failure is not ours to fix.
    if (attempt > 0 || lstat(path.c_str(), &found) != 0 || S_ISREG(found.st_mode)) fail("create", path, error);
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
}

// Whether `path` still names the file open as `fd`.
bool still_named(int fd, const std::string& path) {
  struct stat held {}, named {};
  return fstat(fd, &held) == 0 && lstat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

LockFile::LockFile(std::string path) : path_(std::move(path)) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    fd_ = open_lock_file(path_);
    while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        int error = errno;
        ::close(fd_);
        fail("lock", path_, error);
      }
      if (interrupting_signal()) {
        ::close(fd_);
        throw_if_interrupted();
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
    if (still_named(fd_, path_)) return;
    ::close(fd_);  // its holder removed it as it finished: lock the one there now
  }
}

LockFile::~LockFile() {
  // Removed while still held, so that whoever locks it next finds it gone and
  // locks the file that replaces it.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace switchyard
