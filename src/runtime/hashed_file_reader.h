// Reads ranges of a file in order into memory and hashes every byte of the
// file as it goes, so loading an artifact reads weights.bin once (hashing
// it first and reading it again cost ResNet-50's load a second pass over
// its 100 MB).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/sha256.h"

namespace switchyard {

class HashedFileReader {
 public:
  // Throws RuntimeError naming the file when it cannot be opened.
  explicit HashedFileReader(const std::string& path);
  // Reads bytes [begin, end) into `destination`; `begin` is at or after the
  // end of the last range (the bytes between are hashed, not kept).
  void read(uint64_t begin, uint64_t end, void* destination);
  // Hashes the rest of the file, which must end at `size`; returns the
  // SHA-256 of all of it as 64 lowercase hex digits.
  std::string finish(uint64_t size);

 private:
  void hash_until(uint64_t position);
  std::string path_;
  std::unique_ptr<FILE, int (*)(FILE*)> file_;
  uint64_t position_ = 0;
  Sha256 digest_;
};

}  // namespace switchyard
