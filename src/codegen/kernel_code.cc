// The code writer, dtype spellings and helper functions of generated CPU code.
#include "codegen/kernel_code.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "support/identifier.h"

namespace switchyard {

void CodeWriter::line(const std::string& text) {
  if (!text.empty()) text_.append(size_t(depth_) * 2, ' ').append(text);
  text_ += '\n';
}

void CodeWriter::open(const std::string& header) {
  line(header + " {");
  ++depth_;
}

void CodeWriter::close(const std::string& suffix) {
  --depth_;
  line("}" + suffix);
}

void CodeWriter::next(const std::string& header) {
  --depth_;
  line("} " + header + " {");
  ++depth_;
}

void CodeWriter::append(const CodeWriter& other) { append(other.str()); }

void CodeWriter::append(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    line(text.substr(start, end - start));
    start = end + 1;
  }
}

namespace {

const char* kHalfHelpers = R"(// IEEE half precision <-> float, rounding to nearest even.
inline float sy_half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
  if (exponent == 0) {
    float magnitude = sy_ldexp(float(mantissa), -24);
    std::memcpy(&bits, &magnitude, 4);
    bits |= sign;
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}
inline uint16_t sy_float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return sign | 0x7c00 | (magnitude > 0x7f800000u ? 0x200 : 0);
  if (magnitude >= 0x477ff000u) return sign | 0x7c00;
  if (magnitude < 0x38800000u) {
    float a;
    std::memcpy(&a, &magnitude, 4);
    return sign | uint16_t(sy_nearbyint(a * 16777216.0f));
  }
  uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1);
  return sign | uint16_t((rounded - 0x38000000u) >> 13);
}
)";

const char* kBFloat16Helpers = R"(// bfloat16 <-> float, rounding to nearest even.
inline float sy_bfloat16_to_float(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}
inline uint16_t sy_float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}
)";

const char* kFloatToIntHelper = R"(// Float to integer as the reference does: truncate, saturate, NaN to 0.
inline int64_t sy_float_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return int64_t(v);
}
// To uint64, as the reference: from 2^63 exact, saturating; below, through int64.
inline uint64_t sy_float_to_uint64(double v) {
  if (v >= 18446744073709551615.0) return UINT64_MAX;
  if (v >= 9223372036854775808.0) return uint64_t(v);
  return uint64_t(sy_float_to_int64(v));
}
)";

const char* kIntegerDivideHelper = R"(// Integer division truncating toward zero, wrapping INT64_MIN / -1. A zero
// divisor is an error: it records the fault (the kernel reports it to the
// runtime when its loops end) and gives 0.
inline int64_t sy_divide_int(int64_t a, int64_t b, int* faults) {
  if (b == 0) {
    __atomic_fetch_or(faults, SY_FAULT_INTEGER_DIVISION_BY_ZERO, __ATOMIC_RELAXED);
    return 0;
  }
  if (b == -1) return int64_t(0ull - uint64_t(a));
  return a / b;
}
inline uint64_t sy_divide_uint64(uint64_t a, uint64_t b, int* faults) {
  if (b == 0) {
    __atomic_fetch_or(faults, SY_FAULT_INTEGER_DIVISION_BY_ZERO, __ATOMIC_RELAXED);
    return 0;
  }
  return a / b;
}
)";

const char* kIntegerPowerHelper = R"(// Integer power by squaring, wrapping. A negative exponent is an error:
// it records the fault and gives 0.
inline int64_t sy_power_int(int64_t base, int64_t exponent, int* faults) {
  if (exponent < 0) {
    __atomic_fetch_or(faults, SY_FAULT_NEGATIVE_INTEGER_EXPONENT, __ATOMIC_RELAXED);
    return 0;
  }
  uint64_t result = 1, factor = uint64_t(base);
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result *= factor;
    factor *= factor;
  }
  return int64_t(result);
}
)";

