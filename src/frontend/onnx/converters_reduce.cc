// Converters of ONNX's reductions: the Reduce operators, whose axes moved
// from an attribute to an input (ReduceSum in version 13, the others in
// 18), and ArgMax and ArgMin.
#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

// ReduceX over its axes: the `axes` attribute (all axes when absent), or,
// from ReduceSum-13 and every other Reduce-18 (`axes_input`), the optional
// second input, whose absence or emptiness means all axes unless
// noop_with_empty_axes makes the node an identity.
void convert_reduce(NodeContext& c, const std::string& kind, bool axes_input) {
  int64_t rank = c.input_type(0).ndim();
  std::vector<int64_t> axes;
  bool keepdims = c.attr_int("keepdims", 1) != 0;
  if (axes_input) {
    if (c.has_input(1)) axes = c.constant_ints(1, "axes");
    if (axes.empty() && c.attr_int("noop_with_empty_axes", 0) != 0) return set_single_output(c, c.input(0));
  } else {
    axes = c.attr_ints("axes", std::vector<int64_t>{});
  }
  for (int64_t& a : axes) a = normalize_axis(c, a, rank);
  AttrValue axis = axes.empty() ? AttrValue() : AttrValue(axes);
  AttrList attrs{{"axis", axis}, {"keepdims", keepdims}};
  Expr x = c.input(0);
  DType t = c.input_dtype(0);
  if (kind == "ReduceMin" || kind == "ReduceLogSumExp" || kind == "ReduceL2" || kind == "ReduceSumSquare" ||
      kind == "ReduceL1" || kind == "ReduceLogSum")
    if (!dtype_is_float(t)) c.fail("needs a floating-point input");
  Expr y;
  if (kind == "ReduceMean") y = c.call("mean", {x}, attrs);
  else if (kind == "ReduceSum") y = c.call("sum", {x}, attrs);
  else if (kind == "ReduceMax") y = c.call("max", {x}, attrs);
  else if (kind == "ReduceProd") y = c.call("prod", {x}, attrs);
  else if (kind == "ReduceMin") y = c.call("negative", {c.call("max", {c.call("negative", {x})}, attrs)});
  else if (kind == "ReduceSumSquare") y = c.call("sum", {c.call("multiply", {x, x})}, attrs);
  else if (kind == "ReduceL1") y = c.call("sum", {c.call("abs", {x})}, attrs);
  else if (kind == "ReduceL2") y = c.call("sqrt", {c.call("sum", {c.call("multiply", {x, x})}, attrs)});
  else if (kind == "ReduceLogSum") y = c.call("log", {c.call("sum", {x}, attrs)});
  else {  // ReduceLogSumExp, shifted by the maximum so exp cannot overflow
    AttrList kept{{"axis", axis}, {"keepdims", true}};
    Expr m = c.call("max", {x}, kept);
    Expr log_sum = c.call("log", {c.call("sum", {c.call("exp", {c.call("subtract", {x, m})})}, kept)});
    y = c.call("add", {log_sum, m});
    if (!keepdims) y = c.call("squeeze", {y}, {{"axis", axes.empty() ? AttrValue() : AttrValue(axes)}});
  }
  set_single_output(c, y);
}

// ArgMax and ArgMin; select_last_index came with version 12.
void convert_arg_extreme(NodeContext& c, bool largest, bool select_last) {
  int64_t axis = normalize_axis(c, c.attr_int("axis", 0), c.input_type(0).ndim());
  bool keepdims = c.attr_int("keepdims", 1) != 0;
  bool last = select_last && c.attr_int("select_last_index", 0) != 0;
  Expr index = arg_extreme(c, c.input(0), axis, largest, last);
  set_single_output(c, keepdims ? index : c.call("squeeze", {index}, {{"axis", std::vector<int64_t>{axis}}}));
}

}  // namespace

// The index of the largest (or smallest) element along `axis`, kept as a
// dimension of 1: the first or last position equal to the extreme, NaN
// counting as the extreme wherever the extreme is NaN, as NumPy does.
Expr arg_extreme(NodeContext& c, const Expr& x, int64_t axis, bool largest, bool last) {
  const TensorTypeNode& t = tensor_type_of(x);
  if (t.dtype == DType::kBool) c.fail("needs a numeric input");
  AttrList kept{{"axis", std::vector<int64_t>{axis}}, {"keepdims", true}};
  // min(x) = f(max(f(x))) with f an order-reversing involution that cannot
  // overflow: -x for floats, -1 - x for signed and 255 - x for unsigned bytes.
  auto flip = [&](const Expr& v) {
    if (dtype_is_float(t.dtype)) return c.call("negative", {v});
    return c.call("subtract", {c.scalar(t.dtype == DType::kUInt8 ? 255 : -1, t.dtype), v});
  };
  Expr extreme = largest ? c.call("max", {x}, kept) : flip(c.call("max", {flip(x)}, kept));
  Expr is_extreme = c.call("equal", {x, extreme});
  if (dtype_is_float(t.dtype)) is_extreme = c.call("maximum", {is_extreme, is_nan_expr(c, x)});
  int64_t n = t.shape[size_t(axis)];
  std::vector<int64_t> iota_shape(t.shape.size(), 1);
  iota_shape[size_t(axis)] = n;
  NDArray position(DType::kInt64, iota_shape);
  // The last index is the largest position; the first, the largest reversed one.
  for (int64_t k = 0; k < n; ++k) position.as<int64_t>()[k] = last ? k : n - 1 - k;
  Expr candidates = c.call("where", {is_extreme, c.constant(std::move(position)), c.scalar(-1, DType::kInt64)});
  Expr best = c.call("max", {candidates}, kept);
  return last ? best : c.call("subtract", {c.scalar(double(n - 1), DType::kInt64), best});
}

void register_reduce_converters() {
  for (const char* kind : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL1",
                           "ReduceL2", "ReduceLogSumExp", "ReduceLogSum", "ReduceProd"}) {
    std::string k = kind;
    int axes_input = k == "ReduceSum" ? 13 : 18;
    std::vector<int> versions = k == "ReduceSum"                          ? std::vector<int>{1, 11, 13}
                                : k == "ReduceMax" || k == "ReduceMin" ? std::vector<int>{1, 11, 12, 13, 18, 20}
                                                                        : std::vector<int>{1, 11, 13, 18};
    add_onnx_converter(k, versions, {{1, [k](NodeContext& c) { convert_reduce(c, k, false); }},
                                     {axes_input, [k](NodeContext& c) { convert_reduce(c, k, true); }}});
  }
  for (bool largest : {true, false})
    add_onnx_converter(largest ? "ArgMax" : "ArgMin", {1, 11, 12, 13},
                       {{1, [largest](NodeContext& c) { convert_arg_extreme(c, largest, false); }},
                        {12, [largest](NodeContext& c) { convert_arg_extreme(c, largest, true); }}});
}

}  // namespace switchyard
