// Text forms of numbers, attribute values and constants (see literals.h).
#include "text/literals.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/type.h"
#include "runtime/clipped_text.h"

namespace switchyard {

namespace {

// Quiet NaN with an empty payload: the only NaN written as "nan"; any other
// NaN bit pattern falls back to base64 so that it reads back bit-exactly.
constexpr uint32_t kFloat32NaN = 0x7fc00000u;
constexpr uint32_t kFloat32Inf = 0x7f800000u;
constexpr uint16_t kFloat16NaN = 0x7e00u;
constexpr uint16_t kFloat16Inf = 0x7c00u;
constexpr uint16_t kBFloat16NaN = 0x7fc0u;
constexpr uint16_t kBFloat16Inf = 0x7f80u;
constexpr uint64_t kFloat64NaN = 0x7ff8000000000000ull;
constexpr uint64_t kFloat64Inf = 0x7ff0000000000000ull;

std::string float32_text(float value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

// The shortest text whose float reading converts back to `bits` through
// `to_bits` (float16/bfloat16 have no std::to_chars of their own).
template <typename ToBits>
std::string shortest_half_text(float value, uint16_t bits, ToBits to_bits) {
  char buffer[48];
  for (int precision = 1; precision <= 12; ++precision) {
    auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, precision);
    float back = 0;
    std::from_chars(buffer, result.ptr, back);
    if (to_bits(back) == bits) return std::string(buffer, result.ptr);
  }
  return float32_text(value);
}

// Non-finite values use the same words for every float type.
std::optional<std::string> special_text(bool negative, bool is_nan, bool canonical_nan) {
  if (is_nan && !canonical_nan) return std::nullopt;
  return std::string(negative ? "-" : "") + (is_nan ? "nan" : "inf");
}

template <typename T>
T element_of(const uint8_t* bytes, int64_t i) {
  T value;
  std::memcpy(&value, bytes + sizeof(T) * size_t(i), sizeof(T));
  return value;
}

// Element `i` as text, or nullopt when no decimal text reproduces its bits
// (a NaN with a payload, a bool byte other than 0 or 1).
std::optional<std::string> element_text(const NDArray& a, int64_t i) {
  const uint8_t* bytes = static_cast<const uint8_t*>(a.data());
  switch (a.dtype()) {
    case DType::kFloat32: {
      uint32_t bits;
      std::memcpy(&bits, bytes + 4 * i, 4);
      uint32_t magnitude = bits & 0x7fffffffu;
      if ((magnitude & kFloat32Inf) == kFloat32Inf)
        return special_text(bits >> 31, magnitude != kFloat32Inf, magnitude == kFloat32NaN);
      float value;
      std::memcpy(&value, &bits, 4);
      return float32_text(value);
    }
    case DType::kFloat16: {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * i, 2);
      uint16_t magnitude = bits & 0x7fffu;
      if ((magnitude & kFloat16Inf) == kFloat16Inf)
        return special_text(bits >> 15, magnitude != kFloat16Inf, magnitude == kFloat16NaN);
      return shortest_half_text(half_to_float(bits), bits, [](float f) { return float_to_half(f); });
    }
    case DType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * i, 2);
      uint16_t magnitude = bits & 0x7fffu;
      if ((magnitude & kBFloat16Inf) == kBFloat16Inf)
        return special_text(bits >> 15, magnitude != kBFloat16Inf, magnitude == kBFloat16NaN);
      return shortest_half_text(bfloat16_to_float(bits), bits, [](float f) { return float_to_bfloat16(f); });
    }
    case DType::kFloat64: {
      uint64_t bits;
      std::memcpy(&bits, bytes + 8 * i, 8);
      uint64_t magnitude = bits & 0x7fffffffffffffffull;
      if ((magnitude & kFloat64Inf) == kFloat64Inf)
        return special_text(bits >> 63, magnitude != kFloat64Inf, magnitude == kFloat64NaN);
      double value;
      std::memcpy(&value, &bits, 8);
      char buffer[40];
      auto result = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest that reads back
      return std::string(buffer, result.ptr);
    }
    case DType::kBool:
      if (bytes[i] > 1) return std::nullopt;
      return std::string(bytes[i] ? "True" : "False");
    case DType::kInt8: return std::to_string(int(reinterpret_cast<const int8_t*>(bytes)[i]));
    case DType::kInt16: return std::to_string(element_of<int16_t>(bytes, i));
    case DType::kUInt16: return std::to_string(element_of<uint16_t>(bytes, i));
    case DType::kUInt32: return std::to_string(element_of<uint32_t>(bytes, i));
    case DType::kUInt64: return std::to_string(element_of<uint64_t>(bytes, i));
    case DType::kUInt8: return std::to_string(int(bytes[i]));
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, bytes + 4 * i, 4);
      return std::to_string(v);
    }
    case DType::kInt64: {
      int64_t v;
      std::memcpy(&v, bytes + 8 * i, 8);
      return std::to_string(v);
    }
  }
  return std::nullopt;
}

