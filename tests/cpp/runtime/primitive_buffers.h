// The buffers the primitive tests hand a primitive: random values in
// [-1, 1), dense row-major strides, and workspace memory aligned to 64
// bytes as artifacts give it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace switchyard::testing {

inline std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> values(n);
  for (float& v : values) v = value(generator);
  return values;
}

inline std::vector<int64_t> dense(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

struct Workspace {
  explicit Workspace(size_t bytes) : storage(bytes + 64) {}
  void* get() {
    auto base = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<void*>((base + 63) / 64 * 64);
  }
  std::vector<unsigned char> storage;
};

}  // namespace switchyard::testing
