// The InferType pass.
#include "transform/infer_type_pass.h"

#include "transform/infer_type.h"

namespace switchyard {

Pass InferType() {
  return make_module_pass({"InferType", 0, {}}, [](const IRModule& mod, const PassContext&) { return infer_type(mod); });
}

}  // namespace switchyard
