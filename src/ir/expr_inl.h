// Inline definitions for expr.h.
#pragma once

namespace switchyard {

template <typename F>
void for_each_child(const Expr& e, F&& fn) {
  switch (e->kind()) {
    case ExprKind::kCall: {
      auto* n = static_cast<const CallNode*>(e.get());
      fn(n->op);
      for (const Expr& a : n->args) fn(a);
      break;
    }
    case ExprKind::kFunction: {
      auto* n = static_cast<const FunctionNode*>(e.get());
      for (const Var& p : n->params) fn(Expr(p));
      fn(n->body);
      break;
    }
    case ExprKind::kLet: {
      auto* n = static_cast<const LetNode*>(e.get());
      fn(Expr(n->var));
      fn(n->value);
      fn(n->body);
      break;
    }
    case ExprKind::kIf: {
      auto* n = static_cast<const IfNode*>(e.get());
      fn(n->cond);
      fn(n->then_branch);
      fn(n->else_branch);
      break;
    }
    case ExprKind::kTuple:
      for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields) fn(f);
      break;
    case ExprKind::kTupleGetItem:
      fn(static_cast<const TupleGetItemNode*>(e.get())->tuple);
      break;
    case ExprKind::kVar:
    case ExprKind::kConstant:
    case ExprKind::kGlobalVar:
    case ExprKind::kOp:
      break;
  }
}

}  // namespace switchyard
