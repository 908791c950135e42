// with_fields for every node kind, kind-independent rebuilds, and placement
// inheritance for replacements.
#include "ir/with_fields.h"

#include <unordered_map>

namespace switchyard {

namespace {

template <typename T>
bool same(const std::optional<T>& changed, const T& current) {
  if (!changed) return true;
  if constexpr (std::is_same_v<T, const VirtualDevice*> || std::is_same_v<T, int>) {
    return *changed == current;
  } else if constexpr (std::is_same_v<T, Span> || std::is_same_v<T, std::string>) {
    return *changed == current;
  } else if constexpr (std::is_same_v<T, NDArray>) {
    return changed->data() == current.data() && changed->shape() == current.shape() &&
           changed->dtype() == current.dtype();
  } else if constexpr (std::is_same_v<T, std::vector<Expr>> || std::is_same_v<T, std::vector<Var>>) {
    if (changed->size() != current.size()) return false;
    for (size_t i = 0; i < current.size(); ++i)
      if (!(*changed)[i].same_as(current[i])) return false;
    return true;
  } else {
    return changed->same_as(current);
  }
}

template <typename T>
T pick(std::optional<T>& changed, const T& current) {
  return changed ? std::move(*changed) : current;
}

template <typename C>
bool meta_same(const C& c, const ExprNode* n) {
  return same(c.virtual_device, n->virtual_device()) && same(c.span, n->span()) &&
         same(c.checked_type, n->checked_type());
}

template <typename C>
NodeMeta meta_of(C& c, const ExprNode* n) {
  return NodeMeta{pick(c.virtual_device, n->virtual_device()), pick(c.span, n->span()),
                  pick(c.checked_type, n->checked_type())};
}

}  // namespace

Var with_fields(const Var& n, VarChanges c) {
  if (same(c.name_hint, n->name_hint) && same(c.type_annotation, n->type_annotation) && meta_same(c, n.get()))
    return n;
  return make_ref<VarNode>(pick(c.name_hint, n->name_hint), pick(c.type_annotation, n->type_annotation),
                           meta_of(c, n.get()));
}

Constant with_fields(const Constant& n, ConstantChanges c) {
  if (same(c.data, n->data) && meta_same(c, n.get())) return n;
  return make_ref<ConstantNode>(pick(c.data, n->data), meta_of(c, n.get()));
}

Call with_fields(const Call& n, CallChanges c) {
  if (same(c.op, n->op) && same(c.args, n->args) && same(c.attrs, n->attrs) && meta_same(c, n.get())) return n;
  return make_ref<CallNode>(pick(c.op, n->op), pick(c.args, n->args), pick(c.attrs, n->attrs),
                            meta_of(c, n.get()));
}

Function with_fields(const Function& n, FunctionChanges c) {
  if (same(c.params, n->params) && same(c.body, n->body) && same(c.ret_type, n->ret_type) &&
      same(c.attrs, n->attrs) && meta_same(c, n.get()))
    return n;
  return make_ref<FunctionNode>(pick(c.params, n->params), pick(c.body, n->body), pick(c.ret_type, n->ret_type),
                                pick(c.attrs, n->attrs), meta_of(c, n.get()));
}

Let with_fields(const Let& n, LetChanges c) {
  if (same(c.var, n->var) && same(c.value, n->value) && same(c.body, n->body) && meta_same(c, n.get())) return n;
  return make_ref<LetNode>(pick(c.var, n->var), pick(c.value, n->value), pick(c.body, n->body),
                           meta_of(c, n.get()));
}

If with_fields(const If& n, IfChanges c) {
  if (same(c.cond, n->cond) && same(c.then_branch, n->then_branch) && same(c.else_branch, n->else_branch) &&
      meta_same(c, n.get()))
    return n;
  return make_ref<IfNode>(pick(c.cond, n->cond), pick(c.then_branch, n->then_branch),
                          pick(c.else_branch, n->else_branch), meta_of(c, n.get()));
}

Tuple with_fields(const Tuple& n, TupleChanges c) {
  if (same(c.fields, n->fields) && meta_same(c, n.get())) return n;
  return make_ref<TupleNode>(pick(c.fields, n->fields), meta_of(c, n.get()));
}

TupleGetItem with_fields(const TupleGetItem& n, TupleGetItemChanges c) {
  if (same(c.tuple, n->tuple) && same(c.index, n->index) && meta_same(c, n.get())) return n;
  return make_ref<TupleGetItemNode>(pick(c.tuple, n->tuple), pick(c.index, n->index), meta_of(c, n.get()));
}

GlobalVar with_fields(const GlobalVar& n, GlobalVarChanges c) {
  if (same(c.name, n->name) && meta_same(c, n.get())) return n;
  return make_ref<GlobalVarNode>(pick(c.name, n->name), meta_of(c, n.get()));
}

Expr with_meta(const Expr& e, const MetaChanges& m) {
  switch (e->kind()) {
#define SY_CASE(name)                                                                                \
  case ExprKind::k##name: {                                                                         \
    name##Changes c;                                                                                \
    c.virtual_device = m.virtual_device;                                                            \
    c.span = m.span;                                                                                \
    c.checked_type = m.checked_type;                                                                \
    return with_fields(downcast<name##Node>(e), std::move(c));                                      \
  }
    SY_CASE(Var) SY_CASE(Constant) SY_CASE(Call) SY_CASE(Function) SY_CASE(Let) SY_CASE(If)
    SY_CASE(Tuple) SY_CASE(TupleGetItem) SY_CASE(GlobalVar)
#undef SY_CASE
    case ExprKind::kOp:
      return e;
  }
  return e;
}

Expr with_children(const Expr& e, const std::vector<Expr>& ch) {
  switch (e->kind()) {
    case ExprKind::kCall:
      return with_fields(downcast<CallNode>(e), {.op = ch[0], .args = std::vector<Expr>(ch.begin() + 1, ch.end())});
    case ExprKind::kFunction: {
      auto f = downcast<FunctionNode>(e);
      std::vector<Var> params;
      for (size_t i = 0; i + 1 < ch.size(); ++i) params.push_back(downcast<VarNode>(ch[i]));
      return with_fields(f, {.params = std::move(params), .body = ch.back()});
    }
    case ExprKind::kLet:
      return with_fields(downcast<LetNode>(e), {.var = downcast<VarNode>(ch[0]), .value = ch[1], .body = ch[2]});
    case ExprKind::kIf:
      return with_fields(downcast<IfNode>(e), {.cond = ch[0], .then_branch = ch[1], .else_branch = ch[2]});
    case ExprKind::kTuple:
      return with_fields(downcast<TupleNode>(e), {.fields = ch});
    case ExprKind::kTupleGetItem:
      return with_fields(downcast<TupleGetItemNode>(e), {.tuple = ch[0]});
    default:
      return e;
  }
}

Expr inherit_placement(const Expr& replacement, const Expr& original,
                       const std::function<bool(const ExprNode*)>& is_existing) {
  const VirtualDevice* vd = original->virtual_device();
  const Span& span = original->span();
  bool have_vd = !vd->is_fully_unconstrained();
  bool have_span = span.defined();
  if (!have_vd && !have_span) return replacement;

  auto needs_fill = [&](const Expr& e) {
    return (have_vd && e->virtual_device()->is_fully_unconstrained()) || (have_span && !e->span().defined());
  };
  auto is_leaf = [&](const Expr& e) {
    ExprKind k = e->kind();
    return k == ExprKind::kVar || k == ExprKind::kGlobalVar || k == ExprKind::kOp || is_existing(e.get()) ||
           e.same_as(original);
  };

  // Post-order over the new part of `replacement`, with an explicit stack.
  std::unordered_map<const ExprNode*, Expr> done;
  struct Frame { Expr e; bool expanded; };
  std::vector<Frame> stack{{replacement, false}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    Expr e = top.e;
    if (done.count(e.get())) { stack.pop_back(); continue; }
    if (is_leaf(e)) { done.emplace(e.get(), e); stack.pop_back(); continue; }
    if (!top.expanded) {
      top.expanded = true;
      for_each_child(e, [&](const Expr& c) {
        if (!done.count(c.get())) stack.push_back({c, false});
      });
      continue;
    }
    stack.pop_back();
    std::vector<Expr> children;
    for_each_child(e, [&](const Expr& c) { children.push_back(done.at(c.get())); });
    Expr rebuilt = with_children(e, children);
    if (needs_fill(rebuilt)) {
      MetaChanges m;
      if (have_vd && rebuilt->virtual_device()->is_fully_unconstrained()) m.virtual_device = vd;
      if (have_span && !rebuilt->span().defined()) m.span = span;
      rebuilt = with_meta(rebuilt, m);
    }
    done.emplace(e.get(), rebuilt);
  }
  return done.at(replacement.get());
}

}  // namespace switchyard
