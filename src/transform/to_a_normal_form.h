// ToANormalForm: every intermediate value gets a name.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Binds every non-atomic expression (calls, tuples, projections, ifs and
// function literals) to a let variable, in evaluation order, in the
// innermost scope (function body or if branch) that encloses all its uses:
// a value used only inside one branch is computed inside that branch. Each
// new variable carries the device, span and type of the value it names (a
// typed module stays typed);
// existing let variables are kept. Variables, constants, global and
// operator references and primitive (fused) functions are atomic and stay
// in place. Linear (plus the depth of if nesting per shared value).
Pass ToANormalForm();

}  // namespace switchyard
