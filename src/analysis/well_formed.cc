// Scope checking with an explicit stack of enter/exit events.
#include "analysis/well_formed.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/functor.h"
#include "support/error.h"

namespace switchyard {

namespace {

class ScopeChecker {
 public:
  // The first problem in global function `name` (one checker for a whole
  // module: a variable bound in two functions is caught too).
  std::optional<Violation> run(const std::string& name, const Expr& root) {
    name_ = name;
    root_ = root;
    stack_.push_back({Event::kVisit, root});
    while (!stack_.empty() && !violation_) {
      Frame f = stack_.back();
      stack_.pop_back();
      switch (f.event) {
        case Event::kVisit: visit(f.node); break;
        case Event::kBind: bind(downcast<VarNode>(f.node), f.node); break;
        case Event::kUnbind: in_scope_.erase(f.node.get()); break;
      }
    }
    return violation_;
  }

 private:
  enum class Event { kVisit, kBind, kUnbind };
  struct Frame {
    Event event;
    Expr node;
  };

  void bind(const Var& v, const Expr& where) {
    if (!bound_.insert(v.get()).second) {
      violation_ = Violation{"variable %" + v->name_hint + " is bound more than once (in @" + name_ + ")", v};
      return;
    }
    in_scope_.insert(v.get());
  }

  void visit(const Expr& e) {
    if (e->kind() == ExprKind::kVar) {
      if (in_scope_.count(e.get())) return;
      const std::string& var = static_cast<const VarNode*>(e.get())->name_hint;
      violation_ = Violation{binds(root_, e.get()) ? "variable %" + var +
                                                          " is used outside the scope of its binding (in @" + name_ + ")"
                                                    : "variable %" + var + " is free: no parameter or let of @" +
                                                          name_ + " binds it",
                             e};
      return;
    }
    if (!visited_.insert(e.get()).second) return;
    if (const FunctionNode* f = as<FunctionNode>(e)) {
      for (const Var& p : f->params) stack_.push_back({Event::kUnbind, p});
      stack_.push_back({Event::kVisit, f->body});
      for (const Var& p : f->params) stack_.push_back({Event::kBind, p});
      return;
    }
    if (const LetNode* l = as<LetNode>(e)) {
      stack_.push_back({Event::kUnbind, l->var});
      stack_.push_back({Event::kVisit, l->body});
      stack_.push_back({Event::kBind, l->var});
      stack_.push_back({Event::kVisit, l->value});
      return;
    }
    std::vector<Expr> children;
    for_each_child(e, [&](const Expr& c) { children.push_back(c); });
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack_.push_back({Event::kVisit, *it});
  }

  // Whether a parameter or let inside `root` binds `var`.
  static bool binds(const Expr& root, const ExprNode* var) {
    bool found = false;
    post_order_visit(root, [&](const Expr& e) {
      if (const FunctionNode* f = as<FunctionNode>(e))
        for (const Var& p : f->params) found = found || p.get() == var;
      if (const LetNode* l = as<LetNode>(e)) found = found || l->var.get() == var;
    });
    return found;
  }

  std::string name_;
  Expr root_;
  std::vector<Frame> stack_;
  std::unordered_set<const ExprNode*> in_scope_, bound_, visited_;
  std::optional<Violation> violation_;
};

}  // namespace

std::optional<Violation> check_scoping(const IRModule& mod) {
  ScopeChecker checker;
  for (const auto& [name, fn] : mod.functions())
    if (auto v = checker.run(name, fn)) return v;
  return std::nullopt;
}

void require_scoping(const IRModule& mod) {
  ScopeChecker checker;
  for (const auto& [name, fn] : mod.functions())
    if (auto v = checker.run(name, fn))
      throw Error(ErrorKind::kType, v->message, v->node->span().defined() ? v->node->span() : fn->span());
}

}  // namespace switchyard
