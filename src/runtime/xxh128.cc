// XXH3-128 through xxHash's streaming interface, header-only.
#include "runtime/xxh128.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/runtime_error.h"

namespace switchyard {

struct Xxh128::State {
  XXH3_state_t state;
};

Xxh128::Xxh128() : state_(std::make_unique<State>()) {
  if (XXH3_128bits_reset(&state_->state) != XXH_OK) throw RuntimeError("xxh128: cannot initialise the checksum");
}

Xxh128::~Xxh128() = default;

void Xxh128::update(const void* data, size_t bytes) {
  if (XXH3_128bits_update(&state_->state, data, bytes) != XXH_OK) throw RuntimeError("xxh128: cannot sum the data");
}

std::string Xxh128::hex() {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(&state_->state));
  static const char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof canonical.digest);
  for (unsigned char byte : canonical.digest) {
    hex.push_back(kHexDigits[byte >> 4]);
    hex.push_back(kHexDigits[byte & 15]);
  }
  return hex;
}

std::string xxh128_hex(const void* data, size_t bytes) {
  Xxh128 sum;
  sum.update(data, bytes);
  return sum.hex();
}

}  // namespace switchyard
