// SimplifyExpr's rules as data: a pattern, and the operand that replaces the
// call or a function that builds the replacement.
#include "transform/simplify_rules.h"

#include "ir/functor.h"
#include "op/elementwise_attrs.h"
#include "op/handles.h"
#include "op/linear_attrs.h"
#include "op/movement_attrs.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "transform/layer_norm_rule.h"

namespace switchyard {

namespace {

Pattern op(const OpNode* op, std::vector<Pattern> args) { return is_call(is_op(op), std::move(args)); }

// A view (reshape, squeeze, expand_dims): an operator that only relabels
// the shape of a row-major buffer.
Pattern shape_view(Pattern arg) {
  return satisfies(is_call(wildcard(), {std::move(arg)}), "a view", [](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    return call && data_movement(*call) == DataMovement::kView;
  });
}

bool is_identity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != int64_t(i)) return false;
  return true;
}

// The axes of a transpose call, resolved for its result's rank.
std::optional<std::vector<int64_t>> axes_of(const Expr& transpose) {
  const CallNode* call = as<CallNode>(transpose);
  const TensorTypeNode* result = as_tensor(call->checked_type());
  if (!result) return std::nullopt;
  return transpose_permutation(result->ndim(), *call->attrs, ops::transpose()->name);
}

// view(view(source)) as reshape(source) to the outer view's shape.
Expr merged_view(const Call& call, const Expr& source) {
  const TensorTypeNode* result = as_tensor(call->checked_type());
  if (!result || source->virtual_device() != call->virtual_device()) return Expr();
  return make_op_call(ops::reshape(), {source}, attr_entries(ReshapeAttrs{result->shape}),
                      {.virtual_device = call->virtual_device(), .span = call->span(),
                       .checked_type = call->checked_type()});
}

// transpose(transpose(source, inner), outer) reads source's dimension
// inner[outer[i]]: one transpose, or none when that is the identity.
Expr composed_transpose(const Call& call, const Expr& source) {
  std::optional<std::vector<int64_t>> outer = axes_of(call), inner = axes_of(call->args[0]);
  if (!outer || !inner || inner->size() != outer->size()) return Expr();
  std::vector<int64_t> composed(outer->size());
  for (size_t i = 0; i < composed.size(); ++i) composed[i] = (*inner)[size_t((*outer)[i])];
  if (is_identity(composed)) return as_replacement(call, source);
  if (source->virtual_device() != call->virtual_device()) return Expr();
  Attrs axes = normalize_attrs(*ops::transpose()->def, attr_entries(TransposeAttrs{composed}));
  return with_fields(call, {.args = std::vector<Expr>{source}, .attrs = axes});
}

// matmul(a, transpose(source, p)) of rank-3 operands as
// nn.batch_matmul(a, transpose(source, q), transpose_b=True), q being p with
// its last two axes swapped (no transpose when q is the identity), where p
// gathers columns (its last axis is not the source's) and q does not: the
// product reads its right operand transposed, by strides, so what is left
// to copy (the encoder's keys split into heads) moves whole rows.
Expr product_of_transposed(const Call& call, const Expr& source) {
  const Expr& a = call->args[0];
  const TensorTypeNode* left = as_tensor(a->checked_type());
  const TensorTypeNode* from = as_tensor(source->checked_type());
  std::optional<std::vector<int64_t>> p = axes_of(call->args[1]);
  if (!left || !from || !p || left->ndim() != 3 || from->ndim() != 3 || !as_tensor(call->checked_type()) ||
      call->args[1]->virtual_device() != call->virtual_device())
    return Expr();
  if ((*p)[2] == 2 || (*p)[1] != 2) return Expr();
  std::vector<int64_t> q{(*p)[0], (*p)[2], (*p)[1]};
  Expr right = source;
  if (!is_identity(q)) {
    std::vector<int64_t> shape{from->shape[size_t(q[0])], from->shape[size_t(q[1])], from->shape[size_t(q[2])]};
    right = make_op_call(ops::transpose(), {source}, attr_entries(TransposeAttrs{q}),
                         {.virtual_device = call->args[1]->virtual_device(), .span = call->args[1]->span(),
                          .checked_type = tensor_type(shape, from->dtype)});
  }
  // The batch sizes must be equal or one of them 1, as nn.batch_matmul takes them.
  int64_t batch_a = left->shape[0], batch_b = as_tensor(right->checked_type())->shape[0];
  if (batch_a != batch_b && batch_a != 1 && batch_b != 1) return Expr();
  return make_op_call(ops::batch_matmul(), {a, right}, attr_entries(LinearAttrs{.transpose_a = false, .transpose_b = true}),
                      {.virtual_device = call->virtual_device(), .span = call->span(),
                       .checked_type = call->checked_type()});
}

