// Element types shared by the compiler and the runtime.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard {

// The numbers are part of the C API (SY_DTYPE_*, include/switchyard/runtime.h):
// new types are appended.
enum class DType : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kInt8,
  kInt32,
  kInt64,
  kUInt8,
  kBool,
  kFloat64,
  kInt16,
  kUInt16,
  kUInt32,
  kUInt64,
};

constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt8,   DType::kInt32,
                                DType::kInt64,   DType::kUInt8,   DType::kBool,     DType::kFloat64, DType::kInt16,
                                DType::kUInt16,  DType::kUInt32,  DType::kUInt64};

// "float32", "int64", ...
const char* dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
// Bytes per element.
int dtype_bytes(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);  // signed or unsigned integers, not bool
bool dtype_is_unsigned(DType t);  // uint8 ... uint64 (not bool)
// The C type used to hold one element in generated code ("float", "uint16_t", ...).
const char* dtype_c_type(DType t);

// IEEE half and bfloat16 conversions (round to nearest even).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
inline float bfloat16_to_float(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t float_to_bfloat16(float f);

}  // namespace switchyard
