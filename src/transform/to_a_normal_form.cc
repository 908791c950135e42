// ToANormalForm: scope placement by least common ancestor of the uses, then
// emission of let bindings in evaluation order.
#include "transform/to_a_normal_form.h"

#include <unordered_map>

#include "ir/with_fields.h"

namespace switchyard {

namespace {

bool is_atomic(const ExprNode* n) {
  switch (n->kind()) {
    case ExprKind::kVar:
    case ExprKind::kConstant:
    case ExprKind::kGlobalVar:
    case ExprKind::kOp:
      return true;
    case ExprKind::kFunction:
      return static_cast<const FunctionNode*>(n)->is_primitive();
    case ExprKind::kCall: case ExprKind::kLet: case ExprKind::kIf: case ExprKind::kTuple: case ExprKind::kTupleGetItem:
      return false;
  }
  return false;
}

// Children in the order this pass walks them: a let's variable between its
// value and its body (so the binding is emitted there); primitive functions
// are leaves; a function literal's parameters are not walked.
template <typename F>
void for_each_walked_child(const ExprNode* n, F&& fn) {
  switch (n->kind()) {
    case ExprKind::kLet: {
      const auto* let = static_cast<const LetNode*>(n);
      fn(let->value.get());
      fn(let->var.get());
      fn(let->body.get());
      break;
    }
    case ExprKind::kFunction:
      if (!is_atomic(n)) fn(static_cast<const FunctionNode*>(n)->body.get());
      break;
    case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kCall: case ExprKind::kIf: case ExprKind::kTuple:
    case ExprKind::kTupleGetItem: case ExprKind::kGlobalVar: case ExprKind::kOp:
      for_each_child(Expr(n), [&](const Expr& c) { fn(c.get()); });
  }
}

struct Binding {
  Var var;
  Expr value;
  Span span;
};

class ANormalizer {
 public:
  Function run(const Function& fn) {
    walk(fn->body.get());
    assign_scopes(fn->body.get());
    for (const ExprNode* n : order_) emit(n);
    return with_fields(fn, {.body = wrap(0, atom(fn->body))});
  }

 private:
  struct Scope {
    int parent;
    int depth;
  };

  // Everything known about one node (one map lookup instead of several).
  struct NodeInfo {
    bool walked = false;
    int scope = -1;                       // where it is bound (non-atomic nodes)
    std::pair<int, int> inner{-1, -1};    // If: then and else scopes; Function: body scope
    const LetNode* binder = nullptr;      // for a let variable: its let
    const LetNode* claimant = nullptr;    // the first let whose value this node is
    Expr atom;                            // what uses of the node refer to
  };

  // Post-order of every node, recording which let binds each variable and
  // the first let whose value each node is.
  void walk(const ExprNode* root) {
    std::vector<std::pair<const ExprNode*, bool>> stack{{root, false}};
    std::vector<const ExprNode*> children;
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      NodeInfo& node = info_[n];
      if (node.walked) {
        stack.pop_back();
        continue;
      }
      if (!expanded) {
        stack.back().second = true;
        if (n->kind() == ExprKind::kLet) {
          const auto* let = static_cast<const LetNode*>(n);
          info_[let->var.get()].binder = let;
          NodeInfo& value = info_[let->value.get()];
          if (!value.claimant) value.claimant = let;
        }
        children.clear();
        for_each_walked_child(n, [&](const ExprNode* c) { children.push_back(c); });
        for (auto it = children.rbegin(); it != children.rend(); ++it)
          if (!info_[*it].walked) stack.push_back({*it, false});
        continue;
      }
      stack.pop_back();
      node.walked = true;
      order_.push_back(n);
    }
  }

  int new_scope(int parent) {
    scopes_.push_back({parent, scopes_[size_t(parent)].depth + 1});
    bindings_.emplace_back();
    return int(scopes_.size()) - 1;
  }

  int common_scope(int a, int b) const {
    while (scopes_[size_t(a)].depth > scopes_[size_t(b)].depth) a = scopes_[size_t(a)].parent;
    while (scopes_[size_t(b)].depth > scopes_[size_t(a)].depth) b = scopes_[size_t(b)].parent;
    while (a != b) {
      a = scopes_[size_t(a)].parent;
      b = scopes_[size_t(b)].parent;
    }
    return a;
  }

  void use_in(const ExprNode* child, int scope) {
    if (is_atomic(child)) return;
    NodeInfo& node = info_.at(child);
    node.scope = node.scope < 0 ? scope : common_scope(node.scope, scope);
  }

