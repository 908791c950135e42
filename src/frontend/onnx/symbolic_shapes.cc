// Converting ONNX nodes over symbolic dimensions (see symbolic_shapes.h).
#include "frontend/onnx/symbolic_shapes.h"

#include <algorithm>
#include <set>

#include "frontend/onnx/converters.h"
#include "runtime/clipped_text.h"

namespace switchyard {

namespace {

constexpr int64_t kOnnxInt32 = 6, kOnnxInt64 = 7;

// A shape value's elements and its shape ({} or {n}); nullopt when input i is not one.
struct ShapeOperand {
  std::vector<DimExpr> elements;
  std::vector<int64_t> shape;
};

std::optional<ShapeOperand> shape_operand(NodeContext& c, size_t i) {
  std::optional<std::vector<DimExpr>> elements = c.shape_value_input(i);
  if (!elements) return std::nullopt;
  return ShapeOperand{*elements, c.value_shape(i)};
}

// Gather along axis 0 of a 1-D shape value at known indices.
bool gather(NodeContext& c, const ShapeOperand& data) {
  if (c.attr_int("axis", 0) != 0 || data.shape.size() != 1) return false;
  const NDArray* indices = c.constant_input(1);
  if (!indices || indices->shape().size() > 1) return false;
  std::vector<DimExpr> picked;
  int64_t n = int64_t(data.elements.size());
  for (int64_t index : c.constant_ints(1, "indices")) {
    if (index < -n || index >= n)
      c.fail("index " + std::to_string(index) + " is out of range for a shape of " + std::to_string(n) + " dimensions");
    picked.push_back(data.elements[size_t(index < 0 ? index + n : index)]);
  }
  set_single_output(c, c.shape_value(picked, indices->shape()));
  return true;
}

// Unsqueeze of a 0-d value at axis 0, or Squeeze of a 1-element one.
bool squeeze(NodeContext& c, const ShapeOperand& data, bool unsqueeze) {
  std::vector<int64_t> axes;
  if (c.op_version() >= 13 && c.has_input(1)) axes = c.constant_ints(1, "axes");
  if (c.op_version() < 13) axes = unsqueeze ? c.attr_ints("axes") : c.attr_ints("axes", std::vector<int64_t>{});
  bool zero_axis = axes.empty() || (axes.size() == 1 && (axes[0] == 0 || axes[0] == -1));
  if (unsqueeze ? !(data.shape.empty() && zero_axis) : !(data.shape == std::vector<int64_t>{1} && zero_axis))
    return false;
  set_single_output(c, c.shape_value(data.elements, unsqueeze ? std::vector<int64_t>{1} : std::vector<int64_t>{}));
  return true;
}

bool concat(NodeContext& c) {
  if (c.attr_int("axis") != 0 && c.attr_int("axis") != -1) return false;
  std::vector<DimExpr> joined;
  for (size_t i = 0; i < c.input_count(); ++i) {
    std::optional<ShapeOperand> part = shape_operand(c, i);
    if (!part || part->shape.size() != 1) return false;
    joined.insert(joined.end(), part->elements.begin(), part->elements.end());
  }
  set_single_output(c, c.shape_value(joined, {int64_t(joined.size())}));
  return true;
}

// Slice-10 and later of a 1-D value along axis 0.
bool slice(NodeContext& c, const ShapeOperand& data) {
  if (c.op_version() < 10 || data.shape.size() != 1) return false;
  int64_t n = int64_t(data.elements.size());
  std::vector<int64_t> starts = c.constant_ints(1, "starts"), ends = c.constant_ints(2, "ends");
  std::vector<int64_t> axes = c.has_input(3) ? c.constant_ints(3, "axes") : std::vector<int64_t>{0};
  std::vector<int64_t> steps = c.has_input(4) ? c.constant_ints(4, "steps") : std::vector<int64_t>{1};
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 || (axes[0] != 0 && axes[0] != -1))
    return false;
  if (steps[0] <= 0) return false;
  auto clamp = [n](int64_t v) { return std::min(std::max(v < 0 ? v + n : v, int64_t(0)), n); };
  std::vector<DimExpr> picked;
  for (int64_t k = clamp(starts[0]); k < clamp(ends[0]); k += steps[0]) picked.push_back(data.elements[size_t(k)]);
  if (picked.empty()) c.fail("the slice of a shape is empty (empty tensors are not supported)");
  set_single_output(c, c.shape_value(picked, {int64_t(picked.size())}));
  return true;
}

// Mul or Div of two values of at most one dimension, broadcasting one element.
bool arithmetic(NodeContext& c, bool divide) {
  std::optional<ShapeOperand> a = shape_operand(c, 0), b = shape_operand(c, 1);
  if (!a || !b) return false;
  size_t n = std::max(a->elements.size(), b->elements.size());
  if ((a->elements.size() != n && a->elements.size() != 1) || (b->elements.size() != n && b->elements.size() != 1))
    return false;
  std::vector<DimExpr> out;
  for (size_t k = 0; k < n; ++k) {
    const DimExpr& x = a->elements[a->elements.size() == 1 ? 0 : k];
    const DimExpr& y = b->elements[b->elements.size() == 1 ? 0 : k];
    if (!divide) {
      out.push_back(x * y);
      continue;
    }
    std::optional<DimExpr> q = exact_quotient(x, y);
    if (!q)
      c.fail("the shape computation divides " + dim_to_string(x) + " by " + dim_to_string(y) +
             ", which is not exact for every value of the symbolic dimension (fix it with --input-shape)");
    out.push_back(*q);
  }
  set_single_output(c, c.shape_value(out, a->shape.size() >= b->shape.size() ? a->shape : b->shape));
  return true;
}

// Reshape of a 1-D value to itself ([-1] or [n]) or of one element to a scalar.
bool reshape(NodeContext& c, const ShapeOperand& data) {
  if (!c.is_shape_value(0) || !c.constant_input(1)) return false;
  std::vector<int64_t> target = c.constant_ints(1, "shape");
  const int64_t n = int64_t(data.elements.size());
  if (target.size() == 1 && (target[0] == -1 || target[0] == n))
    return set_single_output(c, c.shape_value(data.elements, {n})), true;
  if (target.empty() && n == 1) return set_single_output(c, c.shape_value(data.elements, {})), true;
  return false;
}

// Shape (without start or end) of a shape value: its own shape, a constant.
bool shape_of(NodeContext& c, const ShapeOperand& data) {
  if (c.has_attr("start") || c.has_attr("end")) return false;
  NDArray out(DType::kInt64, {int64_t(data.shape.size())});
  std::copy(data.shape.begin(), data.shape.end(), out.as<int64_t>());
  return set_single_output(c, c.constant(std::move(out))), true;
}

// The element of a one-element or n-element operand at k.
const DimExpr& element_at(const ShapeOperand& v, size_t k) { return v.elements[v.elements.size() == 1 ? 0 : k]; }

// Equal of two shape values, decided where it can be: a symbolic dimension
// is at least its coefficient (no dimension is 0), so it differs from any
// smaller number (the -1 of expand(n, -1, -1)). A bool constant.
bool equal(NodeContext& c) {
  std::optional<ShapeOperand> a = shape_operand(c, 0), b = shape_operand(c, 1);
  if (!a || !b) return false;
  size_t n = std::max(a->elements.size(), b->elements.size());
  if ((a->elements.size() != n && a->elements.size() != 1) || (b->elements.size() != n && b->elements.size() != 1))
    return false;
  NDArray out(DType::kBool, a->elements.size() >= b->elements.size() ? a->shape : b->shape);
  for (size_t k = 0; k < n; ++k) {
    const DimExpr& x = element_at(*a, k);
    const DimExpr& y = element_at(*b, k);
    bool same = x == y;
    if (!same && !(x.is_constant() && y.is_constant())) {
      const DimExpr& symbolic = x.is_constant() ? y : x;
      const DimExpr& other = x.is_constant() ? x : y;
      if (!other.is_constant() || *other.constant() >= symbolic.coefficient())
        c.fail("the shape computation compares " + dim_to_string(x) + " with " + dim_to_string(y) +
               ", which is decided only at run time (fix the symbolic dimension with --input-shape)");
    }
    out.set_from_double(int64_t(k), same ? 1 : 0);
  }
  return set_single_output(c, c.constant(std::move(out))), true;
}

// Where with a known condition over shape values (expand's -1s replaced by
// the dimensions they keep).
bool where(NodeContext& c) {
  const NDArray* condition = c.constant_input(0);
  std::optional<ShapeOperand> x = shape_operand(c, 1), y = shape_operand(c, 2);
  if (!condition || condition->shape().size() > 1 || !x || !y) return false;
  size_t n = size_t(std::max({condition->numel(), int64_t(x->elements.size()), int64_t(y->elements.size())}));
  for (size_t size : {size_t(condition->numel()), x->elements.size(), y->elements.size()})
    if (size != n && size != 1) return false;
  std::vector<DimExpr> picked;
  for (size_t k = 0; k < n; ++k)
    picked.push_back(condition->get_as_double(condition->numel() == 1 ? 0 : int64_t(k)) != 0 ? element_at(*x, k)
                                                                                              : element_at(*y, k));
  return set_single_output(c, c.shape_value(picked, {int64_t(n)})), true;
}

}  // namespace

