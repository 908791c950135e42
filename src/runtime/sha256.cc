// SHA-256 through OpenSSL's EVP interface (libcrypto).
#include "runtime/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "runtime/regular_file.h"
#include "runtime/runtime_error.h"

namespace switchyard {

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
    throw RuntimeError("sha256: cannot initialise the digest");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void Sha256::update(const void* data, size_t bytes) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data, bytes) != 1)
    throw RuntimeError("sha256: cannot hash the data");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest, &length) != 1)
    throw RuntimeError("sha256: cannot finish the digest");
  static const char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHexDigits[digest[i] >> 4]);
    hex.push_back(kHexDigits[digest[i] & 15]);
  }
  return hex;
}

std::string sha256_hex(const void* data, size_t bytes) {
  Sha256 digest;
  digest.update(data, bytes);
  return digest.hex();
}

std::string sha256_file_hex(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw RuntimeError("cannot open " + path);
  Sha256 digest;
  std::vector<unsigned char> chunk(1 << 20);
  while (size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get())) digest.update(chunk.data(), got);
  if (std::ferror(file.get())) throw RuntimeError("cannot read " + path);
  return digest.hex();
}

std::string sha256_file_hex(const RegularFile& file) {
  Sha256 digest;
  std::vector<unsigned char> chunk(size_t(std::min<uint64_t>(file.size(), 1 << 20)));
  for (uint64_t at = 0; at < file.size(); at += chunk.size()) {
    size_t piece = size_t(std::min<uint64_t>(chunk.size(), file.size() - at));
    file.read_at(chunk.data(), piece, at);
    digest.update(chunk.data(), piece);
  }
  return digest.hex();
}

}  // namespace switchyard
