// ToGraphNormalForm: let bindings become shared dataflow edges.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Replaces each let-bound variable by its value, which every use then shares,
// and drops the let. Where values live follows from their uses: a value used
// only inside one if branch stays inside it. A let is kept only where its
// variable carries a device its value does not (a placement wish before
// PlanDevices), since substituting would lose it. Linear, iterative.
Pass ToGraphNormalForm();

}  // namespace switchyard
