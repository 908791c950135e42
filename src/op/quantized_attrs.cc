// The int8 operators' attributes (see quantized_attrs.h).
#include "op/quantized_attrs.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

namespace {

std::vector<float> scales_from_text(const std::string& text, const std::string& op) {
  std::vector<float> scales;
  const char* at = text.c_str();
  while (*at) {
    char* end = nullptr;
    float value = std::strtof(at, &end);
    if (end == at || (*end != ',' && *end != '\0'))
      type_fail(op, "output_scales \"" + text + "\" is not a list of numbers separated by commas");
    scales.push_back(value);
    at = *end == ',' ? end + 1 : end;
  }
  return scales;
}

std::string scales_text(const std::vector<float>& scales) {
  std::string text;
  for (float scale : scales) {
    char number[32];
    std::snprintf(number, sizeof number, "%a", double(scale));
    text += (text.empty() ? "" : ",") + std::string(number);
  }
  return text;
}

}  // namespace

QuantizedAttrs quantized_attrs(const AttrsNode& attrs, const std::string& op) {
  QuantizedAttrs defaults;
  std::optional<DType> out = parse_dtype(attr_read::string_or(attrs, "out_dtype", "uint8"));
  return {.input_zero_point = attr_read::integer_or(attrs, "input_zero_point", defaults.input_zero_point),
          .output_scales = scales_from_text(attr_read::string_or(attrs, "output_scales", ""), op),
          .output_zero_point = attr_read::integer_or(attrs, "output_zero_point", defaults.output_zero_point),
          .out_dtype = out.value_or(DType::kBool),
          .relu = attr_read::boolean_or(attrs, "relu", defaults.relu)};
}

void check_quantized_attrs(const std::string& op, const QuantizedAttrs& attrs) {
  if (attrs.out_dtype != DType::kInt8 && attrs.out_dtype != DType::kUInt8)
    type_fail(op, "out_dtype must be int8 or uint8");
  bool int8 = attrs.out_dtype == DType::kInt8;
  auto in_range = [&](const char* name, int64_t v, int64_t low, int64_t high) {
    if (v < low || v > high)
      type_fail(op, std::string(name) + " " + std::to_string(v) + " is outside [" + std::to_string(low) + ", " +
                        std::to_string(high) + "]");
  };
  in_range("input_zero_point", attrs.input_zero_point, -128, 255);
  in_range("output_zero_point", attrs.output_zero_point, int8 ? -128 : 0, int8 ? 127 : 255);
  if (attrs.output_scales.empty()) type_fail(op, "output_scales holds no value");
  for (float scale : attrs.output_scales)
    if (!(scale > 0) || !std::isfinite(scale))
      type_fail(op, "output_scales must be positive and finite, got " + std::to_string(scale));
}

std::vector<std::pair<std::string, AttrValue>> attr_entries(const QuantizedAttrs& attrs) {
  return {{"input_zero_point", attrs.input_zero_point},
          {"output_scales", scales_text(attrs.output_scales)},
          {"output_zero_point", attrs.output_zero_point},
          {"out_dtype", std::string(dtype_name(attrs.out_dtype))},
          {"relu", attrs.relu}};
}

}  // namespace switchyard
