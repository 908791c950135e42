// Substitution through a post-order template of the expression.
#include "transform/substitute.h"

#include "ir/with_fields.h"

namespace switchyard {

SubstitutionTemplate::SubstitutionTemplate(const Expr& expr, const std::vector<Var>& holes, bool fresh_bindings) {
  std::unordered_map<const ExprNode*, uint32_t> index;
  std::unordered_map<const ExprNode*, int> hole_of;
  for (size_t i = 0; i < holes.size(); ++i) hole_of.emplace(holes[i].get(), int(i));
  std::vector<std::pair<const ExprNode*, bool>> stack{{expr.get(), false}};
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    if (index.count(n)) {
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      for_each_child(Expr(n), [&](const Expr& c) {
        if (!index.count(c.get())) stack.push_back({c.get(), false});
      });
      continue;
    }
    stack.pop_back();
    Entry entry{n, {}};
    for_each_child(Expr(n), [&](const Expr& c) { entry.children.push_back(index.at(c.get())); });
    auto hole = hole_of.find(n);
    if (hole != hole_of.end()) entry.hole = hole->second;
    index.emplace(n, uint32_t(entries_.size()));
    entries_.push_back(std::move(entry));
  }
  if (fresh_bindings) {
    for (Entry& e : entries_) {
      if (e.node->kind() == ExprKind::kLet) entries_[e.children[0]].fresh = true;
      if (e.node->kind() == ExprKind::kFunction)
        for (size_t p = 0; p + 1 < e.children.size(); ++p) entries_[e.children[p]].fresh = true;
    }
  }
  for (Entry& e : entries_) {
    e.varies = e.hole >= 0 || e.fresh;
    for (uint32_t c : e.children) e.varies = e.varies || entries_[c].varies;
  }
}

Expr SubstitutionTemplate::instantiate(const std::vector<Expr>& values) const {
  std::vector<Expr> built(entries_.size());
  std::vector<Expr> children;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (!e.varies) {
      built[i] = Expr(e.node);
    } else if (e.hole >= 0) {
      built[i] = values[size_t(e.hole)];
    } else if (e.fresh) {
      const auto* v = static_cast<const VarNode*>(e.node);
      built[i] = make_var(v->name_hint, v->type_annotation,
                          {.virtual_device = v->virtual_device(), .span = v->span(), .checked_type = v->checked_type()});
    } else {
      children.clear();
      for (uint32_t c : e.children) children.push_back(built[c]);
      built[i] = with_children(Expr(e.node), children);
    }
  }
  return built.back();
}

Expr substitute(const Expr& expr, const VarMap& replacements, bool fresh_bindings) {
  std::vector<Var> holes;
  std::vector<Expr> values;
  for (const auto& [var, value] : replacements) {
    holes.push_back(Var(var));
    values.push_back(value);
  }
  return SubstitutionTemplate(expr, holes, fresh_bindings).instantiate(values);
}

}  // namespace switchyard
