// SimplifyExpr: algebraic identities that leave the result's type unchanged.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Applies simplify_rules() (simplify_rules.h) to every function but fused
// ones: x*1, x+0, -(-x) and the like become x; casts, broadcasts and shape
// views that change nothing go; chains of shape views and of transposes
// become one; a written-out layer normalisation becomes nn.layer_norm. A
// rewrite happens only when the result has the type and the device of the
// call it replaces (a broadcasting x+0 stays); a new node takes the replaced
// call's device, span and type, so the module stays typed without another
// InferType. Requires InferType.
Pass SimplifyExpr();

}  // namespace switchyard
