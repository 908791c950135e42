// The check before lowering: everything the entry function reaches is placed
// and is a construct the backend compiles, so lowering itself never meets a
// surprise. Failures name the node, its span and, when an invariant checker
// watched the pipeline, the pass that last produced the node.
#pragma once

#include <string>

#include "ir/module.h"
#include "transform/instruments.h"

namespace switchyard {

// Throws Error(kBackend) when `entry` (or a function it calls) holds:
//  - an expression that is not fully placed (Var, Constant, Call, If,
//    TupleGetItem, Function; inside primitive functions too) or not typed;
//  - an on_device wish (planning did not run);
//  - a function value: a non-primitive function literal, a global function
//    or variable used other than as a callee, a call of a variable;
//  - recursion between global functions;
//  - an entry parameter that is not a tensor.
// `checker` may be null. Iterative; never aborts.
void check_lowerable(const IRModule& mod, const std::string& entry, const InvariantChecker* checker = nullptr);

}  // namespace switchyard
