// The reference interpreter: runs any well-typed module on the host, with
// plain kernels, and records where each tensor lives. It is the oracle every
// compiled result is compared against and the engine of constant folding.
//
// Placement is bookkeeping only: a tensor produced by a node carries that
// node's virtual_device (unconstrained before planning); device_copy returns
// the same data on its `dst`; on_device relabels its argument to its device.
//
// Evaluation is iterative on data depth (an explicit stack per function
// activation), so 1,000,000-deep chains of calls or lets run in a small
// native stack. Only calls of functions nest natively, as deep as the
// program's call nesting.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "interp/value.h"
#include "ir/module.h"

namespace switchyard {

// Runs `mod`'s function `entry` on `inputs`, given by parameter name.
// Throws Error(kUsage) naming the parameter, the expected and the actual
// type when an input is missing, unknown, or of the wrong dtype or shape;
// Error(kUsage) "no reference kernel for operator 'x'" (with the call's
// span) for an operator without a kernel; Error(kRuntime) for arithmetic
// faults such as integer division by zero.
Value evaluate(const IRModule& mod, const std::map<std::string, NDArray>& inputs, const std::string& entry = "main");

// Evaluates an expression with no free variables (constant folding).
// GlobalVars resolve in `mod`, which may be null when there are none.
Value evaluate_expr(const Expr& closed_expr, const IRModule* mod = nullptr);

}  // namespace switchyard
