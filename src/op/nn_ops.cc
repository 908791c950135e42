// Neural-network anchor operators: matrix products, normalisations, softmax
// and bias_add. (Convolution and pooling are in window_ops.cc.)
#include "op/builtin_ops.h"
#include "op/linear_attrs.h"
#include "op/norm_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "runtime/clipped_text.h"

namespace switchyard {

namespace {

void expect_dtypes_match(const TensorTypeNode& a, const std::string& role_a, const TensorTypeNode& b,
                         const std::string& role_b, const std::string& op) {
  if (a.dtype != b.dtype)
    type_fail(op, role_a + " is " + dtype_name(a.dtype) + " but " + role_b + " is " + dtype_name(b.dtype) +
                      "; dtypes must match");
}

// A per-channel vector argument (gamma, bias, moving_mean...) must be (C,),
// C being data's dimension `axis`, which must be static.
void expect_channel_vector(const std::vector<Type>& args, size_t index, const std::string& role, int64_t axis,
                           const TensorTypeNode& data, const std::string& op) {
  expect_static_dim(data, axis, op, "the channel dimension of data");
  int64_t channels = *data.dims[size_t(axis)].constant();
  const TensorTypeNode& t = expect_tensor(args, index, op);
  if (t.ndim() != 1 || t.dims[0] != DimExpr(channels))
    type_fail(op, "argument " + std::to_string(index) + " (" + role + ") must have shape (" + std::to_string(channels) +
                      ") to match dimension " + std::to_string(axis) + " of data " +
                      clipped_text(dims_to_string(data.dims)) + ", got " + clipped_text(dims_to_string(t.dims)));
  expect_dtypes_match(data, "data", t, role, op);
}

// data (..., in_features) may have symbolic leading dimensions; the weight is static.
Type dense_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.dense";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  const TensorTypeNode& weight = expect_rank(args, 1, 2, op, "weight", "(units, in_features)");
  expect_static_dim(data, data.ndim() - 1, op, "the last dimension of data");
  expect_static_dim(weight, 0, op, "weight");
  expect_static_dim(weight, 1, op, "weight");
  int64_t columns = *data.dims.back().constant(), rows = *weight.dims[0].constant(), in = *weight.dims[1].constant();
  std::string weight_shape = dims_to_string(weight.dims);
  if (in != columns)
    type_fail(op, "data has " + std::to_string(columns) + " columns but weight " + weight_shape + " expects " +
                      std::to_string(in) + " (weight is (units, in_features))");
  if (std::optional<int64_t> units = linear_attrs(attrs).units; units && *units != rows)
    type_fail(op, "units=" + std::to_string(*units) + " but weight " + weight_shape + " has " + std::to_string(rows) +
                      " rows (weight is (units, in_features))");
  expect_dtypes_match(data, "data", weight, "weight", op);
  std::vector<DimExpr> dims = data.dims;
  dims.back() = rows;
  return tensor_type_of_dims(std::move(dims), data.dtype);
}

// numpy.matmul: 1-D operands are promoted (a to a row, b to a column) and the
// promoted dimension dropped again; leading batch dimensions broadcast.
Type matmul_relation(const std::vector<Type>& args, const AttrsNode&) {
  const std::string op = "matmul";
  const TensorTypeNode& a = expect_min_rank(args, 0, 1, op, "a");
  const TensorTypeNode& b = expect_min_rank(args, 1, 1, op, "b");
  expect_dtypes_match(a, "a", b, "b", op);
  std::vector<DimExpr> da = a.dims, db = b.dims;
  if (da.size() == 1) da.insert(da.begin(), int64_t(1));
  if (db.size() == 1) db.push_back(int64_t(1));
  const DimExpr &k_a = da.back(), &k_b = db[db.size() - 2];
  std::string a_shape = clipped_text(dims_to_string(a.dims)), b_shape = clipped_text(dims_to_string(b.dims));
  // Symbolic K on both sides is accepted only when the same expression, or
  // when an AssumedDimEqualities takes two variables as equal (the ONNX
  // importer then names them alike, and the run checks them).
  if (k_a != k_b && !AssumedDimEqualities::assume(k_a, k_b))
    type_fail(op, "a " + a_shape + " has " + dim_to_string(k_a) + " columns but b " + b_shape + " has " +
                      dim_to_string(k_b) + " rows");
  std::vector<DimExpr> batch_a(da.begin(), da.end() - 2), batch_b(db.begin(), db.end() - 2);
  std::vector<DimExpr> dims;
  try {
    dims = broadcast_dims(batch_a, batch_b, op);
  } catch (const Error& e) {
    type_fail(op, "batch dimensions " + clipped_text(dims_to_string(batch_a)) + " of a " + a_shape + " and " +
                      clipped_text(dims_to_string(batch_b)) + " of b " + b_shape + " do not broadcast" +
                      (e.message().find("run time") == std::string::npos
                           ? ""
                           : " (symbolic dimensions that may differ are not checked at run time yet)"));
  }
  if (a.ndim() > 1) dims.push_back(da[da.size() - 2]);
  if (b.ndim() > 1) dims.push_back(db.back());
  return tensor_type_of_dims(std::move(dims), a.dtype);
}

Type batch_matmul_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.batch_matmul";
  const LinearAttrs linear = linear_attrs(attrs);
  bool transpose_a = linear.transpose_a, transpose_b = linear.transpose_b;
  const TensorTypeNode& x = expect_rank(args, 0, 3, op, "x", transpose_a ? "(B, K, M)" : "(B, M, K)");
  const TensorTypeNode& y = expect_rank(args, 1, 3, op, "y", transpose_b ? "(B, N, K)" : "(B, K, N)");
  expect_dtypes_match(x, "x", y, "y", op);
  const DimExpr& m = transpose_a ? x.dims[2] : x.dims[1];
  const DimExpr& k_x = transpose_a ? x.dims[1] : x.dims[2];
  const DimExpr& n = transpose_b ? y.dims[1] : y.dims[2];
  const DimExpr& k_y = transpose_b ? y.dims[2] : y.dims[1];
  std::string x_shape = clipped_text(dims_to_string(x.dims)), y_shape = clipped_text(dims_to_string(y.dims));
  if (k_x != k_y)
    type_fail(op, "x " + x_shape + " gives K=" + dim_to_string(k_x) + " but y " + y_shape + " gives K=" +
                      dim_to_string(k_y) + " (transpose_a=" + (transpose_a ? "True" : "False") + ": x is " +
                      (transpose_a ? "(B, K, M)" : "(B, M, K)") + "; transpose_b=" + (transpose_b ? "True" : "False") +
                      ": y is " + (transpose_b ? "(B, N, K)" : "(B, K, N)") + ")");
  const DimExpr &bx = x.dims[0], &by = y.dims[0], one(int64_t(1));
  if (bx != by && bx != one && by != one)
    type_fail(op, "batch sizes differ: x " + x_shape + " has " + dim_to_string(bx) + ", y " + y_shape + " has " +
                      dim_to_string(by) + " (one of them may be 1)");
  return tensor_type_of_dims(std::vector<DimExpr>{bx == one ? by : bx, m, n}, x.dtype);
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
  expect_channel_vector(args, 1, "gamma", axis, data, op);
  expect_channel_vector(args, 2, "beta", axis, data, op);
  return args[0];
}

