// The incremental re-plan after a pass: find unplaced nodes, plan again.
#include "placement/place_new_nodes.h"

#include "ir/functor.h"
#include "placement/plan_devices.h"
#include "transform/infer_type.h"

namespace switchyard {

bool has_unplaced_nodes(const IRModule& mod) {
  bool found = false;
  for (const auto& [name, fn] : mod.functions()) {
    if (found) break;
    // Operators and global names are never placed.
    post_order_visit(fn, [&](const Expr& e) {
      ExprKind k = e->kind();
      if (k != ExprKind::kOp && k != ExprKind::kGlobalVar && !e->virtual_device()->is_fully_constrained())
        found = true;
    });
  }
  return found;
}

IRModule place_new_nodes(const IRModule& mod) {
  if (!mod.device_planned() || mod.devices().empty() || !has_unplaced_nodes(mod)) return mod;
  IRModule typed = pass_in_effect("InferType", mod) ? mod : infer_type(mod);
  return plan_devices(typed, CompilationConfig::from_devices(mod.devices())).module;
}

}  // namespace switchyard
