// SHA-256 content hashes of artifact files, as lowercase hex.
#pragma once

#include <cstddef>
#include <string>

namespace switchyard {

// 64 lowercase hex digits.
std::string sha256_hex(const void* data, size_t bytes);
// Hashes a whole file; throws RuntimeError naming the file when it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace switchyard
