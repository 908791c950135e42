// with_fields for every node kind, kind-independent rebuilds, and placement
// inheritance for replacements.
#include "ir/with_fields.h"

#include "ir/retype.h"

#include <type_traits>
#include <unordered_map>
#include <utility>

namespace switchyard {

namespace {

template <typename T>
bool same(const std::optional<T>& changed, const T& current) {
  if (!changed) return true;
  if constexpr (std::is_same_v<T, const VirtualDevice*> || std::is_same_v<T, int> || std::is_same_v<T, Span> ||
                std::is_same_v<T, std::string>) {
    return *changed == current;
  } else if constexpr (std::is_same_v<T, NDArray>) {
    return changed->data() == current.data() && changed->shape() == current.shape() &&
           changed->dtype() == current.dtype();
  } else if constexpr (is_child_list_field<T>) {
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

// A node whose fields change and whose type is not given gets the type its
// new fields give (ir/retype.h), never the old one unchecked.
#define SY_SAME(T, name) same(c.name, n->name) &&
#define SY_PICK(T, name) pick(c.name, n->name),
#define SY_WITH_FIELDS(Name, lower)                                                         \
  Name with_fields(const Name& n, Name##Changes c) {                                        \
    bool fields_same = SY_FIELDS_##Name(SY_SAME) true;                                      \
    if (fields_same && meta_same(c, n.get())) return n;                                     \
    bool type_given = c.checked_type.has_value();                                           \
    Name rebuilt = make_ref<Name##Node>(SY_FIELDS_##Name(SY_PICK) meta_of(c, n.get()));     \
    if (fields_same || type_given) return rebuilt;                                          \
    Type type = retype(n, rebuilt);                                                         \
    if (type.same_as(rebuilt->checked_type())) return rebuilt;                              \
    return downcast<Name##Node>(with_meta(rebuilt, {.checked_type = type}));                \
  }
SY_REBUILT_EXPR_KINDS(SY_WITH_FIELDS)
#undef SY_WITH_FIELDS
#undef SY_PICK
#undef SY_SAME

Expr with_meta(const Expr& e, const MetaChanges& m) {
  switch (e->kind()) {
#define SY_CASE(Name, lower)                                   \
  case ExprKind::k##Name: {                                    \
    Name##Changes c;                                           \
    c.virtual_device = m.virtual_device;                       \
    c.span = m.span;                                           \
    c.checked_type = m.checked_type;                           \
    return with_fields(downcast<Name##Node>(e), std::move(c)); \
  }
    SY_REBUILT_EXPR_KINDS(SY_CASE)
#undef SY_CASE
    case ExprKind::kOp:
      return e;
  }
  return e;
}

namespace {

// Number of a kind's child fields that hold one child (Expr, Var) or a list.
template <typename N>
constexpr size_t child_fields(bool lists) {
  size_t count = 0;
  N::for_each_field([&](const char*, auto member) {
    using T = std::remove_cvref_t<decltype(std::declval<const N&>().*member)>;
    if (is_child_field<T> && is_child_list_field<T> == lists) ++count;
  });
  return count;
}

// Sets one field's change from the next children; a child list takes every
// child the single-child fields leave (a kind has at most one list).
template <typename T>
void take_children(std::optional<T>& change, const std::vector<Expr>& ch, size_t& next, size_t list_size) {
  if constexpr (std::is_same_v<T, Expr>) {
    change = ch[next++];
  } else if constexpr (std::is_same_v<T, Var>) {
    change = downcast<VarNode>(ch[next++]);
  } else if constexpr (is_child_list_field<T>) {
    T list;
    list.reserve(list_size);
    for (size_t i = 0; i < list_size; ++i) {
      if constexpr (std::is_same_v<T, std::vector<Var>>) list.push_back(downcast<VarNode>(ch[next++]));
      else list.push_back(ch[next++]);
    }
    change = std::move(list);
  }
}

template <typename N, typename C>
Expr rebuild_with_children(const Ref<N>& n, const std::vector<Expr>& ch) {
  static_assert(child_fields<N>(true) <= 1, "with_children cannot split children between two lists");
  constexpr size_t singles = child_fields<N>(false);
  size_t list_size = ch.size() - singles;
  C c;
  size_t next = 0;
  C::for_each_field([&](const char*, auto member) { take_children(c.*member, ch, next, list_size); });
  return with_fields(n, std::move(c));
}

}  // namespace

Expr with_children(const Expr& e, const std::vector<Expr>& ch) {
  switch (e->kind()) {
#define SY_CASE(Name, lower) \
  case ExprKind::k##Name:    \
    return rebuild_with_children<Name##Node, Name##Changes>(downcast<Name##Node>(e), ch);
    SY_REBUILT_EXPR_KINDS(SY_CASE)
#undef SY_CASE
    case ExprKind::kOp:
      return e;
  }
  return e;
}

Expr inherit_placement(const Expr& replacement, const Expr& original,
                       const std::function<bool(const ExprNode*)>& is_existing) {
  const VirtualDevice* vd = original->virtual_device();
  const Span& span = original->span();
  bool have_vd = !vd->is_fully_unconstrained();
  bool have_span = span.defined();
  if (!have_vd && !have_span) return replacement;

  // The device goes to the root only: a node built inside the replacement
  // may belong elsewhere (a cast before a device_copy lives where its input
  // does), so it stays unplaced for planning to decide (ARCHITECTURE.md
  // invariant 3; device/place_new_nodes.h after planning).
  auto fills_device = [&](const Expr& e, const Expr& before) {
    return have_vd && before.same_as(replacement) && e->virtual_device()->is_fully_unconstrained();
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
    MetaChanges m;
    if (fills_device(rebuilt, e)) m.virtual_device = vd;
    if (have_span && !rebuilt->span().defined()) m.span = span;
    if (m.virtual_device || m.span) rebuilt = with_meta(rebuilt, m);
    done.emplace(e.get(), rebuilt);
  }
  return done.at(replacement.get());
}

}  // namespace switchyard