const char* scalar_suffix(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "f";
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
    case DType::kInt8: return "i8";
    case DType::kInt32: return "";
    case DType::kInt64: return "i64";
    case DType::kUInt8: return "u8";
    case DType::kBool: return "";
    case DType::kFloat64: return "f64";
    case DType::kInt16: return "i16";
    case DType::kUInt16: return "u16";
    case DType::kUInt32: return "u32";
    case DType::kUInt64: return "u64";
  }
  return "";
}

std::optional<DType> dtype_of_suffix(std::string_view suffix, bool float_form) {
  if (suffix.empty()) return float_form ? DType::kFloat32 : DType::kInt32;
  if (suffix == "f" || suffix == "f32") return DType::kFloat32;
  for (DType dtype : kAllDTypes)
    if (dtype != DType::kBool && dtype != DType::kInt32 && suffix == scalar_suffix(dtype)) return dtype;
  if (suffix == "i32") return DType::kInt32;
  return std::nullopt;
}

// Reads a float32 or float64 from text: a decimal number, "nan", "inf", with an optional '-'.
template <typename Float>
std::string read_float(std::string_view text, Float* out) {
  using Bits = std::conditional_t<sizeof(Float) == 4, uint32_t, uint64_t>;
  constexpr Bits kNaN = sizeof(Float) == 4 ? Bits(kFloat32NaN) : Bits(kFloat64NaN);
  constexpr Bits kInf = sizeof(Float) == 4 ? Bits(kFloat32Inf) : Bits(kFloat64Inf);
  constexpr Bits kSign = Bits(1) << (8 * sizeof(Float) - 1);
  bool negative = !text.empty() && text[0] == '-';
  std::string_view body = negative ? text.substr(1) : text;
  if (body == "nan" || body == "inf") {
    Bits bits = (body == "nan" ? kNaN : kInf) | (negative ? kSign : Bits(0));
    std::memcpy(out, &bits, sizeof bits);
    return "";
  }
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.'))
    return "'" + clipped_text(text) + "' is not a number";
  auto result = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (result.ec == std::errc::result_out_of_range)
    return "'" + clipped_text(text) + "' is out of range for " + (sizeof(Float) == 4 ? "float32" : "float64");
  if (result.ec != std::errc() || result.ptr != text.data() + text.size())
    return "'" + clipped_text(text) + "' is not a number";
  return "";
}

// Half types keep their own NaN/inf patterns; finite values round from float.
template <typename ToBits>
std::string read_half(std::string_view text, uint16_t nan_bits, uint16_t inf_bits, ToBits to_bits, uint16_t* out) {
  float value;
  std::string error = read_float(text, &value);
  if (!error.empty()) return error;
  if (std::isnan(value)) *out = nan_bits | (std::signbit(value) ? 0x8000u : 0u);
  else if (std::isinf(value)) *out = inf_bits | (std::signbit(value) ? 0x8000u : 0u);
  else *out = to_bits(value);
  return "";
}

}  // namespace

