#include "runtime/mapped_file.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"

namespace switchyard {

MappedFile::MappedFile(const RegularFile& file) : size_(file.size()) {
  if (size_ == 0) return;
  // Pages beyond the end of a file that shrank since it was opened would
  // fault when read.
  struct stat status {};
  if (fstat(file.descriptor(), &status) != 0 || uint64_t(status.st_size) < size_)
    throw RuntimeError(file.path() + " changed while it was loaded");
  // Not populated here: the loader hashes every page on a thread of its own,
  // which faults them in beside the primitives being made (populating cost
  // ResNet-50's load 4-7 ms on the thread that makes them).
  void* mapped = mmap(nullptr, size_t(size_), PROT_READ, MAP_PRIVATE, file.descriptor(), 0);
  if (mapped == MAP_FAILED)
    throw RuntimeError("cannot map " + file.path() + " into memory: " + std::strerror(errno));
  data_ = static_cast<unsigned char*>(mapped);
}

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_t(size_));
}

}  // namespace switchyard
