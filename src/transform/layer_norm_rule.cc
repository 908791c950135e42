#include "transform/layer_norm_rule.h"

#include "op/handles.h"
#include "op/norm_attrs.h"
#include "op/reduce_attrs.h"
#include "op/registry.h"

namespace switchyard {

namespace {

Pattern op(const OpNode* op, std::vector<Pattern> args) { return is_call(is_op(op), std::move(args)); }

// mean(arg, axis=[last], keepdims=True).
Pattern mean_over_last_axis(Pattern arg) {
  return satisfies(op(ops::mean(), {std::move(arg)}), "over the last axis, keeping it", [](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    const TensorTypeNode* in = as_tensor(call->args[0]->checked_type());
    const ReduceAttrs reduce = reduce_attrs(*call->attrs);
    if (!in || in->ndim() == 0 || !reduce.keepdims || reduce.exclude || !reduce.axis || reduce.axis->size() != 1)
      return false;
    int64_t axis = reduce.axis->front();
    return axis == -1 || axis == in->ndim() - 1;
  });
}

// A float32 constant: a per-channel vector once its shape is checked.
Pattern float_constant(Pattern constant = is_constant()) { return has_type(std::move(constant), DType::kFloat32, {}); }

bool is_channel_vector(const Expr& e, int64_t channels) {
  return as<ConstantNode>(e)->data.shape() == std::vector<int64_t>{channels};
}

double scalar_value(const Expr& e) { return as<ConstantNode>(e)->data.get_as_double(0); }

Constant channel_constant(int64_t channels, float value, const Call& call) {
  NDArray data(DType::kFloat32, {channels});
  for (int64_t i = 0; i < channels; ++i) static_cast<float*>(data.data())[i] = value;
  return make_constant(data, {.virtual_device = call->virtual_device(), .span = call->span(),
                              .checked_type = tensor_type({channels}, DType::kFloat32)});
}

Expr layer_norm(const Call& call, const Expr& x, const Expr& gamma, const Expr& beta, double epsilon) {
  return make_op_call(ops::layer_norm(), {x, gamma, beta}, attr_entries(NormAttrs{.axis = -1, .epsilon = epsilon}),
                      {.virtual_device = call->virtual_device(), .span = call->span(),
                       .checked_type = call->checked_type()});
}

RewriteRule normalisation() {
  Pattern x = wildcard(), epsilon = is_scalar_constant();
  Pattern centred = op(ops::subtract(), {x, mean_over_last_axis(x)});
  Pattern variance = mean_over_last_axis(op(ops::power(), {centred, is_scalar_constant(2)}));
  Pattern root = op(ops::sqrt(), {either(op(ops::add(), {variance, epsilon}), op(ops::add(), {epsilon, variance}))});
  return rebuild("layer_norm", op(ops::divide(), {centred, root}), [x, epsilon](const Call& call, const MatchMap& m) {
    const Expr& input = m.at(x.get());
    const TensorTypeNode* type = as_tensor(input->checked_type());
    double eps = scalar_value(m.at(epsilon.get()));
    if (!(eps > 0) || !type || type->dtype != DType::kFloat32 ||
        !type_equal(input->checked_type(), call->checked_type()) || !spelled_out_calls_on_device_of(call, m))
      return Expr();
    int64_t channels = type->shape.back();
    return layer_norm(call, input, channel_constant(channels, 1, call), channel_constant(channels, 0, call), eps);
  });
}

// multiply(nn.layer_norm(x, 1, 0), gamma) or add(nn.layer_norm(x, gamma, 0), beta), either operand order.
RewriteRule affine(bool scale) {
  Pattern x = wildcard(), vector = float_constant(), beta = float_constant(is_constant_all(0));
  Pattern gamma = scale ? float_constant(is_constant_all(1)) : wildcard();
  Pattern norm = satisfies(op(ops::layer_norm(), {x, gamma, beta}), "along axis -1", [](const Expr& e) {
    return norm_attrs(*as<CallNode>(e)->attrs).axis == -1;
  });
  const OpNode* outer = scale ? ops::multiply() : ops::add();
  Pattern pattern = either(op(outer, {norm, vector}), op(outer, {vector, norm}));
  return rebuild(scale ? "layer_norm_scale" : "layer_norm_shift", pattern, [=](const Call& call, const MatchMap& m) {
    const Expr& normalised = m.at(norm.get());
    const TensorTypeNode* type = as_tensor(normalised->checked_type());
    if (!type || type->ndim() == 0 || !type_equal(normalised->checked_type(), call->checked_type()) ||
        !spelled_out_calls_on_device_of(call, m))
      return Expr();
    int64_t channels = type->shape.back();
    if (!is_channel_vector(m.at(vector.get()), channels) || !is_channel_vector(m.at(beta.get()), channels) ||
        (scale && !is_channel_vector(m.at(gamma.get()), channels)))
      return Expr();
    double eps = norm_attrs(*as<CallNode>(normalised)->attrs).epsilon;
    return scale ? layer_norm(call, m.at(x.get()), m.at(vector.get()), m.at(beta.get()), eps)
                 : layer_norm(call, m.at(x.get()), m.at(gamma.get()), m.at(vector.get()), eps);
  });
}

}  // namespace

std::vector<RewriteRule> layer_norm_rules() { return {normalisation(), affine(true), affine(false)}; }

}  // namespace switchyard
