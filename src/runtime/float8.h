// Eight floats as one GCC vector, for the runtime's own kernels (the
// Winograd transforms, the packed matmul's epilogue, their post-ops), with
// loads and stores from any float address. They go through a vector type
// of float alignment rather than memcpy: GCC expands a 32-byte memcpy into
// two 16-byte moves, and a vector read back from two halves just stored
// waits for the store buffer (the Winograd transforms spent most of their
// time there). Vectors pass by reference: by value would change the ABI in
// code built without AVX (-Wpsabi).
#pragma once

namespace switchyard {

typedef float Float8 __attribute__((vector_size(8 * sizeof(float))));
typedef float UnalignedFloat8 __attribute__((vector_size(8 * sizeof(float)), aligned(alignof(float)), may_alias));

inline __attribute__((always_inline)) void load_float8(Float8& v, const float* p) {
  v = *reinterpret_cast<const UnalignedFloat8*>(p);
}
inline __attribute__((always_inline)) void store_float8(float* p, const Float8& v) {
  *reinterpret_cast<UnalignedFloat8*>(p) = v;
}

}  // namespace switchyard
