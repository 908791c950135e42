// The type of a node rebuilt by with_fields, so that a rebuilt node never
// carries the type of the node it came from when that type no longer holds.
#pragma once

#include "ir/expr.h"

namespace switchyard {

// The checked type `rebuilt` (made from `old` with some fields changed and
// no type given) should carry: `old`'s type while every child's type and
// every field that decides it are unchanged; otherwise the type recomputed
// locally from the children's types (an operator's type relation, a
// callee's result, a tuple of the fields' types, a let's body, ...); null
// when a child is untyped or the children do not fit, so that the next pass
// that needs types infers them (and reports what does not fit). `old` is
// untyped: null. Constant time per child, no walk.
Type retype(const Expr& old, const Expr& rebuilt);

}  // namespace switchyard