const char* kCheckedIndexHelper = R"(// An index into an axis of `extent` elements. One outside [0, extent) is an
// error: it records the fault and reads element 0.
inline int64_t sy_checked_index(int64_t index, int64_t extent, int* faults) {
  if (uint64_t(index) >= uint64_t(extent)) {
    __atomic_fetch_or(faults, SY_FAULT_INDEX_OUT_OF_RANGE, __ATOMIC_RELAXED);
    return 0;
  }
  return index;
}
)";

}  // namespace

std::string cpu_prelude() {
  // Guarded: several kernels' units may be compiled as one (the kernel tests do).
  return R"(#ifndef SY_CPU_PRELUDE
#define SY_CPU_PRELUDE
#define NAN __builtin_nanf("")
#define INFINITY __builtin_inff()
// Both values computed before the choice: vector blends, not branches.
template <typename T> inline T sy_select(bool condition, T if_true, T if_false) { return condition ? if_true : if_false; }
inline float sy_sqrt(float x) { return __builtin_sqrtf(x); }
inline double sy_sqrt(double x) { return __builtin_sqrt(x); }
inline float sy_floor(float x) { return __builtin_floorf(x); }
inline float sy_ceil(float x) { return __builtin_ceilf(x); }
inline float sy_nearbyint(float x) { return __builtin_nearbyintf(x); }
inline float sy_pow(float x, float y) { return __builtin_powf(x, y); }
inline double sy_pow(double x, double y) { return __builtin_pow(x, y); }
inline float sy_fabs(float x) { return __builtin_fabsf(x); }
inline float sy_fmod(float x, float y) { return __builtin_fmodf(x, y); }
inline double sy_fmod(double x, double y) { return __builtin_fmod(x, y); }
inline float sy_sin(float x) { return __builtin_sinf(x); }
inline float sy_cos(float x) { return __builtin_cosf(x); }
inline float sy_tan(float x) { return __builtin_tanf(x); }
inline float sy_asin(float x) { return __builtin_asinf(x); }
inline float sy_acos(float x) { return __builtin_acosf(x); }
inline float sy_atan(float x) { return __builtin_atanf(x); }
inline float sy_sinh(float x) { return __builtin_sinhf(x); }
inline float sy_cosh(float x) { return __builtin_coshf(x); }
inline float sy_asinh(float x) { return __builtin_asinhf(x); }
inline float sy_acosh(float x) { return __builtin_acoshf(x); }
inline float sy_atanh(float x) { return __builtin_atanhf(x); }
// float64 computes through the C library's double functions, as the reference does.
inline double sy_floor(double x) { return __builtin_floor(x); }
inline double sy_ceil(double x) { return __builtin_ceil(x); }
inline double sy_nearbyint(double x) { return __builtin_nearbyint(x); }
inline double sy_fabs(double x) { return __builtin_fabs(x); }
inline double sy_sin(double x) { return __builtin_sin(x); }
inline double sy_cos(double x) { return __builtin_cos(x); }
inline double sy_tan(double x) { return __builtin_tan(x); }
inline double sy_asin(double x) { return __builtin_asin(x); }
inline double sy_acos(double x) { return __builtin_acos(x); }
inline double sy_atan(double x) { return __builtin_atan(x); }
inline double sy_sinh(double x) { return __builtin_sinh(x); }
inline double sy_cosh(double x) { return __builtin_cosh(x); }
inline double sy_asinh(double x) { return __builtin_asinh(x); }
inline double sy_acosh(double x) { return __builtin_acosh(x); }
inline double sy_atanh(double x) { return __builtin_atanh(x); }
inline float sy_copysign(float x, float sign) { return __builtin_copysignf(x, sign); }
inline float sy_ldexp(float x, int exponent) { return __builtin_ldexpf(x, exponent); }
inline int64_t sy_min(int64_t a, int64_t b) { return b < a ? b : a; }
#endif

)";
}

