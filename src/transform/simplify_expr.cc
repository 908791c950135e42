// SimplifyExpr: the rules of simplify_rules.h, applied to every function.
#include "transform/simplify_expr.h"

#include "transform/simplify_rules.h"

namespace switchyard {

Pass SimplifyExpr() {
  return make_module_pass({"SimplifyExpr", 1, {"InferType"}}, [](const IRModule& mod, const PassContext&) {
    return map_functions(mod, [](const std::string&, const Function& fn) {
      return downcast<FunctionNode>(simplify_rules().apply(fn));
    });
  });
}

}  // namespace switchyard
