// The table of ONNX operator converters: op type -> a function that builds
// the node's outputs from its inputs (node_context.h). Each converters_*.cc
// file registers one family; ONNX operators without an IR operator of their
// own are expressed through several IR operators, all carrying the node's
// span.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "frontend/onnx/node_context.h"

namespace switchyard {

using OnnxConverter = std::function<void(NodeContext&)>;

// The converter of a default-domain op type, or null when unsupported.
const OnnxConverter* find_onnx_converter(const std::string& op_type);
// Every supported op type, sorted.
std::vector<std::string> supported_onnx_ops();

// Registration, one call per family (converters.cc runs them once).
void add_onnx_converter(const std::string& op_type, OnnxConverter converter);
void register_elementwise_converters();  // converters_elementwise.cc
void register_nn_converters();           // converters_nn.cc
void register_tensor_converters();       // converters_tensor.cc
void register_resample_converters();     // converters_resample.cc: Pad, Resize, Tile, ConvTranspose

// Shared by the families: the node's output 0 (`set_output(0, ...)`) when it
// has only that one.
inline void set_single_output(NodeContext& ctx, Expr value) { ctx.set_output(0, std::move(value)); }

// Helpers every family uses (converters.cc).
// A 1-D int64 constant's value.
NDArray int64_vector(const std::vector<int64_t>& values);
// x reshaped to `shape` (x itself when it already has it).
Expr reshape_to(NodeContext& ctx, const Expr& x, std::vector<int64_t> shape);
// `axis` in [0, rank), counting a negative one from the end; fails naming
// `what` when out of range.
int64_t normalize_axis(NodeContext& ctx, int64_t axis, int64_t rank, const std::string& what = "axis");

// x != x, elementwise (converters_elementwise.cc).
Expr is_nan_expr(NodeContext& ctx, const Expr& x);
// ONNX GatherElements: `data` at `indices` (same rank, negative ones counting
// from the end) along `axis` (converters_tensor.cc).
Expr gather_elements(NodeContext& ctx, const Expr& data, const Expr& indices, int64_t axis);
// The int64 index of the first (or `last`) largest or smallest element along
// `axis`, which stays as a dimension of 1 (converters_tensor.cc).
Expr arg_extreme(NodeContext& ctx, const Expr& x, int64_t axis, bool largest, bool last);

}  // namespace switchyard