std::string cpu_helper_definitions(const std::set<CpuHelper>& helpers) {
  std::string out;
  for (CpuHelper h : helpers) {
    switch (h) {
      case CpuHelper::kHalf: out += kHalfHelpers; break;
      case CpuHelper::kBFloat16: out += kBFloat16Helpers; break;
      case CpuHelper::kFloatToInt: out += kFloatToIntHelper; break;
      case CpuHelper::kIntegerDivide: out += kIntegerDivideHelper; break;
      case CpuHelper::kIntegerPower: out += kIntegerPowerHelper; break;
      case CpuHelper::kCheckedIndex: out += kCheckedIndexHelper; break;
      case CpuHelper::kFloatMath: out += cpu_math_definitions(); break;
    }
  }
  return out;
}

bool helpers_may_fault(const std::set<CpuHelper>& helpers) {
  return helpers.count(CpuHelper::kIntegerDivide) || helpers.count(CpuHelper::kIntegerPower) ||
         helpers.count(CpuHelper::kCheckedIndex);
}

// float16 and bfloat16 compute in float; float64 in double.
std::string compute_type(DType dtype) {
  return dtype_is_float(dtype) && dtype != DType::kFloat64 ? "float" : dtype_c_type(dtype);
}

std::string storage_type(DType dtype) { return dtype_c_type(dtype); }

std::string load_element(DType dtype, const std::string& element, std::set<CpuHelper>* helpers) {
  switch (dtype) {
    case DType::kFloat16:
      helpers->insert(CpuHelper::kHalf);
      return "sy_half_to_float(" + element + ")";
    case DType::kBFloat16:
      helpers->insert(CpuHelper::kBFloat16);
      return "sy_bfloat16_to_float(" + element + ")";
    default: return element;
  }
}

std::string store_value(DType dtype, const std::string& value, std::set<CpuHelper>* helpers) {
  switch (dtype) {
    case DType::kFloat16:
      helpers->insert(CpuHelper::kHalf);
      return "sy_float_to_half(" + value + ")";
    case DType::kBFloat16:
      helpers->insert(CpuHelper::kBFloat16);
      return "sy_float_to_bfloat16(" + value + ")";
    default: return value;
  }
}

std::string round_to_dtype(DType dtype, const std::string& value, std::set<CpuHelper>* helpers) {
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16) return value;
  return load_element(dtype, store_value(dtype, value, helpers), helpers);
}

std::string literal(DType dtype, double value) {
  if (dtype == DType::kBool) return value != 0 ? "true" : "false";
  if (dtype_is_float(dtype)) {
    if (std::isnan(value)) return "NAN";
    if (std::isinf(value)) return value > 0 ? "INFINITY" : "-INFINITY";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, dtype == DType::kFloat64 ? "%.17g" : "%.9g", value);
    std::string text = buffer;
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    return dtype == DType::kFloat64 ? text : text + "f";
  }
  int64_t integer = int64_t(value);
  if (integer == std::numeric_limits<int64_t>::min()) return "INT64_MIN";
  return storage_type(dtype) + "(" + std::to_string(integer) + ")";
}

std::string identifier(const std::string& name) {
  return c_identifier(name.rfind("nn.", 0) == 0 ? name.substr(3) : name, "v");
}

std::string parenthesize(const std::string& e) {
  bool number = !e.empty() && std::isdigit(static_cast<unsigned char>(e[0]));
  for (size_t i = 0; i < e.size(); ++i) {
    char c = e[i];
    bool exponent_sign = number && (c == '+' || c == '-') && i > 0 && e[i - 1] == 'e';
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && !(number && c == '.') && !exponent_sign)
      return "(" + e + ")";
  }
  return e;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

std::string span_comment(const Span& span) { return span.defined() ? "  // " + span.to_string() : ""; }

std::string at_span(const Span& span) { return span.defined() ? " at " + span.to_string() : ""; }

std::string double_literal(double value) {
  if (std::isnan(value)) return "NAN";
  if (std::isinf(value)) return value > 0 ? "INFINITY" : "-INFINITY";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string kernel_value_type(DType dtype, kernel_ir::Precision precision) {
  if (precision == kernel_ir::Precision::kCompute) return compute_type(dtype);
  return dtype_is_float(dtype) ? "double" : "uint64_t";
}

}  // namespace switchyard
