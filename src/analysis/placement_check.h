// The placement invariants of a device-planned module (ARCHITECTURE.md,
// invariant 2): every expression fully placed; no on_device left; a value
// crosses devices only through device_copy; every call's arguments live where
// its callee expects them; if conditions on the host.
#pragma once

#include "analysis/violation.h"
#include "ir/module.h"

namespace switchyard {

// The first violation found, or nullopt. `host` may be null (then if
// conditions are not checked). Linear, iterative.
std::optional<Violation> check_placement(const IRModule& mod, const VirtualDevice* host);

}  // namespace switchyard
