// Hash mixing for the kernel IR's structural hashes. They name kernels, so
// they must not depend on addresses: the same kernel hashes the same in
// every process.
#pragma once

#include <cstddef>
#include <cstdint>

namespace switchyard::kernel_ir {

inline size_t hash_mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

}  // namespace switchyard::kernel_ir
