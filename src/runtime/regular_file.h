// The one way the tools open a file they read whole or map: an artifact's
// manifest.json, model.so, weights.bin and device images, and .npy inputs.
// Only a regular file is opened (a device such as /dev/zero never ends, and
// opening a pipe waits for a writer forever), and its size is known before
// anything is read, hashed, mapped or allocated from it, so each caller
// checks it against what it expects first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace switchyard {

class RegularFile {
 public:
  // Throws RuntimeError "PATH: file not found", "PATH: cannot open: REASON"
  // or "PATH: is a pipe, not a regular file; NOTE" (a directory, a character
  // device, ...; `note`, when given, says what the caller reads). Opening
  // never blocks.
  explicit RegularFile(const std::string& path, const std::string& note = "");
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  const std::string& path() const { return path_; }
  int descriptor() const { return descriptor_; }
  // The size when it was opened; reads never go beyond it.
  uint64_t size() const { return size_; }

  // Throws RuntimeError "PATH: N bytes, more than LIMIT (M bytes)" when the
  // file is larger than `most_bytes`; `limit` names the limit for the user.
  void check_size_at_most(uint64_t most_bytes, const std::string& limit) const;
  // Reads exactly `bytes` at `offset`; throws RuntimeError naming the file
  // when it ends first or a read fails.
  void read_at(void* destination, size_t bytes, uint64_t offset) const;
  // The whole file (its size() bytes); check the size first.
  std::string read_all() const;

 private:
  std::string path_;
  int descriptor_ = -1;
  uint64_t size_ = 0;
};

}  // namespace switchyard
