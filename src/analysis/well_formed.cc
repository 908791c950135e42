// Scope checking with an explicit stack of enter/exit events.
#include "analysis/well_formed.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace switchyard {

namespace {

class ScopeChecker {
 public:
  std::optional<Violation> run(const Expr& root) {
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
      violation_ = Violation{"variable %" + v->name_hint + " is bound more than once", v};
      return;
    }
    in_scope_.insert(v.get());
  }

  void visit(const Expr& e) {
    if (e->kind() == ExprKind::kVar) {
      if (!in_scope_.count(e.get()))
        violation_ = Violation{"variable %" + static_cast<const VarNode*>(e.get())->name_hint +
                                   " is used outside the scope of its binding",
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

  std::vector<Frame> stack_;
  std::unordered_set<const ExprNode*> in_scope_, bound_, visited_;
  std::optional<Violation> violation_;
};

}  // namespace

std::optional<Violation> check_scoping(const IRModule& mod) {
  ScopeChecker checker;  // one checker: a variable bound in two functions is caught too
  for (const auto& [name, fn] : mod.functions())
    if (auto v = checker.run(fn)) return v;
  return std::nullopt;
}

}  // namespace switchyard
