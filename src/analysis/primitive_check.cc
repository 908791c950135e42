// Tracking fused kernels across passes by body and span.
#include "analysis/primitive_check.h"

#include "ir/functor.h"

namespace switchyard {

namespace {

// Calls fn(function) for each function literal called in `mod`.
template <typename F>
void for_each_called_literal(const IRModule& mod, F&& fn) {
  for (const auto& [name, f] : mod.functions())
    post_order_visit(f, [&](const Expr& e) {
      if (const CallNode* c = as<CallNode>(e))
        if (const FunctionNode* callee = as<FunctionNode>(c->op)) fn(*callee, c->op);
    });
}

}  // namespace

std::optional<Violation> PrimitiveTracker::find_lost(const IRModule& mod) const {
  if (body_nodes_.empty()) return std::nullopt;
  std::optional<Violation> lost;
  for_each_called_literal(mod, [&](const FunctionNode& f, const Expr& node) {
    if (lost || f.is_primitive()) return;
    bool was_kernel = body_nodes_.count(f.body.get()) || (f.span().defined() && spans_.count(f.span().to_string()));
    if (was_kernel)
      lost = Violation{"a fused function lost its 'Primitive' attribute (the backend compiles only primitive "
                       "functions; rebuild it with with_fields, which keeps attributes)",
                       node};
  });
  return lost;
}

void PrimitiveTracker::remember(const IRModule& mod) {
  for_each_called_literal(mod, [&](const FunctionNode& f, const Expr&) {
    if (!f.is_primitive() || !body_nodes_.insert(f.body.get()).second) return;
    bodies_.push_back(f.body);
    if (f.span().defined()) spans_.insert(f.span().to_string());
  });
}

}  // namespace switchyard
