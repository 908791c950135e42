// SimplifyExpr: local algebraic rewrites of operator calls.
#include "transform/simplify_expr.h"

#include "ir/functor.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "transform/layer_norm_rule.h"

namespace switchyard {

namespace {

// Whether `e` is a constant whose every element equals `value`.
bool is_constant_all(const Expr& e, double value) {
  const ConstantNode* c = as<ConstantNode>(e);
  if (!c || !c->data.defined()) return false;
  for (int64_t i = 0; i < c->data.numel(); ++i)
    if (c->data.get_as_double(i) != value) return false;
  return true;
}

// Operators that only relabel the shape of a row-major buffer.
bool is_shape_view(const CallNode* call) {
  const OpNode* op = as<OpNode>(call->op);
  return op && (op->name == "reshape" || op->name == "squeeze" || op->name == "expand_dims");
}

class Simplifier : public ExprMutator {
 public:
  Expr visit_call(const Call& original) override {
    Call call = downcast<CallNode>(ExprMutator::visit_call(original));
    const OpNode* op = as<OpNode>(call->op);
    if (!op || !call->checked_type()) return call;
    Expr simpler = simplify(call, op->name);
    return simpler ? simpler : Expr(call);
  }

 private:
  // `x` in place of `call`, when that changes neither type nor device.
  static Expr keep(const Call& call, const Expr& x) {
    if (!x->checked_type() || !type_equal(x->checked_type(), call->checked_type())) return Expr();
    if (x->virtual_device() != call->virtual_device()) return Expr();
    return x;
  }

  static Expr simplify(const Call& call, const std::string& name) {
    const std::vector<Expr>& args = call->args;
    if (Expr norm = fold_layer_norm(call, name)) return norm;
    if (name == "add") {
      if (is_constant_all(args[1], 0)) return keep(call, args[0]);
      if (is_constant_all(args[0], 0)) return keep(call, args[1]);
      return Expr();
    }
    if (name == "multiply") {
      if (is_constant_all(args[1], 1)) return keep(call, args[0]);
      if (is_constant_all(args[0], 1)) return keep(call, args[1]);
      return Expr();
    }
    if (name == "subtract") return is_constant_all(args[1], 0) ? keep(call, args[0]) : Expr();
    if (name == "divide") return is_constant_all(args[1], 1) ? keep(call, args[0]) : Expr();
    if (name == "negative") {
      const CallNode* inner = as_op_call(args[0], "negative");
      return inner ? keep(call, inner->args[0]) : Expr();
    }
    if (name == "cast" || name == "broadcast_to") return keep(call, args[0]);
    if (name == "reshape" || name == "squeeze" || name == "expand_dims") return simplify_shape_view(call);
    if (name == "transpose") return simplify_transpose(call);
    return Expr();
  }

  // A shape view of a shape view is one reshape of the innermost input; a
  // view to the same shape is nothing.
  static Expr simplify_shape_view(const Call& call) {
    if (Expr same = keep(call, call->args[0])) return same;
    const CallNode* inner = as<CallNode>(call->args[0]);
    if (!inner || !is_shape_view(inner)) return Expr();
    const Expr& source = inner->args[0];
    if (Expr same = keep(call, source)) return same;
    const TensorTypeNode* result = as_tensor(call->checked_type());
    if (!result || source->virtual_device() != call->virtual_device()) return Expr();
    return make_op_call("reshape", {source}, {{"newshape", result->shape}},
                        {.virtual_device = call->virtual_device(), .span = call->span(),
                         .checked_type = call->checked_type()});
  }

  // transpose(transpose(y, inner), outer) reads y's dimension inner[outer[i]].
  static Expr simplify_transpose(const Call& call) {
    const TensorTypeNode* result = as_tensor(call->checked_type());
    if (!result) return Expr();
    int64_t rank = result->ndim();
    std::vector<int64_t> outer = transpose_permutation(rank, *call->attrs, "transpose");
    Expr source = call->args[0];
    std::vector<int64_t> composed = outer;
    if (const CallNode* inner = as_op_call(source, "transpose")) {
      std::vector<int64_t> inner_axes = transpose_permutation(rank, *inner->attrs, "transpose");
      for (int64_t i = 0; i < rank; ++i) composed[size_t(i)] = inner_axes[size_t(outer[size_t(i)])];
      source = inner->args[0];
    }
    bool identity = true;
    for (int64_t i = 0; i < rank; ++i) identity = identity && composed[size_t(i)] == i;
    if (identity) return keep(call, source);
    if (source.same_as(call->args[0]) || source->virtual_device() != call->virtual_device()) return Expr();
    return with_fields(call, {.args = std::vector<Expr>{source}, .attrs = attrs_with(call->attrs, "axes", composed)});
  }
};

}  // namespace

Pass SimplifyExpr() {
  return make_module_pass({"SimplifyExpr", 1, {"InferType"}}, [](const IRModule& mod, const PassContext&) {
    IRModule out = mod;
    for (const auto& [name, fn] : mod.functions()) {
      if (fn->is_primitive()) continue;
      Simplifier simplifier;
      out.add(name, downcast<FunctionNode>(simplifier.mutate(fn)));
    }
    return out;
  });
}

}  // namespace switchyard
