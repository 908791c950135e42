// Operator versions older than opset 7 whose meaning differs from the
// version opset 7 selects: before version 7, Add, Sub, Mul, Div and Pow
// broadcast only when the node's `broadcast` attribute says so, aligning
// the second operand at `axis`; PRelu's slope is one value or one per
// channel; and version 1 carries `consumed_inputs`, an in-place hint. The
// rows of those operators (converters_elementwise.cc, converters_nn.cc)
// name these converters for their old versions.
#include "frontend/onnx/converters.h"

namespace switchyard {

Expr legacy_broadcast(NodeContext& c, const Expr& b, const std::vector<int64_t>& a_shape) {
  const TensorTypeNode& bt = tensor_type_of(b);
  const std::vector<int64_t>& b_shape = bt.shape;
  std::string version = c.node().op_type() + "-" + std::to_string(c.op_version());
  bool broadcast = c.attr_int("broadcast", 0) != 0;
  std::optional<int64_t> axis;
  if (c.has_attr("axis")) axis = c.attr_int("axis");  // read either way: without broadcast=1 it has no effect
  if (!broadcast) {
    if (b_shape != a_shape)
      c.fail("the inputs' shapes " + shape_to_string(a_shape) + " and " + shape_to_string(b_shape) + " differ, and " +
             version + " broadcasts only with broadcast=1");
    return b;
  }
  if (bt.numel() == 1) return reshape_to(c, b, {});
  int64_t rank = int64_t(a_shape.size()), b_rank = int64_t(b_shape.size());
  int64_t start = axis ? normalize_axis(c, *axis, rank) : rank - b_rank;
  auto mismatch = [&] {
    c.fail("input 1's shape " + shape_to_string(b_shape) + " does not match input 0's " + shape_to_string(a_shape) +
           " from axis " + std::to_string(start) + " (" + version + " broadcasts the second input along a run of " +
           "the first's dimensions)");
  };
  if (start < 0 || start + b_rank > rank) mismatch();
  for (int64_t i = 0; i < b_rank; ++i)
    if (b_shape[size_t(i)] != a_shape[size_t(start + i)] && b_shape[size_t(i)] != 1) mismatch();
  // Trailing dimensions of 1 make NumPy's alignment from the end start at `start`.
  std::vector<int64_t> shape = b_shape;
  shape.resize(size_t(rank - start), 1);
  return reshape_to(c, b, shape);
}

void ignore_consumed_inputs(NodeContext& c) {
  if (c.op_version() == 1 && c.has_attr("consumed_inputs")) c.attr_ints("consumed_inputs");
}

void convert_legacy_binary(NodeContext& c, const std::string& op) {
  Expr b = legacy_broadcast(c, c.input(1), c.input_shape(0));
  set_single_output(c, c.call(op, {c.input(0), b}));
}

// PRelu-1 and 6: a slope of one value is shared by every element; otherwise
// it holds one per channel (axis 1), as Caffe2's PRelu, where ONNX's came from.
void convert_legacy_prelu(NodeContext& c) {
  ignore_consumed_inputs(c);
  require_float(c, 0);
  Expr x = c.input(0), slope = c.input(1);
  const std::vector<int64_t>& x_shape = c.input_shape(0);
  const TensorTypeNode& st = c.input_type(1);
  if (st.numel() == 1) {
    slope = reshape_to(c, slope, {});
  } else {
    int64_t channels = x_shape.size() >= 2 ? x_shape[1] : -1;
    if (st.ndim() != 1 || st.shape[0] != channels)
      c.fail("the slope's shape " + shape_to_string(st.shape) + " is neither one value nor one per channel of " +
             shape_to_string(x_shape) + " (PRelu-" + std::to_string(c.op_version()) + ")");
    std::vector<int64_t> per_channel(x_shape.size() - 1, 1);
    per_channel[0] = channels;
    slope = reshape_to(c, slope, per_channel);
  }
  Expr is_negative = c.call("less", {x, c.scalar(0, c.input_dtype(0))});
  set_single_output(c, c.call("where", {is_negative, c.call("multiply", {x, slope}), x}));
}

}  // namespace switchyard
