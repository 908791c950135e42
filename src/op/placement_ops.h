// Interned handles of the placement operators, on_device (a wish) and
// device_copy (a crossing), so passes recognise them by pointer rather than
// by comparing names.
#pragma once

#include "ir/expr.h"
#include "ir/virtual_device.h"

namespace switchyard {

const OpNode* on_device_op();
const OpNode* device_copy_op();
// Whether `op` is on_device or device_copy: bookkeeping, no computation.
bool is_placement_op(const OpNode* op);

// The call when `e` is a call of on_device / device_copy, else null.
const CallNode* as_on_device(const Expr& e);
const CallNode* as_device_copy(const Expr& e);

// The typed attributes: on_device's wish, device_copy's source and
// destination (the registry checked that each parses, AttrKind::kDevice).
const VirtualDevice* on_device_wish(const CallNode& on_device);
struct DeviceCopyAttrs {
  const VirtualDevice* src = nullptr;
  const VirtualDevice* dst = nullptr;
};
DeviceCopyAttrs device_copy_attrs(const CallNode& device_copy);
// A device_copy call of `value` (a pass's new node: its meta states where it runs).
Call make_device_copy(Expr value, const DeviceCopyAttrs& ends, NodeMeta meta);

}  // namespace switchyard
