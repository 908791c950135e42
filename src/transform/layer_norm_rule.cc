#include "transform/layer_norm_rule.h"

#include "op/registry.h"

namespace switchyard {

namespace {

bool is_scalar_constant(const Expr& e, double* value) {
  const ConstantNode* c = as<ConstantNode>(e);
  if (!c || !c->data.defined() || c->data.numel() != 1 || c->data.ndim() != 0) return false;
  *value = c->data.get_as_double(0);
  return true;
}

// A float32 constant vector of `channels` values, every one equal to
// `value` when `value` is given.
bool is_channel_vector(const Expr& e, int64_t channels, const double* value = nullptr) {
  const ConstantNode* c = as<ConstantNode>(e);
  if (!c || !c->data.defined() || c->data.dtype() != DType::kFloat32 || c->data.shape() != std::vector<int64_t>{channels})
    return false;
  if (value)
    for (int64_t i = 0; i < channels; ++i)
      if (c->data.get_as_double(i) != *value) return false;
  return true;
}

// mean(arg, axis=[last], keepdims=True), returning its argument.
const CallNode* mean_over_last_axis(const Expr& e) {
  const CallNode* mean = as_op_call(e, "mean");
  if (!mean || !mean->attrs->get_bool("keepdims") || mean->attrs->get_bool("exclude")) return nullptr;
  const TensorTypeNode* in = as_tensor(mean->args[0]->checked_type());
  const std::vector<int64_t>& axes = mean->attrs->get_ints("axis");
  if (!in || in->ndim() == 0 || axes.size() != 1 || (axes[0] != -1 && axes[0] != in->ndim() - 1)) return nullptr;
  return mean;
}

// The operand of a commutative binary call other than the one `accept` takes.
template <typename Accept>
const Expr* other_operand(const CallNode* call, Accept accept) {
  if (!call || call->args.size() != 2) return nullptr;
  if (accept(call->args[0])) return &call->args[1];
  if (accept(call->args[1])) return &call->args[0];
  return nullptr;
}

bool same_device(const Call& call, std::initializer_list<const ExprNode*> nodes) {
  for (const ExprNode* n : nodes)
    if (n->virtual_device() != call->virtual_device()) return false;
  return true;
}

NodeMeta meta_of(const Call& call) {
  return {.virtual_device = call->virtual_device(), .span = call->span(), .checked_type = call->checked_type()};
}

Constant channel_constant(int64_t channels, float value, const Call& call) {
  NDArray data(DType::kFloat32, {channels});
  for (int64_t i = 0; i < channels; ++i) static_cast<float*>(data.data())[i] = value;
  return make_constant(data, {.virtual_device = call->virtual_device(), .span = call->span(),
                              .checked_type = tensor_type({channels}, DType::kFloat32)});
}

Expr layer_norm(const Call& call, const Expr& x, const Expr& gamma, const Expr& beta, double epsilon) {
  return make_op_call("nn.layer_norm", {x, gamma, beta}, {{"axis", int64_t(-1)}, {"epsilon", epsilon}}, meta_of(call));
}

// divide(x - mean(x), sqrt(mean((x - mean(x))^2) + eps)).
Expr normalisation(const Call& call) {
  const CallNode* centred = as_op_call(call->args[0], "subtract");
  if (!centred) return Expr();
  const Expr& x = centred->args[0];
  const CallNode* mean = mean_over_last_axis(centred->args[1]);
  if (!mean || mean->args[0].get() != x.get()) return Expr();
  const CallNode* root = as_op_call(call->args[1], "sqrt");
  if (!root) return Expr();
  double epsilon = 0;
  const CallNode* shifted = as_op_call(root->args[0], "add");
  const Expr* variance_expr = other_operand(shifted, [&](const Expr& a) { return is_scalar_constant(a, &epsilon); });
  if (!variance_expr || !(epsilon > 0)) return Expr();
  const CallNode* variance = mean_over_last_axis(*variance_expr);
  if (!variance) return Expr();
  const CallNode* square = as_op_call(variance->args[0], "power");
  double exponent = 0;
  if (!square || square->args[0].get() != centred || !is_scalar_constant(square->args[1], &exponent) ||
      exponent != 2)
    return Expr();
  const TensorTypeNode* type = as_tensor(x->checked_type());
  if (!type || type->dtype != DType::kFloat32 || !type_equal(x->checked_type(), call->checked_type())) return Expr();
  if (!same_device(call, {centred, mean, root, shifted, variance, square})) return Expr();
  int64_t channels = type->shape.back();
  return layer_norm(call, x, channel_constant(channels, 1, call), channel_constant(channels, 0, call), epsilon);
}

// multiply(nn.layer_norm(x, 1, 0), gamma) or add(nn.layer_norm(x, gamma, 0), beta).
Expr affine(const Call& call, bool scale) {
  const CallNode* norm = nullptr;
  const Expr* vector = other_operand(call.get(), [&](const Expr& a) {
    norm = as_op_call(a, "nn.layer_norm");
    return norm != nullptr;
  });
  if (!vector || !norm || !same_device(call, {norm}) || !type_equal(norm->checked_type(), call->checked_type()))
    return Expr();
  const TensorTypeNode* type = as_tensor(norm->checked_type());
  if (!type || type->ndim() == 0 || norm->attrs->get_int("axis") != -1) return Expr();
  int64_t channels = type->shape.back();
  const double one = 1, zero = 0;
  if (!is_channel_vector(*vector, channels) || !is_channel_vector(norm->args[2], channels, &zero)) return Expr();
  if (scale && !is_channel_vector(norm->args[1], channels, &one)) return Expr();
  const double epsilon = norm->attrs->get_float("epsilon");
  return scale ? layer_norm(call, norm->args[0], *vector, norm->args[2], epsilon)
               : layer_norm(call, norm->args[0], norm->args[1], *vector, epsilon);
}

}  // namespace

Expr fold_layer_norm(const Call& call, const std::string& op_name) {
  if (op_name == "divide") return normalisation(call);
  if (op_name == "multiply") return affine(call, true);
  if (op_name == "add") return affine(call, false);
  return Expr();
}

}  // namespace switchyard
