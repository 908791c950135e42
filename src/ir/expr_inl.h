// Inline definitions for expr.h.
#pragma once

namespace switchyard {

namespace detail {

// Calls fn on each child expression held by one field (none for a value).
template <typename T, typename F>
void for_each_child_in(const T& field, F& fn) {
  if constexpr (std::is_same_v<T, Expr>) {
    fn(field);
  } else if constexpr (std::is_same_v<T, Var>) {
    fn(Expr(field));
  } else if constexpr (is_child_list_field<T>) {
    for (const auto& c : field) fn(Expr(c));
  }
}

}  // namespace detail

template <typename F>
void for_each_child(const Expr& e, F&& fn) {
  switch (e->kind()) {
#define SY_CASE(Name, lower)                                                                          \
  case ExprKind::k##Name: {                                                                           \
    auto* n = static_cast<const Name##Node*>(e.get());                                                \
    Name##Node::for_each_field([&](const char*, auto member) { detail::for_each_child_in(n->*member, fn); }); \
    break;                                                                                            \
  }
    SY_REBUILT_EXPR_KINDS(SY_CASE)
#undef SY_CASE
    case ExprKind::kOp:
      break;
  }
}

}  // namespace switchyard
