// The table of ONNX operator converters: op type -> ONNX's versions of the
// operator and, per range of them, a function that builds the node's
// outputs from its inputs (node_context.h). A model's opset selects each
// operator's version (the newest at or below it), and so its converter:
// what differs between versions (an attribute that became an input, a
// changed default) is stated once, in the operator's row. Each
// converters_*.cc file registers one family; ONNX operators without an IR
// operator of their own are expressed through several IR operators, all
// carrying the node's span.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/node_context.h"

namespace switchyard {

// The default-domain opsets Switchyard imports. Every operator row lists
// ONNX's versions through kNewestOnnxOpset and converts the version each
// opset from kFullyConvertedOnnxOpset selects, or refuses it saying why.
// Below it, a model imports when each of its nodes' versions is one a
// converter implements: the version opset 7 selects too (Elu-6,
// GlobalAveragePool-1), or an older one whose row converts its own meaning
// (Add-6's `broadcast` attribute, BatchNormalization-6's `is_test`); the
// others (most of version 1, with `consumed_inputs`) are refused naming the
// node and the opset.
constexpr int kOldestOnnxOpset = 1;
constexpr int kFullyConvertedOnnxOpset = 7;
constexpr int kNewestOnnxOpset = 21;

using OnnxConverter = std::function<void(NodeContext&)>;

// Converts a range of an operator's versions: from `since` (one of its
// versions) up to the next entry's. Without `convert`, those versions are
// refused and `refusal` says why (it follows "Op-N ").
struct VersionConverter {
  int since = 0;
  OnnxConverter convert;
  std::string refusal;
};
inline VersionConverter refused_from(int since, std::string why) { return {since, nullptr, std::move(why)}; }

// Registers an operator (converters.cc runs the families once): `versions`
// are ONNX's versions of it (each schema's since_version, ascending, through
// kNewestOnnxOpset), `converters` its converters by version, ascending.
// Versions below the first converter are refused. The first converter may
// start below the first version: the operator is then converted in older
// opsets too, where models hold it before ONNX added it (ONNX Runtime's
// LayerNormalization, which it registers in the default domain from opset 1).
void add_onnx_converter(const std::string& op_type, std::vector<int> versions,
                        std::vector<VersionConverter> converters);

// How a node of `op_type` converts at `opset`.
struct OnnxOperatorVersion {
  int version = 0;                         // the operator's version there; 0: the opset predates the operator
  const OnnxConverter* convert = nullptr;  // null: refused
  std::string refusal;                     // why, when refused: "Upsample-10 is deprecated ..."
  std::string name;                        // for messages: "Relu-14, the version in opset 17"
};
// Null for an op type Switchyard does not know at all.
std::optional<OnnxOperatorVersion> find_onnx_converter(const std::string& op_type, int opset);
// Every known op type, sorted, with ONNX's versions of it and, per version,
// the refusal (empty when converted).
struct OnnxOperatorSupport {
  std::string op_type;
  std::vector<std::pair<int, std::string>> versions;
};
std::vector<OnnxOperatorSupport> onnx_operator_support();

void register_elementwise_converters();  // converters_elementwise.cc
void register_nn_converters();           // converters_nn.cc
void register_recurrent_converters();    // converters_recurrent.cc: RNN, GRU, LSTM
void register_tensor_converters();       // converters_tensor.cc
void register_reduce_converters();       // converters_reduce.cc: Reduce*, ArgMax, ArgMin
void register_resample_converters();     // converters_resample.cc: Pad, Resize, Upsample, Tile, ConvTranspose
void register_scatter_converters();      // converters_scatter.cc: ScatterND, ScatterElements, Scatter
void register_scan_converters();         // converters_scan.cc: TopK, CumSum
void register_quant_converters();        // converters_quant.cc: QuantizeLinear, QLinearConv, ...
void register_einsum_converters();       // converters_einsum.cc
void register_sampling_converters();     // converters_sampling.cc: GridSample, RoiAlign
void register_control_converters();      // converters_control.cc: If, Scan, Loop
void register_signal_converters();       // converters_signal.cc: HannWindow, HammingWindow, BlackmanWindow
void register_reorder_converters();      // converters_reorder.cc: ReverseSequence
void register_linalg_converters();       // converters_linalg.cc: Det
void register_unpool_converters();       // converters_unpool.cc: MaxUnpool

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
// x as `dtype` (x itself when it already is).
Expr cast_to(NodeContext& ctx, const Expr& x, DType dtype);
// Fails naming the node unless input i is of a floating-point type.
void require_float(NodeContext& ctx, size_t i);
// The product of dims[from, to).
int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to);
// An int64 array of `shape` whose element i (in row-major order) is i * step:
// the offsets of the planes of a flattened tensor.
NDArray multiples_of(int64_t step, const std::vector<int64_t>& shape);
// x gathered along `axis` at constant indices (x itself for an identity gather).
Expr take_along(NodeContext& ctx, const Expr& x, int64_t axis, const std::vector<int64_t>& indices);
// x with `before` and `after` blocks of `fill` (0-d) concatenated along `axis`.
Expr pad_axis(NodeContext& ctx, const Expr& x, int64_t axis, int64_t before, int64_t after, const Expr& fill);

// ONNX Conv's convolution of x by w, 1-D or 2-D, with the node's window
// attributes and `group`, plus `bias` (C,) when it is given (converters_nn.cc).
Expr onnx_convolution(NodeContext& ctx, const Expr& x, const Expr& w, const Expr& bias = Expr());
// Before opset 7 (converters_legacy.cc): `b` shaped to broadcast against
// `a_shape` as Add-6, Pow-1 and their kind define it: only with the node's
// broadcast=1 (else the shapes must be equal), one value, or b's dimensions
// matching a_shape's from the node's `axis` (default: the last ones).
Expr legacy_broadcast(NodeContext& ctx, const Expr& b, const std::vector<int64_t>& a_shape);
// Reads version 1's `consumed_inputs` where the node is of version 1: an
// in-place hint for the runtime that ONNX's version converter drops.
void ignore_consumed_inputs(NodeContext& ctx);
// `op` of input 0 and input 1 broadcast by legacy_broadcast (Add-6, Pow-1).
void convert_legacy_binary(NodeContext& ctx, const std::string& op);
// PRelu-1 and 6: a slope of one value, or one per channel (axis 1).
void convert_legacy_prelu(NodeContext& ctx);

// x != x, elementwise (converters_elementwise.cc).
Expr is_nan_expr(NodeContext& ctx, const Expr& x);
// ONNX GatherElements: `data` at `indices` (same rank, negative ones counting
// from the end) along `axis` (converters_tensor.cc).
Expr gather_elements(NodeContext& ctx, const Expr& data, const Expr& indices, int64_t axis);
// The int64 index of the first (or `last`) largest or smallest element along
// `axis`, which stays as a dimension of 1 (converters_reduce.cc).
Expr arg_extreme(NodeContext& ctx, const Expr& x, int64_t axis, bool largest, bool last);

}  // namespace switchyard
