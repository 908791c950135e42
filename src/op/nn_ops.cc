// Neural-network anchor operators: matrix products, normalisations, softmax
// and bias_add. (Convolution and pooling are in window_ops.cc.)
#include "op/builtin_ops.h"
#include "op/linear_attrs.h"
#include "op/norm_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"

namespace switchyard {

namespace {

void expect_dtypes_match(const TensorTypeNode& a, const std::string& role_a, const TensorTypeNode& b,
                         const std::string& role_b, const std::string& op) {
  if (a.dtype != b.dtype)
    type_fail(op, role_a + " is " + dtype_name(a.dtype) + " but " + role_b + " is " + dtype_name(b.dtype) +
                      "; dtypes must match");
}

// A per-channel vector argument (gamma, bias, moving_mean...) must be (C,).
void expect_channel_vector(const std::vector<Type>& args, size_t index, const std::string& role, int64_t channels,
                           int64_t axis, const TensorTypeNode& data, const std::string& op) {
  const TensorTypeNode& t = expect_tensor(args, index, op);
  if (t.ndim() != 1 || t.shape[0] != channels)
    type_fail(op, "argument " + std::to_string(index) + " (" + role + ") must have shape (" + std::to_string(channels) +
                      ") to match dimension " + std::to_string(axis) + " of data " + shape_str(data.shape) + ", got " +
                      shape_str(t.shape));
  expect_dtypes_match(data, "data", t, role, op);
}

Type dense_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.dense";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  const TensorTypeNode& weight = expect_rank(args, 1, 2, op, "weight", "(units, in_features)");
  int64_t columns = data.shape.back();
  if (weight.shape[1] != columns)
    type_fail(op, "data has " + std::to_string(columns) + " columns but weight " + shape_str(weight.shape) +
                      " expects " + std::to_string(weight.shape[1]) + " (weight is (units, in_features))");
  if (std::optional<int64_t> units = linear_attrs(attrs).units; units && *units != weight.shape[0])
    type_fail(op, "units=" + std::to_string(*units) + " but weight " + shape_str(weight.shape) +
                      " has " + std::to_string(weight.shape[0]) + " rows (weight is (units, in_features))");
  expect_dtypes_match(data, "data", weight, "weight", op);
  std::vector<int64_t> shape = data.shape;
  shape.back() = weight.shape[0];
  return tensor_type(std::move(shape), data.dtype);
}

// numpy.matmul: 1-D operands are promoted (a to a row, b to a column) and the
// promoted dimension dropped again; leading batch dimensions broadcast.
Type matmul_relation(const std::vector<Type>& args, const AttrsNode&) {
  const std::string op = "matmul";
  const TensorTypeNode& a = expect_min_rank(args, 0, 1, op, "a");
  const TensorTypeNode& b = expect_min_rank(args, 1, 1, op, "b");
  expect_dtypes_match(a, "a", b, "b", op);
  std::vector<int64_t> sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  int64_t k_a = sa.back(), k_b = sb[sb.size() - 2];
  if (k_a != k_b)
    type_fail(op, "a " + shape_str(a.shape) + " has " + std::to_string(k_a) + " columns but b " + shape_str(b.shape) +
                      " has " + std::to_string(k_b) + " rows");
  std::vector<int64_t> batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  std::vector<int64_t> shape;
  try {
    shape = broadcast_shapes(batch_a, batch_b, op);
  } catch (const Error&) {
    type_fail(op, "batch dimensions " + shape_str(batch_a) + " of a " + shape_str(a.shape) + " and " +
                      shape_str(batch_b) + " of b " + shape_str(b.shape) + " do not broadcast");
  }
  if (a.ndim() > 1) shape.push_back(sa[sa.size() - 2]);
  if (b.ndim() > 1) shape.push_back(sb.back());
  return tensor_type(std::move(shape), a.dtype);
}

Type batch_matmul_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.batch_matmul";
  const LinearAttrs linear = linear_attrs(attrs);
  bool transpose_a = linear.transpose_a, transpose_b = linear.transpose_b;
  const TensorTypeNode& x = expect_rank(args, 0, 3, op, "x", transpose_a ? "(B, K, M)" : "(B, M, K)");
  const TensorTypeNode& y = expect_rank(args, 1, 3, op, "y", transpose_b ? "(B, N, K)" : "(B, K, N)");
  expect_dtypes_match(x, "x", y, "y", op);
  int64_t m = transpose_a ? x.shape[2] : x.shape[1];
  int64_t k_x = transpose_a ? x.shape[1] : x.shape[2];
  int64_t n = transpose_b ? y.shape[1] : y.shape[2];
  int64_t k_y = transpose_b ? y.shape[2] : y.shape[1];
  if (k_x != k_y)
    type_fail(op, "x " + shape_str(x.shape) + " gives K=" + std::to_string(k_x) + " but y " + shape_str(y.shape) +
                      " gives K=" + std::to_string(k_y) + " (transpose_a=" + (transpose_a ? "True" : "False") +
                      ": x is " + (transpose_a ? "(B, K, M)" : "(B, M, K)") + "; transpose_b=" +
                      (transpose_b ? "True" : "False") + ": y is " + (transpose_b ? "(B, N, K)" : "(B, K, N)") + ")");
  int64_t bx = x.shape[0], by = y.shape[0];
  if (bx != by && bx != 1 && by != 1)
    type_fail(op, "batch sizes differ: x " + shape_str(x.shape) + " has " + std::to_string(bx) + ", y " +
                      shape_str(y.shape) + " has " + std::to_string(by) + " (one of them may be 1)");
  return tensor_type({bx == 1 ? by : bx, m, n}, x.dtype);
}

