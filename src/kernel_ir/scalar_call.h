// An operator node of the kernel IR: one element-wise operator applied to
// operands, independent of the graph IR call it came from. Its meaning is
// the operator's scalar row (op/scalar_expr.h); every renderer (C++ in
// codegen/scalar_spelling, CUDA in targets/cuda/compiler/cuda_render) spells that row in its
// own language, so the operator table stays the one source of semantics.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/span.h"
#include "runtime/dtype.h"

namespace switchyard {

struct ScalarCall {
  const OpNode* op;               // the operator (interned)
  Attrs attrs;                    // its attributes (may be null)
  std::vector<DType> arg_dtypes;  // storage dtypes of the operands
  DType result_dtype;
  Span span;                      // for errors; not part of the identity
};

// Structural identity: the operator, attributes and dtypes; not the span.
size_t scalar_call_hash(const ScalarCall& call);
bool scalar_call_equal(const ScalarCall& a, const ScalarCall& b);

}  // namespace switchyard
