// Interned handles of the placement operators, on_device (a wish) and
// device_copy (a crossing), so passes recognise them by pointer rather than
// by comparing names.
#pragma once

#include "ir/expr.h"

namespace switchyard {

const OpNode* on_device_op();
const OpNode* device_copy_op();
// Whether `op` is on_device or device_copy: bookkeeping, no computation.
bool is_placement_op(const OpNode* op);

// The call when `e` is a call of on_device / device_copy, else null.
const CallNode* as_on_device(const Expr& e);
const CallNode* as_device_copy(const Expr& e);

}  // namespace switchyard
