// Converting ONNX nodes over symbolic dimensions (ir/dim.h): the helpers
// symbolic-aware converters share, and the operators that compute shapes
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch.onnx.export
// writes `x.view(x.size(0), -1)`) evaluated over dimension expressions, so a
// reshape to a computed shape stays a reshape of the symbolic dimension.
#pragma once

#include <string>
#include <vector>

#include "frontend/onnx/node_context.h"

namespace switchyard {

// x's dimensions from `first` on, as numbers; fails naming the node, `what`
// and the symbolic dimension when one of them is symbolic.
std::vector<int64_t> static_dims(NodeContext& c, const Expr& x, size_t first, const std::string& what);

// x reshaped to `target` (x itself when it has it): numbers stay, a
// symbolic dimension equal to x's at the same position is copied (0), one
// other is inferred (-1); fails naming the node when the target needs more
// or its size differs from x's.
Expr reshape_to_dims(NodeContext& c, const Expr& x, const std::vector<DimExpr>& target);

// An attribute of kind kDims (broadcast_to's shape, reshape's newshape):
// numbers, or dimension texts when one is symbolic.
AttrValue dims_attr(const std::vector<DimExpr>& dims);

// When one of the node's inputs is a shape value (node_context.h) and its
// operator is one that computes shapes (Identity, Cast to an integer type,
// Gather, Unsqueeze, Squeeze, Concat, Slice, Mul, Div; Reshape of one to
// itself, Shape of one, Equal decided at import, Where on a known
// condition, as expand(n, -1, -1) exports), computes its output
// over the dimension expressions and returns true; false otherwise, when
// the operator's own converter runs (and refuses the shape value, unless it
// reads it by shape_value_input as Reshape does).
bool convert_shape_value_node(NodeContext& c);

// Whether the converters of `op_type` read dimensions (NodeContext::
// input_dims, or numbers only through input_shape, which refuses a symbolic
// one by name); any other operator given a symbolic input is refused before
// its converter runs, since it may read a type's sizes directly.
bool takes_symbolic_inputs(const std::string& op_type);

}  // namespace switchyard
