// SimplifyExpr: algebraic identities that leave the result's type unchanged.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Rewrites x*1, 1*x, x+0, 0+x, x-0, x/1 and negative(negative(x)) to x; drops
// cast, reshape, squeeze, expand_dims and broadcast_to that change nothing;
// merges chains of reshape/squeeze/expand_dims into one reshape and chains
// of transposes into one (none when the composed permutation is the
// identity). A rewrite happens only when the result has the type and the
// device of the call it replaces (a broadcasting x+0 stays); a new node
// takes the replaced call's device, span and type, so the module stays typed
// without another InferType. Requires InferType.
Pass SimplifyExpr();

}  // namespace switchyard