AttrValue dims_attr(const std::vector<DimExpr>& dims) {
  if (std::all_of(dims.begin(), dims.end(), [](const DimExpr& d) { return d.is_constant(); })) {
    std::vector<int64_t> numbers;
    for (const DimExpr& d : dims) numbers.push_back(d.coefficient());
    return numbers;
  }
  std::vector<std::string> texts;
  for (const DimExpr& d : dims) texts.push_back(dim_to_string(d));
  return texts;
}

bool takes_symbolic_inputs(const std::string& op_type) {
  static const std::set<std::string> kSymbolicAware = {
      // Element-wise (converters_elementwise.cc): relations, or input_shape.
      "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift", "Cast", "CastLike", "Ceil",
      "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater", "GreaterOrEqual",
      "HardSigmoid", "HardSwish", "IsInf", "IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min",
      "Mish", "Mod", "Mul", "Neg", "Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink",
      "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh",
      "ThresholdedRelu", "Where", "Xor",
      // Windows over a symbolic batch, matrix products, normalisations.
      "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization", "Gemm", "MatMul", "Einsum",
      "Softmax", "LayerNormalization",
      // Movement and shapes (docs/onnx.md, "Symbolic dimensions").
      "Identity", "Constant", "ConstantOfShape", "Shape", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
      "Concat", "Gather", "Slice", "Split", "Expand", "Pad", "Resize", "Dropout",
      "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL1", "ReduceL2",
      "ReduceLogSumExp", "ReduceLogSum", "ReduceProd",
      // Recurrent layers over a symbolic batch (converters_recurrent.cc).
      "RNN", "GRU", "LSTM"};
  return kSymbolicAware.count(op_type) > 0;
}

