// SimplifyExpr: the rules of simplify_rules.h, applied to every function.
#include "transform/simplify_expr.h"

#include "transform/simplify_rules.h"

namespace switchyard {

Pass SimplifyExpr() {
  return make_module_pass({"SimplifyExpr", 1, {"InferType"}}, [](const IRModule& mod, const PassContext&) {
    IRModule out = mod;
    for (const auto& [name, fn] : mod.functions()) {
      if (fn->is_primitive()) continue;
      out.add(name, downcast<FunctionNode>(simplify_rules().apply(fn)));
    }
    return out;
  });
}

}  // namespace switchyard
