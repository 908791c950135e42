// Node constructors.
#include "ir/expr.h"

namespace switchyard {

const char* expr_kind_name(ExprKind kind) {
  switch (kind) {
#define SY_CASE(name, lower) \
  case ExprKind::k##name: return #name;
    SY_EXPR_KINDS(SY_CASE)
#undef SY_CASE
  }
  return "?";
}

bool FunctionNode::is_primitive() const {
  if (!attrs) return false;
  const AttrValue* v = attrs->find("Primitive");
  if (!v) return false;
  if (auto* i = std::get_if<int64_t>(v)) return *i != 0;
  if (auto* b = std::get_if<bool>(v)) return *b;
  return false;
}

Var make_var(std::string name_hint, Type type_annotation, NodeMeta meta) {
  return make_ref<VarNode>(std::move(name_hint), std::move(type_annotation), std::move(meta));
}
Constant make_constant(NDArray data, NodeMeta meta) {
  if (!meta.checked_type) meta.checked_type = tensor_type(data.shape(), data.dtype());
  return make_ref<ConstantNode>(std::move(data), std::move(meta));
}
Call make_call(Expr op, std::vector<Expr> args, Attrs attrs, NodeMeta meta) {
  return make_ref<CallNode>(std::move(op), std::move(args), std::move(attrs), std::move(meta));
}
Function make_function(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs, NodeMeta meta) {
  return make_ref<FunctionNode>(std::move(params), std::move(body), std::move(ret_type), std::move(attrs),
                                std::move(meta));
}
Let make_let(Var var, Expr value, Expr body, NodeMeta meta) {
  return make_ref<LetNode>(std::move(var), std::move(value), std::move(body), std::move(meta));
}
If make_if(Expr cond, Expr then_branch, Expr else_branch, NodeMeta meta) {
  return make_ref<IfNode>(std::move(cond), std::move(then_branch), std::move(else_branch), std::move(meta));
}
Tuple make_tuple(std::vector<Expr> fields, NodeMeta meta) {
  return make_ref<TupleNode>(std::move(fields), std::move(meta));
}
TupleGetItem make_tuple_get_item(Expr tuple, int index, NodeMeta meta) {
  return make_ref<TupleGetItemNode>(std::move(tuple), index, std::move(meta));
}
GlobalVar make_global_var(std::string name, NodeMeta meta) {
  return make_ref<GlobalVarNode>(std::move(name), std::move(meta));
}
Constant make_scalar_f32(float value, NodeMeta meta) {
  return make_constant(NDArray::scalar_f32(value), std::move(meta));
}

size_t child_count(const Expr& e) {
  size_t n = 0;
  for_each_child(e, [&](const Expr&) { ++n; });
  return n;
}

}  // namespace switchyard
