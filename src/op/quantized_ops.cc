// The int8 anchors a QDQ model's products become (transform/
// quantized_convolutions.h): qnn.conv2d and qnn.dense, each what one oneDNN
// int8 primitive computes. Their shapes are nn.conv2d's and nn.dense's.
#include "op/builtin_ops.h"
#include "op/quantized_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

bool is_int8(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// The checks both share: int8 or uint8 data, int8 weight whose dimension 0
// is the output channels, float32 bias (one per output channel), one output
// scale or one per channel; the result is `float_op`'s shape, of out_dtype.
Type quantized_relation(const std::string& op, const std::string& float_op, const std::vector<Type>& args,
                        const AttrsNode& attrs, int weight_rank) {
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  const TensorTypeNode& weight =
      expect_rank(args, 1, weight_rank, op, "weight", weight_rank == 4 ? "(O, C/groups, KH, KW)" : "(N, K)");
  const TensorTypeNode& bias = expect_rank(args, 2, 1, op, "bias", "(channels)");
  if (!is_int8(data.dtype)) type_fail(op, "data is " + std::string(dtype_name(data.dtype)) + "; it must be int8 or uint8");
  if (weight.dtype != DType::kInt8) type_fail(op, "weight is " + std::string(dtype_name(weight.dtype)) + ", not int8");
  expect_static_dim(weight, 0, op, "weight");
  expect_static_dim(bias, 0, op, "bias");
  int64_t channels = weight.shape[0];
  if (bias.dtype != DType::kFloat32 || bias.shape[0] != channels)
    type_fail(op, "bias must be float32 (" + std::to_string(channels) + "), one per output channel");
  QuantizedAttrs q = quantized_attrs(attrs, op);
  size_t scales = q.output_scales.size();
  if (scales != 1 && int64_t(scales) != channels)
    type_fail(op, "output_scales holds " + std::to_string(scales) + " values; it must hold one or " +
                      std::to_string(channels) + " (one per output channel)");
  std::vector<Type> as_float{tensor_type_of_dims(data.dims, DType::kFloat32),
                             tensor_type_of_dims(weight.dims, DType::kFloat32)};
  Type out = find_op_def(float_op)->type_relation(as_float, attrs);
  return tensor_type_of_dims(as_tensor(out)->dims, q.out_dtype);
}

std::vector<AttrSpec> with_quantized_attrs(std::vector<AttrSpec> specs) {
  for (AttrSpec spec : std::vector<AttrSpec>{{"input_zero_point", AttrKind::kInt, AttrValue(int64_t(0))},
                                             {"output_scales", AttrKind::kString, AttrValue()},
                                             {"output_zero_point", AttrKind::kInt, AttrValue(int64_t(0))},
                                             {"out_dtype", AttrKind::kDType, AttrValue(std::string("uint8"))},
                                             {"relu", AttrKind::kBool, AttrValue(false)}})
    specs.push_back(spec);
  return specs;
}

constexpr const char* kFormula =
    "saturate(round_half_to_even(relu?((sum((data - input_zero_point) * weight) + bias) * output_scales[o]) + "
    "output_zero_point)), the sum exact, the rest in float32";

}  // namespace

void register_quantized_ops() {
  register_op({.name = "qnn.conv2d",
               .num_inputs = 3,
               .attrs = with_quantized_attrs({{"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1})},
                                         {"padding", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0})},
                                         {"dilation", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1})},
                                         {"groups", AttrKind::kInt, AttrValue(int64_t(1))}}),
               .type_relation =
                   [](const std::vector<Type>& args, const AttrsNode& attrs) {
                     return quantized_relation("qnn.conv2d", "nn.conv2d", args, attrs, 4);
                   },
               .pattern = OpPattern::kAnchor,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     const std::string op = "qnn.conv2d";
                     check_window_attrs(op, attrs);
                     if (attrs.get_int("groups") <= 0)
                       type_fail(op, "groups must be positive, got " + std::to_string(attrs.get_int("groups")));
                     check_quantized_attrs(op, quantized_attrs(attrs, op));
                   },
               .doc = std::string("int8 2-D convolution, NCHW data and OIHW weight: ") + kFormula,
               .symbolic_shapes = true});
  register_op({.name = "qnn.dense",
               .num_inputs = 3,
               .attrs = with_quantized_attrs({}),
               .type_relation =
                   [](const std::vector<Type>& args, const AttrsNode& attrs) {
                     return quantized_relation("qnn.dense", "nn.dense", args, attrs, 2);
                   },
               .pattern = OpPattern::kAnchor,
               .check_attrs =
                   [](const AttrsNode& attrs) { check_quantized_attrs("qnn.dense", quantized_attrs(attrs, "qnn.dense")); },
               .doc = std::string("int8 data (..., K) times int8 weight (N, K) transposed: ") + kFormula,
               .symbolic_shapes = true});
}

}  // namespace switchyard
