// with_fields: the one way a rebuilt node is made.
//
// Each overload takes the node and the fields to change (C++20 designated
// initializers: `with_fields(call, {.args = new_args})`). It returns the same
// node when every given field is identical (same_as) to the current one, and
// otherwise a new node that carries every field not named: virtual device,
// span, attributes, and the checked type while it still holds. When fields
// change and no type is given, the type is recomputed locally from the new
// children's types, or cleared when that cannot be done (ir/retype.h).
#pragma once

#include <functional>
#include <optional>

#include "ir/expr.h"

namespace switchyard {

#define SY_CHANGE_MEMBER(T, name) std::optional<T> name;
#define SY_CHANGE_POINTER(T, name) fn(#name, &Self::name);

// NameChanges: one optional per field of the kind's table, then the metadata;
// for_each_field(fn) calls fn("name", &NameChanges::name) for the table's.
// Note: a Var is a binding identity; with_fields on a Var makes a *new*
// variable, so callers must substitute its uses (see transform/substitute.h).
#define SY_CHANGES(Name, lower)                        \
  struct Name##Changes {                               \
    SY_FIELDS_##Name(SY_CHANGE_MEMBER)                 \
    std::optional<const VirtualDevice*> virtual_device; \
    std::optional<Span> span;                          \
    std::optional<Type> checked_type;                  \
    template <typename F>                              \
    static void for_each_field(F&& fn) {               \
      using Self = Name##Changes;                      \
      SY_FIELDS_##Name(SY_CHANGE_POINTER)              \
    }                                                  \
  };                                                   \
  Name with_fields(const Name& n, Name##Changes c);
SY_REBUILT_EXPR_KINDS(SY_CHANGES)
#undef SY_CHANGES
#undef SY_CHANGE_POINTER
#undef SY_CHANGE_MEMBER

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
// it takes `original`'s device when it states none, and it and every node
// newly built inside it take `original`'s span when they state none. Nodes
// built inside it that state no device stay unplaced, for planning. Nodes for which `is_existing` is true (nodes the caller
// already owns, e.g. a mutator's memo) and Vars/GlobalVars/Ops are never
// rebuilt. Iterative.
Expr inherit_placement(const Expr& replacement, const Expr& original,
                       const std::function<bool(const ExprNode*)>& is_existing);

}  // namespace switchyard
