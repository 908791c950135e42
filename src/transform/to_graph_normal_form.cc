// ToGraphNormalForm: an iterative rebuild in which a removable let's
// variable stands for its (rebuilt) value and the let for its body.
#include "transform/to_graph_normal_form.h"

#include <unordered_map>

#include "ir/with_fields.h"

namespace switchyard {

namespace {

// Substituting the value keeps the variable's placement only when both
// carry the same device.
bool is_removable(const LetNode* let) { return let->var->virtual_device() == let->value->virtual_device(); }

class GraphNormalizer {
 public:
  Function run(const Function& fn) { return downcast<FunctionNode>(rebuild(fn)); }

 private:
  // What `n` depends on in the rebuilt form. A removable let is met before
  // any use of its variable (uses lie in its body), so it is registered here.
  void dependencies(const ExprNode* n, std::vector<const ExprNode*>* out) {
    out->clear();
    if (n->kind() == ExprKind::kVar) {
      auto it = value_of_.find(n);
      if (it != value_of_.end()) out->push_back(it->second);
      return;
    }
    if (n->kind() == ExprKind::kLet) {
      const auto* let = static_cast<const LetNode*>(n);
      if (is_removable(let)) {
        value_of_.emplace(let->var.get(), let->value.get());
        out->push_back(let->value.get());
        out->push_back(let->body.get());
        return;
      }
    }
    for_each_child(Expr(n), [&](const Expr& c) { out->push_back(c.get()); });
  }

  Expr result_of(const ExprNode* n) const {
    if (n->kind() == ExprKind::kVar) {
      auto it = value_of_.find(n);
      return it == value_of_.end() ? Expr(n) : done_.at(it->second);
    }
    if (n->kind() == ExprKind::kLet && value_of_.count(static_cast<const LetNode*>(n)->var.get()))
      return done_.at(static_cast<const LetNode*>(n)->body.get());
    std::vector<Expr> children;
    for_each_child(Expr(n), [&](const Expr& c) { children.push_back(done_.at(c.get())); });
    return with_children(Expr(n), children);
  }

  Expr rebuild(const Expr& root) {
    std::vector<std::pair<const ExprNode*, bool>> stack{{root.get(), false}};
    std::vector<const ExprNode*> deps;
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      if (done_.count(n)) {
        stack.pop_back();
        continue;
      }
      if (!expanded) {
        stack.back().second = true;
        dependencies(n, &deps);
        for (auto it = deps.rbegin(); it != deps.rend(); ++it)
          if (!done_.count(*it)) stack.push_back({*it, false});
        continue;
      }
      stack.pop_back();
      done_.emplace(n, result_of(n));
    }
    return done_.at(root.get());
  }

  std::unordered_map<const ExprNode*, const ExprNode*> value_of_;  // removable let variable -> value
  std::unordered_map<const ExprNode*, Expr> done_;
};

}  // namespace

Pass ToGraphNormalForm() {
  return make_module_pass({"ToGraphNormalForm", 1, {}}, [](const IRModule& mod, const PassContext&) {
    return map_functions(mod, [](const std::string&, const Function& fn) { return GraphNormalizer().run(fn); });
  });
}

}  // namespace switchyard
