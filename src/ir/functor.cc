// Iterative post-order traversal shared by the visitor and the mutator.
#include "ir/functor.h"

namespace switchyard {

namespace {

// Post-order over nodes for which `seen` is false; calls `emit` for each.
template <typename Seen, typename Emit>
void walk_post_order(const Expr& root, Seen&& seen, Emit&& emit) {
  if (seen(root.get())) return;
  struct Frame {
    const ExprNode* node;
    bool expanded;
  };
  // A node reachable along several edges may be pushed more than once (at most
  // once per edge); copies found already emitted are skipped.
  std::vector<Frame> stack{{root.get(), false}};
  std::vector<const ExprNode*> children;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (seen(top.node)) {
      stack.pop_back();
      continue;
    }
    if (!top.expanded) {
      top.expanded = true;
      const ExprNode* node = top.node;
      children.clear();
      for_each_child(Expr(node), [&](const Expr& c) { children.push_back(c.get()); });
      // Push in reverse so children are emitted in evaluation order.
      for (auto it = children.rbegin(); it != children.rend(); ++it)
        if (!seen(*it)) stack.push_back({*it, false});
      continue;
    }
    const ExprNode* node = top.node;
    stack.pop_back();
    emit(node);
  }
}

}  // namespace

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn) {
  std::unordered_set<const ExprNode*> visited;
  walk_post_order(
      e, [&](const ExprNode* n) { return visited.count(n) > 0; },
      [&](const ExprNode* n) {
        if (visited.insert(n).second) fn(Expr(n));
      });
}

void ExprVisitor::visit(const Expr& e) {
  walk_post_order(
      e, [&](const ExprNode* n) { return visited_.count(n) > 0; },
      [&](const ExprNode* n) {
        if (visited_.insert(n).second) dispatch(Expr(n));
      });
}

void ExprVisitor::dispatch(const Expr& e) {
  switch (e->kind()) {
#define SY_CASE(name, lower) \
  case ExprKind::k##name:    \
    return visit_##lower(downcast<name##Node>(e));
    SY_EXPR_KINDS(SY_CASE)
#undef SY_CASE
  }
}

Expr ExprMutator::mutate(const Expr& e) {
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second;
  walk_post_order(
      e, [&](const ExprNode* n) { return memo_.count(n) > 0; },
      [&](const ExprNode* n) {
        if (memo_.count(n)) return;
        Expr original(n);
        Expr result = dispatch(original);
        if (!result.same_as(original)) {
          result = inherit_placement(result, original, [&](const ExprNode* p) { return is_existing(p); });
          produced_.insert(result.get());
        }
        memo_.emplace(n, std::move(result));
      });
  return memo_.at(e.get());
}

IRModule ExprMutator::mutate_module(const IRModule& mod) {
  IRModule out = mod;
  for (const auto& [name, fn] : mod.functions()) {
    Expr r = mutate(fn);
    const FunctionNode* f = as<FunctionNode>(r);
    if (!f) throw std::logic_error("a mutator turned function @" + name + " into a non-function");
    out.add(name, Function(f));
  }
  return out;
}

Expr ExprMutator::dispatch(const Expr& e) {
  switch (e->kind()) {
#define SY_CASE(name, lower) \
  case ExprKind::k##name:    \
    return visit_##lower(downcast<name##Node>(e));
    SY_EXPR_KINDS(SY_CASE)
#undef SY_CASE
  }
  return e;
}

namespace {
std::vector<Expr> mutate_all(ExprMutator& m, const std::vector<Expr>& xs) {
  std::vector<Expr> out;
  out.reserve(xs.size());
  for (const Expr& x : xs) out.push_back(m.mutate(x));
  return out;
}
}  // namespace

Expr ExprMutator::visit_call(const Call& c) {
  return with_fields(c, {.op = mutate(c->op), .args = mutate_all(*this, c->args)});
}

Expr ExprMutator::visit_function(const Function& f) {
  std::vector<Var> params;
  for (const Var& p : f->params) {
    Expr m = mutate(p);
    const VarNode* v = as<VarNode>(m);
    if (!v) throw std::logic_error("a mutator replaced parameter %" + p->name_hint + " with a non-variable");
    params.push_back(Var(v));
  }
  return with_fields(f, {.params = std::move(params), .body = mutate(f->body)});
}

Expr ExprMutator::visit_let(const Let& l) {
  Expr m = mutate(l->var);
  const VarNode* v = as<VarNode>(m);
  if (!v) throw std::logic_error("a mutator replaced let variable %" + l->var->name_hint + " with a non-variable");
  return with_fields(l, {.var = Var(v), .value = mutate(l->value), .body = mutate(l->body)});
}

Expr ExprMutator::visit_if(const If& i) {
  return with_fields(i, {.cond = mutate(i->cond), .then_branch = mutate(i->then_branch),
                         .else_branch = mutate(i->else_branch)});
}

Expr ExprMutator::visit_tuple(const Tuple& t) { return with_fields(t, {.fields = mutate_all(*this, t->fields)}); }

Expr ExprMutator::visit_tuple_get_item(const TupleGetItem& t) {
  return with_fields(t, {.tuple = mutate(t->tuple)});
}

}  // namespace switchyard
