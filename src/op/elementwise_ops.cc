// Element-wise and broadcasting operators.
#include "op/builtin_ops.h"
#include "op/relation_helpers.h"
#include "op/registry.h"

namespace switchyard {

namespace {

Type unary_same(const std::vector<Type>& args, const std::string& op) {
  if (args.size() != 1) throw Error(ErrorKind::kType, "'" + op + "' expects 1 argument, got " + std::to_string(args.size()));
  expect_tensor(args, 0, op);
  return args[0];
}

Type binary_broadcast(const std::vector<Type>& args, const std::string& op, std::optional<DType> out_dtype) {
  if (args.size() != 2) throw Error(ErrorKind::kType, "'" + op + "' expects 2 arguments, got " + std::to_string(args.size()));
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
}

}  // namespace switchyard
