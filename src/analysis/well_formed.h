// Well-formedness: every variable is bound exactly once and used only in the
// scope of its binding (function parameters in the body, a let's variable in
// the let's body), and the module type-checks.
#pragma once

#include "analysis/violation.h"
#include "ir/module.h"

namespace switchyard {

// The first scoping problem found, or nullopt: "variable %x is bound more
// than once (in @main)", "variable %y is free: no parameter or let of @main
// binds it", "variable %v is used outside the scope of its binding (in
// @main)". Linear, iterative (the search that tells a free variable apart
// runs once, on the failing function).
std::optional<Violation> check_scoping(const IRModule& mod);

// The same, as Error(kType) at the variable's span (its function's where it
// has none), for InferType: an ill-scoped module never reaches a build.
void require_scoping(const IRModule& mod);

}  // namespace switchyard