  // Users come before what they use in reverse post-order, so each node's
  // scope is final when it is reached and its inner scopes hang below it.
  void assign_scopes(const ExprNode* root) {
    scopes_.push_back({0, 0});
    bindings_.emplace_back();
    use_in(root, 0);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const ExprNode* n = *it;
      if (is_atomic(n)) continue;
      NodeInfo& node = info_.at(n);
      int scope = node.scope;
      if (n->kind() == ExprKind::kIf) {
        const auto* branch = static_cast<const IfNode*>(n);
        node.inner = {new_scope(scope), new_scope(scope)};
        use_in(branch->cond.get(), scope);
        use_in(branch->then_branch.get(), node.inner.first);
        use_in(branch->else_branch.get(), node.inner.second);
      } else if (n->kind() == ExprKind::kFunction) {
        int body_scope = new_scope(scope);
        node.inner = {body_scope, body_scope};
        use_in(static_cast<const FunctionNode*>(n)->body.get(), body_scope);
      } else {
        for_each_walked_child(n, [&](const ExprNode* c) { use_in(c, scope); });
      }
    }
  }

  const Expr& atom(const Expr& e) const { return info_.at(e.get()).atom; }

  std::vector<Expr> atoms(const std::vector<Expr>& xs) const {
    std::vector<Expr> out;
    out.reserve(xs.size());
    for (const Expr& x : xs) out.push_back(atom(x));
    return out;
  }

  void emit(const ExprNode* n) {
    Expr e(n);
    NodeInfo& node = info_.at(n);
    switch (n->kind()) {
      case ExprKind::kVar: {
        node.atom = e;
        const LetNode* let = node.binder;
        if (!let) return;
        const Expr& value = atom(let->value);
        if (!value.same_as(let->var))
          bindings_[size_t(info_.at(let).scope)].push_back({let->var, value, let->span()});
        return;
      }
      case ExprKind::kLet:
        node.atom = atom(static_cast<const LetNode*>(n)->body);
        return;
      case ExprKind::kCall: {
        auto call = downcast<CallNode>(e);
        return bind(n, node, with_fields(call, {.op = atom(call->op), .args = atoms(call->args)}));
      }
      case ExprKind::kTuple:
        return bind(n, node,
                    with_fields(downcast<TupleNode>(e), {.fields = atoms(static_cast<const TupleNode*>(n)->fields)}));
      case ExprKind::kTupleGetItem: {
        auto item = downcast<TupleGetItemNode>(e);
        return bind(n, node, with_fields(item, {.tuple = atom(item->tuple)}));
      }
      case ExprKind::kIf: {
        auto branch = downcast<IfNode>(e);
        return bind(n, node, with_fields(branch, {.cond = atom(branch->cond),
                                                  .then_branch = wrap(node.inner.first, atom(branch->then_branch)),
                                                  .else_branch = wrap(node.inner.second, atom(branch->else_branch))}));
      }
      case ExprKind::kFunction: {
        auto fn = downcast<FunctionNode>(e);
        if (fn->is_primitive()) break;
        return bind(n, node, with_fields(fn, {.body = wrap(node.inner.first, atom(fn->body))}));
      }
      case ExprKind::kConstant: case ExprKind::kGlobalVar: case ExprKind::kOp:
        break;
    }
    node.atom = e;
  }

  // Names `value` (the rebuilt `n`): with the variable of the let whose value
  // `n` is, when that let binds in the same scope; else a new variable.
  void bind(const ExprNode* n, NodeInfo& node, Expr value) {
    const LetNode* claim = node.claimant;
    Var var;
    Span span = n->span();
    if (claim && info_.at(claim).scope == node.scope) {
      var = claim->var;
      span = claim->span();
    } else {
      std::string name = "x";
      name += std::to_string(++fresh_count_);
      var = make_var(std::move(name), Type(),
                     {.virtual_device = n->virtual_device(), .span = n->span(), .checked_type = n->checked_type()});
    }
    bindings_[size_t(node.scope)].push_back({var, std::move(value), span});
    node.atom = var;
  }

  // The scope's bindings around `result`, innermost last.
  Expr wrap(int scope, Expr result) {
    std::vector<Binding>& list = bindings_[size_t(scope)];
    for (auto it = list.rbegin(); it != list.rend(); ++it)
      result = make_let(it->var, it->value, result,
                        {.virtual_device = result->virtual_device(), .span = it->span,
                         .checked_type = result->checked_type()});
    list.clear();
    return result;
  }

  std::vector<const ExprNode*> order_;
  std::vector<Scope> scopes_;
  std::vector<std::vector<Binding>> bindings_;
  std::unordered_map<const ExprNode*, NodeInfo> info_;
  int fresh_count_ = 0;
};

}  // namespace

Pass ToANormalForm() {
  return make_module_pass({"ToANormalForm", 1, {}}, [](const IRModule& mod, const PassContext&) {
    return map_functions(mod, [](const std::string&, const Function& fn) { return ANormalizer().run(fn); });
  });
}

}  // namespace switchyard
