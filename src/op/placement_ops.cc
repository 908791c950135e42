// The placement operators: on_device (a wish) and device_copy (a crossing).
#include "op/placement_ops.h"

#include "op/attr_read.h"
#include "op/builtin_ops.h"
#include "op/relation_helpers.h"
#include "op/registry.h"

namespace switchyard {

const OpNode* on_device_op() {
  static const OpNode* op = as<OpNode>(op_get("on_device"));
  return op;
}

const OpNode* device_copy_op() {
  static const OpNode* op = as<OpNode>(op_get("device_copy"));
  return op;
}

bool is_placement_op(const OpNode* op) { return op && (op == on_device_op() || op == device_copy_op()); }

namespace {

const CallNode* as_call_of(const Expr& e, const OpNode* op) {
  const CallNode* call = as<CallNode>(e);
  return call && call->op.get() == op ? call : nullptr;
}

}  // namespace

const CallNode* as_on_device(const Expr& e) { return as_call_of(e, on_device_op()); }
const CallNode* as_device_copy(const Expr& e) { return as_call_of(e, device_copy_op()); }

const VirtualDevice* on_device_wish(const CallNode& on_device) {
  return VirtualDevice::parse(attr_read::string(*on_device.attrs, "device"));
}

DeviceCopyAttrs device_copy_attrs(const CallNode& device_copy) {
  return {.src = VirtualDevice::parse(attr_read::string(*device_copy.attrs, "src")),
          .dst = VirtualDevice::parse(attr_read::string(*device_copy.attrs, "dst"))};
}

Call make_device_copy(Expr value, const DeviceCopyAttrs& ends, NodeMeta meta) {
  return make_op_call(device_copy_op(), {std::move(value)}, {{"src", ends.src->str()}, {"dst", ends.dst->str()}},
                      std::move(meta));
}

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
