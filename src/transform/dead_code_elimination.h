// DeadCodeElimination: drops let bindings whose variable is never used.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Removes every let binding whose variable is not used (transitively: a
// binding used only by dead bindings is dead too). Every operator is pure, so
// no binding is kept for its effects. Unused graph bindings need no work:
// nothing refers to them.
Pass DeadCodeElimination();

}  // namespace switchyard
