// Short, one-line descriptions of nodes for diagnostics, and the source lines
// around a span, so an error can show "which node, where" without printing a
// whole (possibly million-node) function.
#pragma once

#include <string>

#include "ir/expr.h"

namespace switchyard {

// e.g. "nn.dense(%x, %w1) @cpu:1" (arguments named, not expanded).
std::string describe_node(const Expr& e);
// Up to `radius` source lines before and after the span's line, numbered,
// with the span's line marked; "" when the source text is unknown.
std::string source_context(const Span& span, int radius = 2);

}  // namespace switchyard
