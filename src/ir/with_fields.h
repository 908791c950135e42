// with_fields: the one way a rebuilt node is made.
//
// Each overload takes the node and the fields to change (C++20 designated
// initializers: `with_fields(call, {.args = new_args})`). It returns the same
// node when every given field is identical (same_as) to the current one, and
// otherwise a new node that carries every field not named: virtual device,
// span, checked type, attributes.
#pragma once

#include <functional>
#include <optional>

#include "ir/expr.h"

namespace switchyard {

#define SY_META_CHANGES                              \
  std::optional<const VirtualDevice*> virtual_device; \
  std::optional<Span> span;                          \
  std::optional<Type> checked_type

struct VarChanges { std::optional<std::string> name_hint; std::optional<Type> type_annotation; SY_META_CHANGES; };
struct ConstantChanges { std::optional<NDArray> data; SY_META_CHANGES; };
struct CallChanges {
  std::optional<Expr> op;
  std::optional<std::vector<Expr>> args;
  std::optional<Attrs> attrs;
  SY_META_CHANGES;
};
struct FunctionChanges {
  std::optional<std::vector<Var>> params;
  std::optional<Expr> body;
  std::optional<Type> ret_type;
  std::optional<Attrs> attrs;
  SY_META_CHANGES;
};
struct LetChanges { std::optional<Var> var; std::optional<Expr> value; std::optional<Expr> body; SY_META_CHANGES; };
struct IfChanges {
  std::optional<Expr> cond;
  std::optional<Expr> then_branch;
  std::optional<Expr> else_branch;
  SY_META_CHANGES;
};
struct TupleChanges { std::optional<std::vector<Expr>> fields; SY_META_CHANGES; };
struct TupleGetItemChanges { std::optional<Expr> tuple; std::optional<int> index; SY_META_CHANGES; };
struct GlobalVarChanges { std::optional<std::string> name; SY_META_CHANGES; };
#undef SY_META_CHANGES

// Note: a Var is a binding identity; with_fields on a Var makes a *new*
// variable, so callers must substitute its uses (see transform/substitute.h).
Var with_fields(const Var& n, VarChanges c);
Constant with_fields(const Constant& n, ConstantChanges c);
Call with_fields(const Call& n, CallChanges c);
Function with_fields(const Function& n, FunctionChanges c);
Let with_fields(const Let& n, LetChanges c);
If with_fields(const If& n, IfChanges c);
Tuple with_fields(const Tuple& n, TupleChanges c);
TupleGetItem with_fields(const TupleGetItem& n, TupleGetItemChanges c);
GlobalVar with_fields(const GlobalVar& n, GlobalVarChanges c);

// Kind-independent changes of the metadata only (device, span, type); for Op
// nodes (interned, never placed) returns `e` unchanged.
struct MetaChanges {
  std::optional<const VirtualDevice*> virtual_device;
  std::optional<Span> span;
  std::optional<Type> checked_type;
};
Expr with_meta(const Expr& e, const MetaChanges& c);

// Kind-independent rebuild with new children, given in for_each_child order.
// Returns `e` when every child is the same. (Var children of Function and Let
// must stay Vars.)
Expr with_children(const Expr& e, const std::vector<Expr>& children);

// Invariant 3 (ARCHITECTURE.md): `replacement` stands in place of `original`;
// it and every node newly built inside it that states no device or no span
// take `original`'s. Nodes for which `is_existing` is true (nodes the caller
// already owns, e.g. a mutator's memo) and Vars/GlobalVars/Ops are never
// rebuilt. Iterative.
Expr inherit_placement(const Expr& replacement, const Expr& original,
                       const std::function<bool(const ExprNode*)>& is_existing);

}  // namespace switchyard
