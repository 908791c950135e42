// Placement of the nodes a pass inserts after planning: an incremental
// re-plan. In a planned module every node states its device, and planning
// takes a stated device as a fact, so planning the module again fixes every
// placement already made and places only the nodes that state none, with
// the fewest bytes copied (a down-cast before a device_copy lands where its
// input lives), inserting copies where a new node needs one.
#pragma once

#include "ir/module.h"

namespace switchyard {

// Whether a node of `mod` that planning places states no full device.
bool has_unplaced_nodes(const IRModule& mod);

// `mod` itself when it is not planned or has no unplaced node; otherwise the
// module re-planned over its devices (mod.devices()), types inferred first
// where the pass left them missing. Errors as plan_devices.
IRModule place_new_nodes(const IRModule& mod);

}  // namespace switchyard
