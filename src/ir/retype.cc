// Local retyping of rebuilt nodes, one rule per node kind.
#include "ir/retype.h"

// Only the operator's declaration is read (arity, attributes, relation),
// through the OpDef the interned Op points at; nothing of sy_op is linked.
#include "op/registry.h"

namespace switchyard {

namespace {

bool same_type(const Type& a, const Type& b) { return a.same_as(b) || (a && b && type_equal(a, b)); }

// Whether every child's type is the same before and after.
bool child_types_same(const std::vector<Expr>& before, const std::vector<Expr>& after) {
  if (before.size() != after.size()) return false;
  for (size_t i = 0; i < before.size(); ++i)
    if (!same_type(before[i]->checked_type(), after[i]->checked_type())) return false;
  return true;
}

// The argument types, or nothing when one is untyped.
std::optional<std::vector<Type>> types_of(const std::vector<Expr>& exprs) {
  std::vector<Type> types;
  types.reserve(exprs.size());
  for (const Expr& e : exprs) {
    if (!e->checked_type()) return std::nullopt;
    types.push_back(e->checked_type());
  }
  return types;
}

Type operator_call_type(const OpNode& op, const std::vector<Type>& arg_types, const Attrs& attrs) {
  const OpDef* def = op.def;
  if (!def || !def->type_relation) return Type();
  if (def->num_inputs >= 0 && arg_types.size() != size_t(def->num_inputs)) return Type();
  // Attributes not completed for this operator are InferType's to normalize.
  if (!attrs || attrs->entries().size() != def->attrs.size()) return Type();
  try {
    return call_type_relation(*def, arg_types, *attrs);
  } catch (const std::exception&) {
    return Type();  // the children do not fit: InferType reports it with its span
  }
}

Type call_type(const CallNode& old, const CallNode& c) {
  if (old.op.same_as(c.op) && old.attrs.same_as(c.attrs) && child_types_same(old.args, c.args))
    return old.checked_type();
  std::optional<std::vector<Type>> arg_types = types_of(c.args);
  if (!arg_types) return Type();
  if (const OpNode* op = as<OpNode>(c.op)) return operator_call_type(*op, *arg_types, c.attrs);
  const FuncTypeNode* callee = as_func(c.op->checked_type());
  if (!callee || callee->params.size() != arg_types->size()) return Type();
  for (size_t i = 0; i < arg_types->size(); ++i)
    if (!same_type(callee->params[i], (*arg_types)[i])) return Type();
  return callee->ret;
}

Type function_type(const FunctionNode& f) {
  std::vector<Type> params;
  for (const Var& p : f.params) {
    if (!p->checked_type()) return Type();
    params.push_back(p->checked_type());
  }
  const Type& body = f.body->checked_type();
  if (!body || (f.ret_type && !same_type(f.ret_type, body))) return Type();
  return func_type(std::move(params), body);
}

Type let_type(const LetNode& l) {
  if (!same_type(l.var->checked_type(), l.value->checked_type())) return Type();
  return l.body->checked_type();
}

Type if_type(const IfNode& i) {
  if (!same_type(i.then_branch->checked_type(), i.else_branch->checked_type())) return Type();
  return i.then_branch->checked_type();
}

Type tuple_type_of(const TupleNode& t) {
  std::optional<std::vector<Type>> fields = types_of(t.fields);
  return fields ? tuple_type(std::move(*fields)) : Type();
}

Type tuple_get_item_type(const TupleGetItemNode& t) {
  const TupleTypeNode* tuple = as_tuple(t.tuple->checked_type());
  if (!tuple || t.index < 0 || size_t(t.index) >= tuple->fields.size()) return Type();
  return tuple->fields[size_t(t.index)];
}

// The type the rebuilt node derives from its own fields (null: unknown).
Type derived_type(const Expr& old, const Expr& rebuilt) {
  switch (rebuilt->kind()) {
    case ExprKind::kVar: {
      // A new annotation is the variable's type; a new name changes nothing.
      const Type& annotation = static_cast<const VarNode*>(rebuilt.get())->type_annotation;
      bool same = annotation.same_as(static_cast<const VarNode*>(old.get())->type_annotation);
      return annotation && !same ? annotation : old->checked_type();
    }
    case ExprKind::kConstant:
      return static_cast<const ConstantNode*>(rebuilt.get())->tensor_type();
    case ExprKind::kCall:
      return call_type(*static_cast<const CallNode*>(old.get()), *static_cast<const CallNode*>(rebuilt.get()));
    case ExprKind::kFunction: return function_type(*static_cast<const FunctionNode*>(rebuilt.get()));
    case ExprKind::kLet: return let_type(*static_cast<const LetNode*>(rebuilt.get()));
    case ExprKind::kIf: return if_type(*static_cast<const IfNode*>(rebuilt.get()));
    case ExprKind::kTuple: return tuple_type_of(*static_cast<const TupleNode*>(rebuilt.get()));
    case ExprKind::kTupleGetItem: return tuple_get_item_type(*static_cast<const TupleGetItemNode*>(rebuilt.get()));
    case ExprKind::kGlobalVar:
      // Its type is its function's, which only the module knows.
      return static_cast<const GlobalVarNode*>(old.get())->name == static_cast<const GlobalVarNode*>(rebuilt.get())->name
                 ? old->checked_type()
                 : Type();
    case ExprKind::kOp: return Type();
  }
  return Type();
}

}  // namespace

Type retype(const Expr& old, const Expr& rebuilt) {
  if (!old->checked_type()) return Type();
  Type derived = derived_type(old, rebuilt);
  // The old type object when equal, so that InferType later sees no change.
  return same_type(derived, old->checked_type()) ? old->checked_type() : derived;
}

}  // namespace switchyard
