// ExprVisitor and ExprMutator: memoized, post-order, iterative (no native
// recursion on data depth, ARCHITECTURE.md invariant 4).
//
// Both first walk every not-yet-seen descendant of the visited expression with
// an explicit stack, then call visit_<kind>(node) once per distinct node in
// post-order. So when a mutator's visit_call runs, every child has already
// been mutated: mutate(child) inside it is a memo lookup, and overriding
// visit_* in C++ or Python never nests calls as deep as the data.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "ir/module.h"
#include "ir/with_fields.h"

namespace switchyard {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  // Visits `e` and every node reachable from it, each once.
  void visit(const Expr& e);

#define SY_VISIT(name, lower) \
  virtual void visit_##lower(const name&) {}
  SY_EXPR_KINDS(SY_VISIT)
#undef SY_VISIT

 protected:
  void dispatch(const Expr& e);
  std::unordered_set<const ExprNode*> visited_;
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  // The mutated form of `e` (memoized). When a visit returns a node other
  // than the one visited, the result inherits the visited node's device, and
  // the new nodes in it its span, where they state none (inherit_placement).
  Expr mutate(const Expr& e);
  // Mutates every function of a module.
  IRModule mutate_module(const IRModule& mod);

  // Defaults rebuild through with_fields from the mutated children (returning
  // the node itself when none changed); an Op is returned as it is.
#define SY_VISIT(name, lower) virtual Expr visit_##lower(const name& n);
  SY_EXPR_KINDS(SY_VISIT)
#undef SY_VISIT

 protected:
  Expr dispatch(const Expr& e);
  // Whether `n` is a node this mutator has already seen or produced.
  bool is_existing(const ExprNode* n) const { return memo_.count(n) || produced_.count(n); }
  std::unordered_map<const ExprNode*, Expr> memo_;
  std::unordered_set<const ExprNode*> produced_;
};

// Calls `fn(node)` for every node reachable from `e`, once each, in
// post-order, iteratively.
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn);

}  // namespace switchyard
