#include "runtime/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/runtime_error.h"

namespace switchyard {

MappedFile::MappedFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw RuntimeError("cannot open " + path + ": " + std::strerror(errno));
  struct stat status {};
  if (fstat(fd, &status) != 0) {
    int error = errno;
    close(fd);
    throw RuntimeError("cannot read the size of " + path + ": " + std::strerror(error));
  }
  size_ = uint64_t(status.st_size);
  if (size_ > 0) {
    // Not populated here: the loader hashes every page on a thread of its own,
    // which faults them in beside the primitives being made (populating cost
    // ResNet-50's load 4-7 ms on the thread that makes them).
    void* mapped = mmap(nullptr, size_t(size_), PROT_READ, MAP_PRIVATE, fd, 0);
    int error = errno;
    close(fd);
    if (mapped == MAP_FAILED) throw RuntimeError("cannot map " + path + " into memory: " + std::strerror(error));
    data_ = static_cast<unsigned char*>(mapped);
  } else {
    close(fd);
  }
}

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_t(size_));
}

}  // namespace switchyard
