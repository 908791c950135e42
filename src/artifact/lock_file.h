// Taking turns across processes through a lock file: an exclusive flock on
// PATH, held for the scope of a LockFile. The file is removed as the lock is
// released, so no lock file outlives the work it guarded unless its holder
// was killed (the next holder removes it); a holder checks after locking
// that PATH still names the file it locked, so a waiter that locked a file
// removed meanwhile tries again. flock locks are released by the kernel when
// their holder dies, so a killed holder never blocks the others.
#pragma once

#include <string>

namespace switchyard {

class LockFile {
 public:
  // Waits until this process holds `path` (created when absent; anything
  // else found there, such as a directory, is removed). A signal caught by
  // the interrupt handlers (interrupt.h) ends the wait with their Error.
  // Error(kBackend) "cannot create PATH: REASON" (or lock) when it cannot be
  // created or locked.
  explicit LockFile(std::string path);
  ~LockFile();
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace switchyard
