// The placement operators: on_device (a wish) and device_copy (a crossing).
#include "op/builtin_ops.h"
#include "op/relation_helpers.h"
#include "op/registry.h"

namespace switchyard {

void register_placement_ops() {
  // The result type is the argument's type, whatever it is (tensor or tuple).
  auto identity = [](const std::vector<Type>& args, const AttrsNode&) -> Type {
    if (args.size() != 1) throw Error(ErrorKind::kType, "expects exactly one argument");
    return args[0];
  };
  register_op({.name = "on_device",
               .num_inputs = 1,
               .attrs = {{"device", AttrKind::kDevice, AttrValue()}},
               .type_relation = identity,
               .pattern = OpPattern::kOpaque,
               .doc = "A wish: the value flowing out of this point lives on `device`."});
  register_op({.name = "device_copy",
               .num_inputs = 1,
               .attrs = {{"src", AttrKind::kDevice, AttrValue()}, {"dst", AttrKind::kDevice, AttrValue()}},
               .type_relation = identity,
               .pattern = OpPattern::kOpaque,
               .doc = "Copies a value from device `src` to device `dst`."});
}

}  // namespace switchyard
