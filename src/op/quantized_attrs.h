// The int8 operators' attributes as one typed struct (qnn.conv2d, qnn.dense:
// op/quantized_ops.cc; qnn.conv2d's window is the window family's,
// op/window_attrs.h), read in one place and checked once when the call is
// built; and the operators' handles.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "runtime/dtype.h"

namespace switchyard {

struct QuantizedAttrs {
  int64_t input_zero_point = 0;
  // The factors that take the int32 accumulator plus the bias to the
  // output's scale: one, or one per output channel.
  std::vector<float> output_scales;
  int64_t output_zero_point = 0;
  DType out_dtype = DType::kUInt8;
  bool relu = false;
};

// The attribute kinds have no list of floats: output_scales is a string of
// the float32 values in C's hexadecimal notation ("0x1.99999ap-7,..."),
// exact both ways. Error(kType) naming the operator for text that is not.
QuantizedAttrs quantized_attrs(const AttrsNode& attrs, const std::string& op = "qnn");
// The zero points in their types' range, the scales positive and finite, out_dtype int8 or uint8.
void check_quantized_attrs(const std::string& op, const QuantizedAttrs& attrs);
std::vector<std::pair<std::string, AttrValue>> attr_entries(const QuantizedAttrs& attrs);

namespace ops {
const OpNode* quantized_conv2d();  // qnn.conv2d
const OpNode* quantized_dense();   // qnn.dense
}  // namespace ops

}  // namespace switchyard
