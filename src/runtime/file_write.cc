// FileWriter: POSIX writes, so each failure has its errno.
#include "runtime/file_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/runtime_error.h"

namespace switchyard {

FileWriter::FileWriter(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw RuntimeError("cannot write " + path_ + ": " + std::strerror(errno));
  struct stat status {};
  regular_ = ::fstat(fd_, &status) == 0 && S_ISREG(status.st_mode);
}

void FileWriter::remove_partial() {
  if (regular_) ::unlink(path_.c_str());  // never a device or pipe named by the user
}

FileWriter::~FileWriter() {
  if (fd_ < 0) return;
  ::close(fd_);
  remove_partial();
}

void FileWriter::fail(int error) {
  ::close(fd_);
  fd_ = -1;
  remove_partial();
  throw RuntimeError("cannot write " + path_ + ": " + std::strerror(error));
}

void FileWriter::write(const void* data, size_t size) {
  auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd_, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    bytes += written;
    size -= size_t(written);
  }
}

void FileWriter::write_zeros(size_t count) {
  static const char zeros[4096] = {};
  while (count > 0) {
    size_t piece = std::min(count, sizeof zeros);
    write(zeros, piece);
    count -= piece;
  }
}

void FileWriter::finish() {
  // close() can report a delayed write error (NFS, quotas): it counts.
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int error = errno;
    remove_partial();
    throw RuntimeError("cannot write " + path_ + ": " + std::strerror(error));
  }
}

void write_whole_file(const std::string& path, std::string_view bytes) {
  FileWriter out(path);
  out.write(bytes.data(), bytes.size());
  out.finish();
}

}  // namespace switchyard
