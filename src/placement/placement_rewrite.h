// Writes a placement solution back into the IR: every node gets its device,
// every on_device disappears, and a device_copy is inserted exactly where a
// value is consumed on a device other than its producer's (one per value and
// destination, shared by every consumer there). Constants are duplicated per
// consuming device instead of copied; a constant that states a device keeps
// it, so planning a planned module changes nothing.
#pragma once

#include "placement/placement_graph.h"
#include "placement/placement_solver.h"

namespace switchyard {

IRModule rewrite_placement(const IRModule& mod, const PlacementGraph& graph, const PlacementSolution& solution,
                           const CompilationConfig& config);

}  // namespace switchyard
