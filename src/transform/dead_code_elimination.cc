// DeadCodeElimination: a liveness walk from each function's result, then an
// iterative rebuild that never enters the values of dead bindings.
#include "transform/dead_code_elimination.h"

#include <unordered_map>

#include "ir/with_fields.h"

namespace switchyard {

namespace {

class DeadBindingRemover {
 public:
  // `fn` itself when no binding is dead.
  Function run(const Function& fn) {
    mark_live(fn.get());
    if (live_lets_ == reached_lets_) return fn;
    return downcast<FunctionNode>(rebuild(fn.get()));
  }

 private:
  struct State {
    bool reached = false;                 // for a variable: it is used
    const ExprNode* value = nullptr;      // for a let variable not yet used: its value
    Expr rebuilt;
  };

  bool is_dead(const LetNode* let) const { return !state_.at(let->var.get()).reached; }

  // A let's value is walked only once its variable is used, so chains of
  // dead bindings die together.
  void mark_live(const ExprNode* root) {
    std::vector<const ExprNode*> work{root};
    while (!work.empty()) {
      const ExprNode* n = work.back();
      work.pop_back();
      State& s = state_[n];
      if (s.reached) continue;
      s.reached = true;
      switch (n->kind()) {
        case ExprKind::kLet: {
          const auto* let = static_cast<const LetNode*>(n);
          ++reached_lets_;
          State& var = state_[let->var.get()];
          if (var.reached) {
            ++live_lets_;
            work.push_back(let->value.get());
          } else {
            var.value = let->value.get();
          }
          work.push_back(let->body.get());
          break;
        }
        case ExprKind::kVar:
          if (s.value) {
            ++live_lets_;
            work.push_back(s.value);
          }
          break;
        case ExprKind::kFunction:
          work.push_back(static_cast<const FunctionNode*>(n)->body.get());
          break;
        case ExprKind::kConstant: case ExprKind::kCall: case ExprKind::kIf: case ExprKind::kTuple:
        case ExprKind::kTupleGetItem: case ExprKind::kGlobalVar: case ExprKind::kOp:
          for_each_child(Expr(n), [&](const Expr& c) { work.push_back(c.get()); });
      }
    }
  }

  // What the rebuilt `n` is made from: a dead let is replaced by its body.
  void parts(const ExprNode* n, std::vector<const ExprNode*>* out) const {
    out->clear();
    if (n->kind() == ExprKind::kLet && is_dead(static_cast<const LetNode*>(n))) {
      out->push_back(static_cast<const LetNode*>(n)->body.get());
      return;
    }
    for_each_child(Expr(n), [&](const Expr& c) { out->push_back(c.get()); });
  }

  Expr rebuild(const ExprNode* root) {
    std::vector<std::pair<const ExprNode*, bool>> stack{{root, false}};
    std::vector<const ExprNode*> inputs;
    std::vector<Expr> children;
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      State& s = state_[n];
      if (s.rebuilt) {
        stack.pop_back();
        continue;
      }
      parts(n, &inputs);
      if (!expanded) {
        stack.back().second = true;
        for (auto it = inputs.rbegin(); it != inputs.rend(); ++it)
          if (!state_[*it].rebuilt) stack.push_back({*it, false});
        continue;
      }
      stack.pop_back();
      children.clear();
      for (const ExprNode* input : inputs) children.push_back(state_.at(input).rebuilt);
      bool dead_let = n->kind() == ExprKind::kLet && is_dead(static_cast<const LetNode*>(n));
      s.rebuilt = dead_let ? children[0] : with_children(Expr(n), children);
    }
    return state_.at(root).rebuilt;
  }

  std::unordered_map<const ExprNode*, State> state_;
  size_t reached_lets_ = 0;
  size_t live_lets_ = 0;
};

}  // namespace

Pass DeadCodeElimination() {
  return make_module_pass({"DeadCodeElimination", 1, {}}, [](const IRModule& mod, const PassContext&) {
    return map_functions(mod, [](const std::string&, const Function& fn) { return DeadBindingRemover().run(fn); });
  });
}

}  // namespace switchyard