bool is_integer_text(std::string_view text) {
  size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
  if (start == text.size()) return false;
  for (size_t i = start; i < text.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  return true;
}

std::string double_text(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[40];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (is_integer_text(text)) text += ".0";
  return text;
}

namespace {
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string attr_value_text(const AttrValue& value) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return double_text(d); }
    std::string operator()(const std::string& s) const { return quoted(s); }
    std::string operator()(const std::vector<int64_t>& list) const {
      std::string out = "[";
      for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + std::to_string(list[i]);
      return out + "]";
    }
    std::string operator()(const std::vector<double>& list) const {
      std::string out = "[";
      for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + double_text(list[i]);
      return out + "]";
    }
    std::string operator()(const std::vector<std::string>& list) const {
      std::string out = "[";
      for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + quoted(list[i]);
      return out + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

std::string constant_text(const NDArray& data) {
  int64_t count = data.numel();
  std::string type = type_to_string(tensor_type(data.shape(), data.dtype()));
  if (data.ndim() == 0) {
    if (std::optional<std::string> element = element_text(data, 0)) {
      if (data.dtype() == DType::kBool) return *element;
      return *element + scalar_suffix(data.dtype());
    }
  } else if (count <= kMaxInlineElements) {
    std::string out = type + "{";
    bool exact = true;
    for (int64_t i = 0; i < count && exact; ++i) {
      std::optional<std::string> element = element_text(data, i);
      exact = element.has_value();
      if (exact) out += (i ? ", " : "") + *element;
    }
    if (exact) return out + "}";
  }
  return type + "{b64\"" + base64_encode(data.data(), data.nbytes()) + "\"}";
}

namespace {
constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(const void* data, size_t size) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    uint32_t group = uint32_t(bytes[i]) << 16;
    if (i + 1 < size) group |= uint32_t(bytes[i + 1]) << 8;
    if (i + 2 < size) group |= bytes[i + 2];
    out += kBase64Alphabet[(group >> 18) & 63];
    out += kBase64Alphabet[(group >> 12) & 63];
    out += i + 1 < size ? kBase64Alphabet[(group >> 6) & 63] : '=';
    out += i + 2 < size ? kBase64Alphabet[group & 63] : '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  auto value_of = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int padding = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (padding == 1 && text[i + 2] == '=') return std::nullopt;
    uint32_t group = 0;
    for (int k = 0; k < 4; ++k) {
      int v = k >= 4 - padding ? 0 : value_of(text[i + k]);
      if (v < 0) return std::nullopt;
      group = group << 6 | uint32_t(v);
    }
    out += char(group >> 16);
    if (padding < 2) out += char((group >> 8) & 255);
    if (padding < 1) out += char(group & 255);
  }
  return out;
}

std::string set_element_from_text(NDArray& array, int64_t index, std::string_view text) {
  uint8_t* bytes = static_cast<uint8_t*>(array.data());
  DType dtype = array.dtype();
  switch (dtype) {
    case DType::kFloat32: {
      float value;
      std::string error = read_float(text, &value);
      if (error.empty()) std::memcpy(bytes + 4 * index, &value, 4);
      return error;
    }
    case DType::kFloat64: {
      double value;
      std::string error = read_float(text, &value);
      if (error.empty()) std::memcpy(bytes + 8 * index, &value, 8);
      return error;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t bits = 0;
      std::string error =
          dtype == DType::kFloat16
              ? read_half(text, kFloat16NaN, kFloat16Inf, [](float f) { return float_to_half(f); }, &bits)
              : read_half(text, kBFloat16NaN, kBFloat16Inf, [](float f) { return float_to_bfloat16(f); }, &bits);
      if (error.empty()) std::memcpy(bytes + 2 * index, &bits, 2);
      return error;
    }
    case DType::kBool:
      if (text != "True" && text != "False") return "expected True or False, got '" + clipped_text(text) + "'";
      bytes[index] = text == "True";
      return "";
    default: break;
  }
  if (!is_integer_text(text))
    return "expected an integer for " + std::string(dtype_name(dtype)) + ", got '" + clipped_text(text) + "'";
  std::string out_of_range = "'" + clipped_text(text) + "' is out of range for " + dtype_name(dtype);
  if (dtype == DType::kUInt64) {  // the one integer type beyond int64's range
    uint64_t value = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text[0] == '-' ? text.find_first_not_of("-0") != std::string_view::npos : result.ec != std::errc())
      return out_of_range;
    std::memcpy(bytes + 8 * index, &value, 8);
    return "";
  }
  int64_t value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  int64_t low = std::numeric_limits<int64_t>::min(), high = std::numeric_limits<int64_t>::max();
  switch (dtype) {
    case DType::kInt8: low = INT8_MIN, high = INT8_MAX; break;
    case DType::kUInt8: low = 0, high = UINT8_MAX; break;
    case DType::kInt16: low = INT16_MIN, high = INT16_MAX; break;
    case DType::kUInt16: low = 0, high = UINT16_MAX; break;
    case DType::kInt32: low = INT32_MIN, high = INT32_MAX; break;
    case DType::kUInt32: low = 0, high = UINT32_MAX; break;
    default: break;
  }
  if (result.ec == std::errc::result_out_of_range || value < low || value > high) return out_of_range;
  array.set_from_double(index, double(value));  // in range of a type narrower than int64: exact
  if (dtype == DType::kInt64) std::memcpy(bytes + 8 * index, &value, 8);
  return "";
}

NDArray parse_scalar_literal(std::string_view text, std::string* error) {
  if (text == "True" || text == "False") {
    NDArray out(DType::kBool, {});
    *static_cast<uint8_t*>(out.data()) = text == "True";
    return out;
  }
  size_t position = !text.empty() && text[0] == '-' ? 1 : 0;
  bool float_form = false;
  std::string_view rest = text.substr(position);
  if (rest.substr(0, 3) == "nan" || rest.substr(0, 3) == "inf") {
    position += 3;
    float_form = true;
  } else {
    auto digits = [&] {
      size_t start = position;
      while (position < text.size() && std::isdigit(static_cast<unsigned char>(text[position]))) ++position;
      return position > start;
    };
    bool any = digits();
    if (position < text.size() && text[position] == '.') {
      ++position;
      any = digits() || any;
      float_form = true;
    }
    if (!any) {
      *error = "'" + clipped_text(text) + "' is not a number";
      return NDArray();
    }
    if (position < text.size() && (text[position] == 'e' || text[position] == 'E')) {
      size_t save = position++;
      if (position < text.size() && (text[position] == '+' || text[position] == '-')) ++position;
      if (digits()) float_form = true;
      else position = save;
    }
  }
  std::string_view number = text.substr(0, position);
  std::string_view suffix = text.substr(position);
  std::optional<DType> dtype = dtype_of_suffix(suffix, float_form);
  if (!dtype) {
    *error = "unknown literal suffix '" + clipped_text(suffix) + "' in '" + clipped_text(text) +
             "' (expected f, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32 or u64)";
    return NDArray();
  }
  if (float_form && !dtype_is_float(*dtype)) {
    *error = "'" + clipped_text(text) + "': an integer literal cannot have a fraction, exponent, nan or inf";
    return NDArray();
  }
  NDArray out(*dtype, {});
  *error = set_element_from_text(out, 0, number);
  if (!error->empty()) return NDArray();
  return out;
}

}  // namespace switchyard
