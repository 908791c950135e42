// XXH3-128 checksums of artifact files, as lowercase hex. weights.bin is
// checked with it rather than SHA-256: the check guards against corrupt or
// truncated files (the manifest that holds the sum is not signed, so no
// hash here stops a deliberate edit), and at ~20 GB/s it costs ResNet-50's
// 100 MB about 5 ms where SHA-256 took 55 at load and again at compile.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace switchyard {

// A checksum fed piece by piece, for bytes summed as they are written.
class Xxh128 {
 public:
  Xxh128();
  ~Xxh128();
  Xxh128(const Xxh128&) = delete;
  Xxh128& operator=(const Xxh128&) = delete;
  void update(const void* data, size_t bytes);
  // 32 lowercase hex digits; call once, after the last update.
  std::string hex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// 32 lowercase hex digits.
std::string xxh128_hex(const void* data, size_t bytes);

}  // namespace switchyard
