// The C++ expression of one element-wise operator applied to operand
// expressions, independent of the graph IR node that called it: the kernel
// IR's C++ renderer prints every operator call through it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "backend/cpu_code.h"
#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/span.h"
#include "runtime/dtype.h"

namespace switchyard {

// What rendering one element-wise operator needs, independent of the graph IR node.
struct ScalarCall {
  const OpNode* op;               // the operator (interned)
  Attrs attrs;                    // its attributes (may be null)
  std::vector<DType> arg_dtypes;  // storage dtypes of the operands
  DType result_dtype;
  Span span;                      // for errors
};

// The C++ expression of the operator applied to `values` (compute-typed
// operand expressions), adding any helper it needs to `helpers`.
std::string render_cpu_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                              std::set<CpuHelper>& helpers);

}  // namespace switchyard
