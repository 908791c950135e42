// SHA-256 through OpenSSL's EVP interface (libcrypto).
#include "runtime/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "runtime/runtime_error.h"

namespace switchyard {
namespace {

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

DigestContext start_digest() {
  DigestContext context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
    throw RuntimeError("sha256: cannot initialise the digest");
  return context;
}

std::string finish_digest(EVP_MD_CTX* context) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context, digest, &length) != 1) throw RuntimeError("sha256: cannot finish the digest");
  static const char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHexDigits[digest[i] >> 4]);
    hex.push_back(kHexDigits[digest[i] & 15]);
  }
  return hex;
}

}  // namespace

std::string sha256_hex(const void* data, size_t bytes) {
  DigestContext context = start_digest();
  if (EVP_DigestUpdate(context.get(), data, bytes) != 1) throw RuntimeError("sha256: cannot hash the data");
  return finish_digest(context.get());
}

std::string sha256_file_hex(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw RuntimeError("cannot open " + path);
  DigestContext context = start_digest();
  std::vector<unsigned char> chunk(1 << 20);
  while (size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get())) {
    if (EVP_DigestUpdate(context.get(), chunk.data(), got) != 1) throw RuntimeError("sha256: cannot hash " + path);
  }
  if (std::ferror(file.get())) throw RuntimeError("cannot read " + path);
  return finish_digest(context.get());
}

}  // namespace switchyard
