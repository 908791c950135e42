// FoldConstant: evaluates constant sub-expressions at compile time.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Replaces each operator call whose arguments are all constants (or tuples
// of constants) by its value, computed with the reference interpreter, and
// each projection of a constant out of a tuple by that constant. The folded
// constant lives on the device of the expression it replaces and its span is
// the fused span of every node folded into it. on_device is never folded; a
// device_copy of a constant becomes that constant placed on the copy's
// destination, and only once the copy is placed (after PlanDevices). A call
// the interpreter cannot evaluate (an arithmetic fault) stays for run time.
// Constants bound by let are not propagated (run ToGraphNormalForm first).
// Folded constants carry the replaced node's type, so the module stays
// typed. A call whose result would be larger than FoldConstant.max_bytes
// (an integer configuration, default 64 MiB) and than the constants it
// reads together is not folded: it stays a kernel, so a few bytes of
// broadcast_to cannot become gigabytes of weights. Requires InferType.
Pass FoldConstant();

}  // namespace switchyard
