// EliminateCommonSubexpr: one node for each repeated computation.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Merges calls with the same callee, equal attributes and the same argument
// nodes (after merging), and projections of the same tuple at the same
// index, when they are placed on the same virtual device: two identical adds
// on cpu:0 and cpu:1 both stay. The first occurrence (in evaluation order) is
// kept with its span. Bodies of primitive (fused) functions are left alone.
// Merged nodes have equal types, so the module stays typed. Requires
// InferType.
Pass EliminateCommonSubexpr();

}  // namespace switchyard
