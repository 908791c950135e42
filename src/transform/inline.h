// Inline: replaces calls of small global functions by their bodies.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Inlines each call of a global function whose body holds at most N calls
// (PassContext config "inline.max_calls", default 8) and that is neither
// recursive nor primitive (fused), when the call is placed where the callee
// expects: the call on the callee's result device and each argument on its
// parameter's device (always so after PlanDevices). Callees are inlined into
// first, so their size is measured after their own inlining. The inlined
// body keeps the callee nodes' devices, spans and types; its arguments
// replace the parameters and its let variables are renamed apart. Globals
// referenced before the pass and by no other function after it are removed,
// except @main.
Pass Inline();

}  // namespace switchyard
