// InferType: fills the checked_type of every expression node.
//
// Nodes are immutable, so inference rebuilds them through with_fields with
// their type (and their rebuilt children); a node whose children and type are
// unchanged is kept, so inferring an already typed module returns the same
// nodes. Each distinct node is rebuilt once (sharing is preserved) and a Var
// is substituted consistently at its binding and every use. Op nodes are
// interned and carry no type. Missing function return types are filled in;
// operator calls built without normalized attributes get them normalized.
//
// Linear time and iterative: a 1,000,000-deep chain of calls or lets needs no
// native recursion. Global functions are inferred callees first; recursion
// between globals is an error.
//
// Every failure is Error(kType) with the span of the offending node (or of
// its nearest enclosing node that has one), e.g.
//   "'add' cannot broadcast shapes (2, 3) and (4) (dimension 1: 3 vs 4)".
#pragma once

#include <optional>

#include "ir/module.h"

namespace switchyard {

// The module with every function and every node in it typed.
IRModule infer_type(const IRModule& mod);

// A node whose checked type is missing (had is null) or differs from the
// type inference gives it.
struct TypeDefect {
  Expr node;
  Type had;
  Type inferred;
};
struct TypeDefects {
  std::optional<TypeDefect> first_untyped;
  std::optional<TypeDefect> first_mistyped;
};
// The first untyped and the first mistyped node of `mod`, in inference
// order (for the invariant checker). Throws as infer_type does on a module
// that does not type-check. As infer_type: linear, iterative.
TypeDefects find_type_defects(const IRModule& mod);

// `e` with every node in it typed. Global functions it calls are looked up
// (and inferred) in `mod`; without a module a global reference is an error.
Expr infer_expr_type(const Expr& e, const IRModule* mod = nullptr);

}  // namespace switchyard