// Inference-mode batch_norm, as Relay: (normalized data, moving_mean, moving_var).
Type batch_norm_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.batch_norm";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  expect_float(data, 0, op, "data");
  int64_t axis = normalize_axis(norm_attrs(attrs).axis, data.ndim(), op);
  const char* roles[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (size_t i = 0; i < 4; ++i) expect_channel_vector(args, i + 1, roles[i], axis, data, op);
  return tuple_type({args[0], args[3], args[4]});
}

Type bias_add_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.bias_add";
  const TensorTypeNode& data = expect_min_rank(args, 0, 1, op, "data");
  int64_t axis = normalize_axis(norm_attrs(attrs).axis, data.ndim(), op);
  expect_channel_vector(args, 1, "bias", axis, data, op);
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
               .doc = "data (..., K) times weight (N, K) transposed: (..., N)",
               .symbolic_shapes = true});
  register_op({.name = "matmul",
               .num_inputs = 2,
               .type_relation = matmul_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "numpy.matmul",
               .symbolic_shapes = true});
  register_op({.name = "nn.batch_matmul",
               .num_inputs = 2,
               .attrs = {{"transpose_a", AttrKind::kBool, AttrValue(false)},
                         {"transpose_b", AttrKind::kBool, AttrValue(true)}},
               .type_relation = batch_matmul_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "batched x (B, M, K) times y (B, N, K) transposed: (B, M, N)",
               .symbolic_shapes = true});
  register_op({.name = "nn.softmax",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t(-1))}},
               .type_relation = softmax_relation,
               .pattern = OpPattern::kAnchor,
               .doc = "softmax along axis",
               .symbolic_shapes = true});
  register_op({.name = "nn.layer_norm",
               .num_inputs = 3,
               .attrs = normalization_attrs(-1),
               .type_relation = layer_norm_relation,
               .pattern = OpPattern::kAnchor,
               .check_attrs = epsilon_check("nn.layer_norm"),
               .doc = "(data - mean) / sqrt(var + epsilon) * gamma + beta along axis",
               .symbolic_shapes = true});
  register_op({.name = "nn.batch_norm",
               .num_inputs = 5,
               .attrs = normalization_attrs(1),
               .type_relation = batch_norm_relation,
               .pattern = OpPattern::kAnchor,
               .check_attrs = epsilon_check("nn.batch_norm"),
               .doc = "inference batch normalization; returns (out, moving_mean, moving_var)",
               .symbolic_shapes = true});
  register_op({.name = "nn.bias_add",
               .num_inputs = 2,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t(1))}},
               .type_relation = bias_add_relation,
               .pattern = OpPattern::kBroadcast,
               .doc = "data + bias along axis",
               // Along an axis, not NumPy's broadcasting: the interpreter's
               // kernel is written by hand (kernels_norm.cc).
               .scalar = ScalarMeaning{scalar::call(ScalarOp::kAdd, {scalar::operand(0), scalar::operand(1)}),
                                       ScalarInputs::kNumeric, {"data", "bias"}},
               .symbolic_shapes = true});
}

}  // namespace switchyard
