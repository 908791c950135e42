// SHA-256 content hashes of artifact files, as lowercase hex.
#pragma once

#include <cstddef>
#include <string>

namespace switchyard {

class RegularFile;

// A digest fed piece by piece, for bytes hashed as they are written.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t bytes);
  // 64 lowercase hex digits; call once, after the last update.
  std::string hex();

 private:
  void* context_;  // OpenSSL's EVP_MD_CTX
};

// 64 lowercase hex digits.
std::string sha256_hex(const void* data, size_t bytes);
// Hashes a whole file; throws RuntimeError naming the file when it cannot be read.
std::string sha256_file_hex(const std::string& path);
// Hashes the size() bytes an opened file had (regular_file.h).
std::string sha256_file_hex(const RegularFile& file);

}  // namespace switchyard