std::vector<int64_t> static_dims(NodeContext& c, const Expr& x, size_t first, const std::string& what) {
  const TensorTypeNode& t = tensor_type_of(x);
  std::vector<int64_t> dims;
  for (size_t i = first; i < t.dims.size(); ++i) {
    if (!t.dims[i].is_constant())
      c.fail(what + " " + clipped_text(dims_to_string(t.dims)) + " has symbolic dimension '" + dim_to_string(t.dims[i]) +
             "' (dimension " + std::to_string(i) + "), which " + clipped_text(c.node().op_type()) +
             " cannot take yet (fix it with --input-shape)");
    dims.push_back(*t.dims[i].constant());
  }
  return dims;
}

Expr reshape_to_dims(NodeContext& c, const Expr& x, const std::vector<DimExpr>& target) {
  const TensorTypeNode& t = tensor_type_of(x);
  if (t.dims == target) return x;
  auto fail = [&](const std::string& why) {
    c.fail("cannot reshape " + clipped_text(dims_to_string(t.dims)) + " to " + clipped_text(dims_to_string(target)) +
           why);
  };
  // Numbers pass as they are: 0 and -1 mean what they mean in ONNX's Reshape
  // and the IR's. Symbolic dimensions are said with 0s and one -1 where they
  // can be (the IR a static import would have, specialised); where several
  // move ((batch*seq, 16) to (seq, batch, 16)) the target names them.
  bool inferred = std::count(target.begin(), target.end(), DimExpr(-1)) > 0;
  std::vector<int64_t> newshape;
  for (size_t i = 0; i < target.size() && newshape.size() == i; ++i) {
    if (std::optional<int64_t> n = target[i].constant()) {
      newshape.push_back(*n);
    } else if (i < t.dims.size() && t.dims[i] == target[i]) {
      newshape.push_back(0);
    } else if (!inferred) {
      newshape.push_back(-1);
      inferred = true;
    }
  }
  // Stopped early: a symbolic entry neither copied nor inferred, so the target names them.
  AttrValue attr = newshape.size() == target.size() ? AttrValue(newshape) : dims_attr(target);
  Expr y = c.call("reshape", {x}, {{"newshape", attr}});
  const std::vector<DimExpr>& got = tensor_type_of(y).dims;
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i].constant().value_or(1) > 0 && got[i] != target[i])
      fail(" (it gives " + clipped_text(dims_to_string(got)) + ")");
  return y;
}

bool convert_shape_value_node(NodeContext& c) {
  bool any = false;
  for (size_t i = 0; i < c.input_count(); ++i) any |= c.is_shape_value(i);
  if (!any) return false;
  const std::string& op = c.node().op_type();
  std::optional<ShapeOperand> first = shape_operand(c, 0);
  if (op == "Where") return where(c);
  if (!first && op != "Concat") return false;
  if (op == "Identity") return set_single_output(c, c.shape_value(first->elements, first->shape)), true;
  if (op == "Cast") {
    int64_t to = c.attr_int("to");
    if (to != kOnnxInt64 && to != kOnnxInt32) return false;
    if (c.op_version() >= 19) c.attr_int("saturate", 1);
    return set_single_output(c, c.shape_value(first->elements, first->shape)), true;
  }
  if (op == "Gather") return gather(c, *first);
  if (op == "Unsqueeze" || op == "Squeeze") return squeeze(c, *first, op == "Unsqueeze");
  if (op == "Concat") return concat(c);
  if (op == "Slice") return slice(c, *first);
  if (op == "Mul" || op == "Div") return arithmetic(c, op == "Div");
  if (op == "Reshape") return reshape(c, *first);
  if (op == "Shape") return shape_of(c, *first);
  if (op == "Equal") return equal(c);
  return false;
}

}  // namespace switchyard
