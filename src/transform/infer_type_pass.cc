// The InferType pass.
#include "transform/infer_type_pass.h"

#include "transform/infer_type.h"

namespace switchyard {

Pass InferType() {
  return make_module_pass({.name = "InferType", .symbolic_shapes = true},
                          [](const IRModule& mod, const PassContext&) { return infer_type(mod); });
}

}  // namespace switchyard
