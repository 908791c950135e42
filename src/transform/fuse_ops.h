// FuseOps: groups operator calls into primitive functions, one per kernel.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Puts every operator call (on_device and device_copy excepted) into exactly
// one group and replaces each group by a call of a Function literal with
// attribute Primitive=1, placed on the group's device and carrying the fused
// span of its nodes. Grouping follows the registry's patterns: an anchor takes
// the chain of element-wise/broadcast consumers after it (its epilogue);
// element-wise, broadcast and injective calls chain together; a reduction
// takes its element-wise/broadcast/injective producers (its prologue) and an
// element-wise epilogue. A producer joins its consumer only when the consumer
// is its sole user and both live on the same device; a group holds at most one
// anchor or reduction. At opt level 0 every call is a group of its own.
// Configuration "FuseOps.max_group_size" (default 256) bounds a group's calls.
// Requires InferType.
Pass FuseOps();

}  // namespace switchyard
