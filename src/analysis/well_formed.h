// Well-formedness: every variable is bound exactly once and used only in the
// scope of its binding (function parameters in the body, a let's variable in
// the let's body), and the module type-checks.
#pragma once

#include "analysis/violation.h"
#include "ir/module.h"

namespace switchyard {

// The first scoping problem found, or nullopt. Linear, iterative.
std::optional<Violation> check_scoping(const IRModule& mod);

}  // namespace switchyard
