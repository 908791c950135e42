// Opening regular files only, with their size known first (see regular_file.h).
#include "runtime/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {

// What a file that is not a regular file is, for the message.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

RegularFile::RegularFile(const std::string& path, const std::string& note) : path_(path) {
  // O_NONBLOCK: opening a pipe that has no writer returns at once instead
  // of waiting for one; it changes nothing for a regular file.
  descriptor_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (descriptor_ < 0) {
    if (errno == ENOENT) throw RuntimeError(path + ": file not found");
    throw RuntimeError(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(descriptor_, &status) != 0) {
    int error = errno;
    ::close(descriptor_);
    throw RuntimeError(path + ": cannot inspect: " + std::strerror(error));
  }
  if (!S_ISREG(status.st_mode)) {
    ::close(descriptor_);
    throw RuntimeError(path + ": is " + file_kind(status.st_mode) + ", not a regular file" +
                       (note.empty() ? "" : "; " + note));
  }
  size_ = uint64_t(status.st_size);
}

RegularFile::~RegularFile() { ::close(descriptor_); }

void RegularFile::check_size_at_most(uint64_t most_bytes, const std::string& limit) const {
  if (size_ > most_bytes)
    throw RuntimeError(path_ + ": " + std::to_string(size_) + " bytes, more than " + limit + " (" +
                       std::to_string(most_bytes) + " bytes)");
}

void RegularFile::read_at(void* destination, size_t bytes, uint64_t offset) const {
  const uint64_t begin = offset;
  char* out = static_cast<char*>(destination);
  while (bytes > 0) {
    ssize_t got = ::pread(descriptor_, out, bytes, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw RuntimeError(path_ + ": cannot read: " + std::strerror(errno));
    if (got == 0)
      throw RuntimeError(path_ + ": the file ended at byte " + std::to_string(offset) + " while reading from byte " +
                         std::to_string(begin) + " (it changed while it was read?)");
    out += got;
    bytes -= size_t(got);
    offset += uint64_t(got);
  }
}

std::string RegularFile::read_all() const {
  std::string text(size_t(size_), '\0');
  read_at(text.data(), text.size(), 0);
  return text;
}

}  // namespace switchyard
