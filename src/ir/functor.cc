// Iterative post-order traversal shared by the visitor and the mutator.
#include "ir/functor.h"

#include <string_view>

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

// A case calling node kind `name`'s visit_`lower`, for the dispatches of
// both the visitor and the mutator.
#define SY_DISPATCH_CASE(name, lower) \
  case ExprKind::k##name:             \
    return visit_##lower(downcast<name##Node>(e));

void ExprVisitor::dispatch(const Expr& e) {
  switch (e->kind()) {
    SY_EXPR_KINDS(SY_DISPATCH_CASE)
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
    SY_EXPR_KINDS(SY_DISPATCH_CASE)
  }
  return e;
}
#undef SY_DISPATCH_CASE

namespace {

// How a mutator's errors name a binder field.
std::string binder_noun(std::string_view field) {
  if (field == "params") return "parameter";
  if (field == "var") return "let variable";
  return std::string(field);
}

Var mutate_binder(ExprMutator& m, const Var& v, std::string_view field) {
  const VarNode* mutated = as<VarNode>(m.mutate(v));
  if (!mutated)
    throw std::logic_error("a mutator replaced " + binder_noun(field) + " %" + v->name_hint + " with a non-variable");
  return Var(mutated);
}

// Sets one field's change to its mutated children; values stay unchanged.
template <typename T>
void mutate_field(ExprMutator& m, std::optional<T>& change, const T& current, std::string_view field) {
  if constexpr (std::is_same_v<T, Expr>) {
    change = m.mutate(current);
  } else if constexpr (std::is_same_v<T, Var>) {
    change = mutate_binder(m, current, field);
  } else if constexpr (is_child_list_field<T>) {
    T out;
    out.reserve(current.size());
    for (const auto& x : current) {
      if constexpr (std::is_same_v<T, std::vector<Var>>) out.push_back(mutate_binder(m, x, field));
      else out.push_back(m.mutate(x));
    }
    change = std::move(out);
  }
}

}  // namespace

#define SY_MUTATE_FIELD(T, name) mutate_field(*this, c.name, n->name, #name);
#define SY_DEFAULT_VISIT(Name, lower)                     \
  Expr ExprMutator::visit_##lower(const Name& n) {        \
    Name##Changes c;                                      \
    SY_FIELDS_##Name(SY_MUTATE_FIELD)                     \
    return with_fields(n, std::move(c));                  \
  }
SY_REBUILT_EXPR_KINDS(SY_DEFAULT_VISIT)
#undef SY_DEFAULT_VISIT
#undef SY_MUTATE_FIELD

Expr ExprMutator::visit_op(const Op& o) { return o; }

}  // namespace switchyard
