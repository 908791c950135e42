// A file mapped read-only into memory. An artifact's CPU devices read their
// weights where weights.bin is mapped, hashed in place: reading ResNet-50's
// 100 MB into fresh memory cost ~80 ms of its load, and processes that load
// one artifact share its pages. The file must not be changed in place while
// mapped (artifacts are replaced by renaming, which keeps a mapped file).
#pragma once

#include <cstdint>
#include <string>

namespace switchyard {

class RegularFile;

class MappedFile {
 public:
  // Maps the size() bytes `file` had when it was opened (the caller has
  // checked that size); throws RuntimeError naming the file when it cannot
  // be mapped.
  explicit MappedFile(const RegularFile& file);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }  // null for an empty file
  uint64_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace switchyard