RuleSet make_simplify_rules() {
  Pattern x = wildcard();
  auto at_x = [x](Expr (*make)(const Call&, const Expr&)) {
    return [x, make](const Call& call, const MatchMap& m) { return make(call, m.at(x.get())); };
  };
  Pattern identity_transpose = satisfies(op(ops::transpose(), {x}), "identity permutation", [](const Expr& e) {
    std::optional<std::vector<int64_t>> axes = axes_of(e);
    return axes && is_identity(*axes);
  });
  // A transpose that only moves dimensions of extent 1 keeps the row-major
  // order of the elements: a reshape, which a build makes no copy for.
  Pattern unit_transpose = satisfies(op(ops::transpose(), {x}), "moves only unit dimensions", [](const Expr& e) {
    std::optional<std::vector<int64_t>> axes = axes_of(e);
    const TensorTypeNode* in = as_tensor(as<CallNode>(e)->args[0]->checked_type());
    if (!axes || !in) return false;
    int64_t last = -1;
    for (int64_t axis : *axes) {
      if (in->shape[size_t(axis)] == 1) continue;
      if (axis < last) return false;
      last = axis;
    }
    return true;
  });
  // clip(relu(x), lo, hi) with lo >= 0 is clip(x, lo, hi) for every x, NaN
  // and -0 too (docs/operators.md, "Edge cases": relu(NaN) = 0 and clip(NaN)
  // = a_min, relu(-0) = +0 and clip(±0) = a_min): ReLU6 as torch exports
  // F.relu6. One clip is one oneDNN post-op, where relu then clip would be two
  // clips with different bounds, which oneDNN's jit kernels cannot take
  // together (primitive_post_ops.h), leaving the convolution's result dense.
  Pattern relu_of_x = op(ops::relu(), {x});
  Pattern clip_of_relu = satisfies(op(ops::clip(), {relu_of_x}), "a clip of a relu, bounded below by 0 or more",
                                   [](const Expr& e) { return clip_attrs(*as<CallNode>(e)->attrs).a_min >= 0; });
  auto clip_without_relu = [x](const Call& call, const MatchMap& m) {
    return Expr(with_fields(call, {.args = std::vector<Expr>{m.at(x.get())}}));
  };
  std::vector<RewriteRule> rules = layer_norm_rules();
  for (RewriteRule& rule : std::vector<RewriteRule>{
           replace_by("add_zero", op(ops::add(), {x, is_constant_all(0)}), x),
           replace_by("zero_add", op(ops::add(), {is_constant_all(0), x}), x),
           replace_by("multiply_one", op(ops::multiply(), {x, is_constant_all(1)}), x),
           replace_by("one_multiply", op(ops::multiply(), {is_constant_all(1), x}), x),
           replace_by("subtract_zero", op(ops::subtract(), {x, is_constant_all(0)}), x),
           replace_by("divide_one", op(ops::divide(), {x, is_constant_all(1)}), x),
           replace_by("double_negative", op(ops::negative(), {op(ops::negative(), {x})}), x),
           replace_by("cast_to_same_type", op(ops::cast(), {x}), x),
           rebuild("clip_of_relu", clip_of_relu, clip_without_relu),
           replace_by("broadcast_to_same_shape", op(ops::broadcast_to(), {x}), x),
           replace_by("view_to_same_shape", shape_view(x), x),
           replace_by("views_to_source_shape", shape_view(shape_view(x)), x),
           rebuild("view_of_view", shape_view(shape_view(x)), at_x(merged_view)),
           rebuild("transpose_of_transpose", op(ops::transpose(), {op(ops::transpose(), {x})}), at_x(composed_transpose)),
           replace_by("identity_transpose", identity_transpose, x),
           rebuild("unit_transpose", unit_transpose, at_x(merged_view)),
           rebuild("product_of_transposed", op(ops::matmul(), {wildcard(), op(ops::transpose(), {x})}),
                   at_x(product_of_transposed)),
       })
    rules.push_back(std::move(rule));
  return RuleSet(std::move(rules));
}

}  // namespace

const RuleSet& simplify_rules() {
  static const RuleSet rules = make_simplify_rules();
  return rules;
}

}  // namespace switchyard