Type softmax_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.softmax";
  const TensorTypeNode& x = expect_min_rank(args, 0, 1, op, "x");
  expect_float(x, 0, op, "x");
  normalize_axis(norm_attrs(attrs).axis, x.ndim(), op);
  return args[0];
}

Type layer_norm_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.layer_norm";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  expect_float(data, 0, op, "data");
  int64_t axis = normalize_axis(norm_attrs(attrs).axis, data.ndim(), op);
  int64_t channels = data.shape[size_t(axis)];
  expect_channel_vector(args, 1, "gamma", channels, axis, data, op);
  expect_channel_vector(args, 2, "beta", channels, axis, data, op);
  return args[0];
}

// Inference-mode batch_norm, as Relay: (normalized data, moving_mean, moving_var).
Type batch_norm_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.batch_norm";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  expect_float(data, 0, op, "data");
  int64_t axis = normalize_axis(norm_attrs(attrs).axis, data.ndim(), op);
  int64_t channels = data.shape[size_t(axis)];
  const char* roles[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (size_t i = 0; i < 4; ++i) expect_channel_vector(args, i + 1, roles[i], channels, axis, data, op);
  return tuple_type({args[0], args[3], args[4]});
}

Type bias_add_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.bias_add";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  int64_t axis = normalize_axis(norm_attrs(attrs).axis, data.ndim(), op);
  expect_channel_vector(args, 1, "bias", data.shape[size_t(axis)], axis, data, op);
  return args[0];
}

AttrsCheck epsilon_check(const std::string& op) {
  return [op](const AttrsNode& attrs) { check_norm_attrs(op, norm_attrs(attrs)); };
}

std::vector<AttrSpec> normalization_attrs(int64_t axis) {
  return {{"axis", AttrKind::kInt, AttrValue(axis)},
          {"epsilon", AttrKind::kFloat, AttrValue(1e-5)},
          {"center", AttrKind::kBool, AttrValue(true)},
          {"scale", AttrKind::kBool, AttrValue(true)}};
}

}  // namespace

void register_nn_ops() {
  register_op({.name = "nn.dense",
               .num_inputs = 2,
               .attrs = {{"units", AttrKind::kInt, AttrValue(), true}},
               .type_relation = dense_relation,
               .pattern = OpPattern::kAnchor,
               .check_attrs = [](const AttrsNode& attrs) { check_linear_attrs("nn.dense", linear_attrs(attrs)); },
               .doc = "data (..., K) times weight (N, K) transposed: (..., N)"});
  register_op({.name = "matmul",
               .num_inputs = 2,
               .type_relation = matmul_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "numpy.matmul"});
  register_op({.name = "nn.batch_matmul",
               .num_inputs = 2,
               .attrs = {{"transpose_a", AttrKind::kBool, AttrValue(false)},
                         {"transpose_b", AttrKind::kBool, AttrValue(true)}},
               .type_relation = batch_matmul_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "batched x (B, M, K) times y (B, N, K) transposed: (B, M, N)"});
  register_op({.name = "nn.softmax",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t(-1))}},
               .type_relation = softmax_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "softmax along axis"});
  register_op({.name = "nn.layer_norm",
               .num_inputs = 3,
               .attrs = normalization_attrs(-1),
               .type_relation = layer_norm_relation,
               .pattern = OpPattern::kAnchor,
               .check_attrs = epsilon_check("nn.layer_norm"),
               .doc = "(data - mean) / sqrt(var + epsilon) * gamma + beta along axis"});
  register_op({.name = "nn.batch_norm",
               .num_inputs = 5,
               .attrs = normalization_attrs(1),
               .type_relation = batch_norm_relation,
               .pattern = OpPattern::kAnchor,
               .check_attrs = epsilon_check("nn.batch_norm"),
               .doc = "inference batch normalization; returns (out, moving_mean, moving_var)"});
  register_op({.name = "nn.bias_add",
               .num_inputs = 2,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t(1))}},
               .type_relation = bias_add_relation,
               .pattern = OpPattern::kBroadcast,
               .doc = "data + bias along axis",
               // Along an axis, not NumPy's broadcasting: the interpreter's
               // kernel is written by hand (kernels_norm.cc).
               .scalar = ScalarMeaning{scalar::call(ScalarOp::kAdd, {scalar::operand(0), scalar::operand(1)}),
                                       ScalarInputs::kNumeric, {"data", "bias"}}});
}

}  // namespace switchyard
