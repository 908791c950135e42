// Element type names, sizes and half-precision conversions.
#include "runtime/dtype.h"

#include <cmath>

namespace switchyard {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
    case DType::kFloat64: return "float64";
    case DType::kInt16: return "int16";
    case DType::kUInt16: return "uint16";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (name == dtype_name(t)) return t;
  return std::nullopt;
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kInt32: case DType::kUInt32: return 4;
    case DType::kFloat16: case DType::kBFloat16: case DType::kInt16: case DType::kUInt16: return 2;
    case DType::kInt64: case DType::kFloat64: case DType::kUInt64: return 8;
    case DType::kInt8: case DType::kUInt8: case DType::kBool: return 1;
  }
  return 0;
}

bool dtype_is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat64;
}
bool dtype_is_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 || dtype_is_unsigned(t);
}
bool dtype_is_unsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

const char* dtype_c_type(DType t) {
  switch (t) {
    case DType::kFloat32: return "float";
    case DType::kFloat16: case DType::kBFloat16: return "uint16_t";
    case DType::kInt8: return "int8_t";
    case DType::kInt32: return "int32_t";
    case DType::kInt64: return "int64_t";
    case DType::kUInt8: return "uint8_t";
    case DType::kBool: return "bool";
    case DType::kFloat64: return "double";
    case DType::kInt16: return "int16_t";
    case DType::kUInt16: return "uint16_t";
    case DType::kUInt32: return "uint32_t";
    case DType::kUInt64: return "uint64_t";
  }
  return "void";
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      float f = std::ldexp(float(mant), -24);
      std::memcpy(&bits, &f, 4);
      bits |= sign;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);  // inf/nan
  if (absx >= 0x477ff000u) return sign | 0x7c00;  // overflow to inf
  if (absx < 0x38800000u) {                       // subnormal or zero in half
    float a;
    std::memcpy(&a, &absx, 4);
    return sign | uint16_t(std::nearbyint(a * 16777216.0f));  // 2^24
  }
  uint32_t rounded = absx + 0xfffu + ((absx >> 13) & 1);  // round to nearest even
  return sign | uint16_t((rounded - 0x38000000u) >> 13);
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

}  // namespace switchyard
