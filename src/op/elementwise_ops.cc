// Element-wise and broadcasting operators.
#include "op/builtin_ops.h"
#include "op/relation_helpers.h"
#include "op/registry.h"

namespace switchyard {

namespace {

Type unary_same(const std::vector<Type>& args, const std::string& op) {
  if (args.size() != 1) type_fail(op, "expects 1 argument, got " + std::to_string(args.size()));
  expect_tensor(args, 0, op);
  return args[0];
}

Type binary_broadcast(const std::vector<Type>& args, const std::string& op, std::optional<DType> out_dtype) {
  if (args.size() != 2) type_fail(op, "expects 2 arguments, got " + std::to_string(args.size()));
  expect_same_dtype(args, op);
  const TensorTypeNode& a = expect_tensor(args, 0, op);
  const TensorTypeNode& b = expect_tensor(args, 1, op);
  return tensor_type(broadcast_shapes(a.shape, b.shape, op), out_dtype.value_or(a.dtype));
}

void register_unary(const std::string& name, const std::string& doc) {
  register_op({.name = name,
               .num_inputs = 1,
               .type_relation = [name](const std::vector<Type>& a, const AttrsNode&) { return unary_same(a, name); },
               .pattern = OpPattern::kElementwise,
               .doc = doc});
}

void register_binary(const std::string& name, std::optional<DType> out_dtype, const std::string& doc) {
  register_op({.name = name,
               .num_inputs = 2,
               .type_relation =
                   [name, out_dtype](const std::vector<Type>& a, const AttrsNode&) {
                     return binary_broadcast(a, name, out_dtype);
                   },
               .pattern = OpPattern::kBroadcast,
               .doc = doc});
}

// where(cond, x, y): cond must be bool; the result broadcasts all three.
Type where_relation(const std::vector<Type>& args, const AttrsNode&) {
  const std::string op = "where";
  const TensorTypeNode& cond = expect_tensor(args, 0, op);
  const TensorTypeNode& x = expect_tensor(args, 1, op);
  const TensorTypeNode& y = expect_tensor(args, 2, op);
  if (cond.dtype != DType::kBool)
    type_fail(op, "argument 0 (condition) must have dtype bool, got " + std::string(dtype_name(cond.dtype)));
  if (x.dtype != y.dtype)
    type_fail(op, "x is " + std::string(dtype_name(x.dtype)) + " but y is " + dtype_name(y.dtype) +
                      "; the two branches must have equal dtypes");
  std::vector<int64_t> shape = broadcast_shapes(broadcast_shapes(cond.shape, x.shape, op), y.shape, op);
  return tensor_type(std::move(shape), x.dtype);
}

void register_clip() {
  register_op({.name = "clip",
               .num_inputs = 1,
               .attrs = {{"a_min", AttrKind::kFloat, AttrValue()}, {"a_max", AttrKind::kFloat, AttrValue()}},
               .type_relation = [](const std::vector<Type>& a, const AttrsNode&) { return unary_same(a, "clip"); },
               .pattern = OpPattern::kElementwise,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     double low = attrs.get_float("a_min"), high = attrs.get_float("a_max");
                     if (!(low <= high))
                       type_fail("clip", "a_min (" + attr_value_to_string(low) + ") must not exceed a_max (" +
                                             attr_value_to_string(high) + ")");
                   },
               .doc = "min(max(x, a_min), a_max)"});
}

void register_cast() {
  register_op({.name = "cast",
               .num_inputs = 1,
               .attrs = {{"dtype", AttrKind::kDType, AttrValue()}},
               .type_relation =
                   [](const std::vector<Type>& a, const AttrsNode& attrs) -> Type {
                     const TensorTypeNode& x = expect_tensor(a, 0, "cast");
                     return tensor_type(x.shape, *parse_dtype(attrs.get_string("dtype")));
                   },
               .pattern = OpPattern::kElementwise,
               .doc = "x converted to dtype"});
}

}  // namespace

void register_elementwise_ops() {
  register_binary("add", std::nullopt, "a + b with broadcasting");
  register_binary("subtract", std::nullopt, "a - b with broadcasting");
  register_binary("multiply", std::nullopt, "a * b with broadcasting");
  register_binary("divide", std::nullopt, "a / b with broadcasting");
  register_binary("power", std::nullopt, "a ** b with broadcasting");
  register_binary("maximum", std::nullopt, "max(a, b) with broadcasting");
  register_binary("minimum", std::nullopt, "min(a, b) with broadcasting");
  register_binary("equal", DType::kBool, "a == b with broadcasting");
  register_binary("less", DType::kBool, "a < b with broadcasting");
  register_binary("greater", DType::kBool, "a > b with broadcasting");
  register_unary("negative", "-x");
  register_unary("exp", "e^x");
  register_unary("log", "natural logarithm");
  register_unary("sqrt", "square root");
  register_unary("rsqrt", "1 / sqrt(x)");
  register_unary("erf", "Gauss error function");
  register_unary("tanh", "hyperbolic tangent");
  register_unary("sigmoid", "1 / (1 + e^-x)");
  register_unary("abs", "|x|");
  register_unary("nn.relu", "max(x, 0)");
  register_clip();
  register_cast();
  register_op({.name = "where",
               .num_inputs = 3,
               .type_relation = where_relation,
               .pattern = OpPattern::kBroadcast,
               .doc = "cond ? x : y, element-wise with broadcasting"});
}

}  // namespace switchyard
