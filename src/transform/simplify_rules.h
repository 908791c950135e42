// SimplifyExpr's rewrite rules, one named pattern each.
#pragma once

#include "transform/pattern_rules.h"

namespace switchyard {

// In the order they are tried: the layer-normalisation folds
// (layer_norm_rule.h), then x+0, 0+x, x*1, 1*x, x-0, x/1 and -(-x) to x;
// cast, broadcast_to and shape views (reshape, squeeze, expand_dims) that
// change nothing dropped; a relu under a clip bounded below by 0 or more
// dropped; a shape view of a shape view made one reshape; a
// transpose of a transpose made one (none when the composition is the
// identity), and one that only moves unit dimensions made a reshape; a
// rank-3 matmul by a transpose made nn.batch_matmul reading
// its right operand transposed. Built once, on first use.
const RuleSet& simplify_rules();

}  // namespace switchyard
