// Element-wise and broadcasting operators, one row each: the operator's
// scalar meaning (op/scalar_expr.h) together with its type relation and
// fusion pattern. The interpreter's kernel and the generated C++ both come
// from the meaning, so a row is the only place an operator's arithmetic lives.
#include "op/builtin_ops.h"
#include "op/elementwise_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"

namespace switchyard {

namespace {

Type unary_same(const std::vector<Type>& args, const std::string& op) {
  if (args.size() != 1) type_fail(op, "expects 1 argument, got " + std::to_string(args.size()));
  expect_tensor(args, 0, op);
  return args[0];
}

Type binary_broadcast(const std::vector<Type>& args, const std::string& op, std::optional<DType> out_dtype) {
  if (args.size() != 2) type_fail(op, "expects 2 arguments, got " + std::to_string(args.size()));
  expect_same_dtype(args, op);
  const TensorTypeNode& a = expect_tensor(args, 0, op);
  const TensorTypeNode& b = expect_tensor(args, 1, op);
  return tensor_type_of_dims(broadcast_dims(a.dims, b.dims, op), out_dtype.value_or(a.dtype));
}

// where(cond, x, y): cond must be bool; the result broadcasts all three.
Type where_relation(const std::vector<Type>& args, const AttrsNode&) {
  const std::string op = "where";
  const TensorTypeNode& cond = expect_tensor(args, 0, op);
  const TensorTypeNode& x = expect_tensor(args, 1, op);
  const TensorTypeNode& y = expect_tensor(args, 2, op);
  if (cond.dtype != DType::kBool)
    type_fail(op, "argument 0 (condition) must have dtype bool, got " + std::string(dtype_name(cond.dtype)));
  if (x.dtype != y.dtype)
    type_fail(op, "x is " + std::string(dtype_name(x.dtype)) + " but y is " + dtype_name(y.dtype) +
                      "; the two branches must have equal dtypes");
  std::vector<DimExpr> dims = broadcast_dims(broadcast_dims(cond.dims, x.dims, op), y.dims, op);
  return tensor_type_of_dims(std::move(dims), x.dtype);
}

Type cast_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "cast");
  return tensor_type_of_dims(x.dims, cast_attrs(attrs).dtype);
}

void check_clip_bounds(const AttrsNode& attrs) { check_clip_attrs(clip_attrs(attrs)); }

// left_shift and right_shift: unsigned integers only (ONNX's BitShift
// types), which leaves the meaning of shifting a negative number out.
Type unsigned_shift(const std::vector<Type>& args, const std::string& op) {
  Type result = binary_broadcast(args, op, std::nullopt);
  DType dtype = expect_tensor(args, 0, op).dtype;
  if (!dtype_is_unsigned(dtype))
    type_fail(op, "needs unsigned integer operands (uint8, uint16, uint32, uint64), got " +
                      std::string(dtype_name(dtype)));
  return result;
}

bool is_comparison(ScalarOp op) { return op == ScalarOp::kEqual || op == ScalarOp::kLess || op == ScalarOp::kGreater; }

// Registers `def` with its meaning. Arity, pattern, error names and (unless
// the row gives one) the type relation follow from the meaning: one operand
// keeps its type; two broadcast, to bool for a comparison.
void row(OpDef def, ScalarMeaning meaning) {
  int arity = scalar_arity(meaning.expr);
  if (meaning.operand_names.empty()) {
    if (arity == 1) meaning.operand_names = {"the input"};
    for (int i = 0; arity > 1 && i < arity; ++i) meaning.operand_names.push_back("argument " + std::to_string(i));
  }
  if (!def.type_relation) {
    std::string name = def.name;
    if (arity == 1) {
      def.type_relation = [name](const std::vector<Type>& a, const AttrsNode&) { return unary_same(a, name); };
    } else {
      std::optional<DType> out = is_comparison(meaning.expr.op) ? std::optional(DType::kBool) : std::nullopt;
      def.type_relation = [name, out](const std::vector<Type>& a, const AttrsNode&) {
        return binary_broadcast(a, name, out);
      };
    }
  }
  def.num_inputs = arity;
  // Every relation here reads dims: element-wise types follow their operands'.
  def.symbolic_shapes = true;
  def.pattern = arity == 1 ? OpPattern::kElementwise : OpPattern::kBroadcast;
  def.scalar = std::move(meaning);
  register_op(std::move(def));
}

}  // namespace

void register_elementwise_ops() {
  using namespace scalar;
  using enum ScalarOp;
  using enum ScalarInputs;
  const ScalarExpr x = operand(0), y = operand(1), zero = constant(0), one = constant(1);
  auto f = [&](ScalarOp op) { return call(op, {x}); };
  auto g = [&](ScalarOp op) { return call(op, {x, y}); };
  row({.name = "add", .doc = "a + b with broadcasting"}, {x + y, kNumeric});
  row({.name = "subtract", .doc = "a - b with broadcasting"}, {x - y, kNumeric});
  row({.name = "multiply", .doc = "a * b with broadcasting"}, {x * y, kNumeric});
  row({.name = "divide", .doc = "a / b with broadcasting"}, {x / y, kNumeric});
  row({.name = "power", .doc = "a ** b with broadcasting"}, {g(kPower), kNumeric});
  // A shift by the dtype's width or more gives 0, as NumPy's does (C++
  // leaves it undefined).
  row({.name = "left_shift", .type_relation = [](const std::vector<Type>& a, const AttrsNode&) {
         return unsigned_shift(a, "left_shift");
       }, .doc = "a << b with broadcasting (unsigned integers; by the width or more: 0)"},
      {g(kShiftLeft), kNumeric});
  row({.name = "right_shift", .type_relation = [](const std::vector<Type>& a, const AttrsNode&) {
         return unsigned_shift(a, "right_shift");
       }, .doc = "a >> b with broadcasting (unsigned integers; by the width or more: 0)"},
      {g(kShiftRight), kNumeric});
  row({.name = "fmod", .doc = "C's fmod(a, b) with broadcasting: the exact remainder of a / b truncated, a's sign"},
      {g(kFmod), kFloat});
  row({.name = "maximum", .doc = "max(a, b) with broadcasting"}, {g(kMaximum)});
  row({.name = "minimum", .doc = "min(a, b) with broadcasting"}, {g(kMinimum)});
  row({.name = "equal", .doc = "a == b with broadcasting"}, {g(kEqual)});
  row({.name = "less", .doc = "a < b with broadcasting"}, {g(kLess)});
  row({.name = "greater", .doc = "a > b with broadcasting"}, {g(kGreater)});
  row({.name = "negative", .doc = "-x"}, {-x, kNumeric});
  row({.name = "abs", .doc = "|x|"}, {f(kAbs), kNumeric});
  // relu and clip ignore NaN, as oneDNN's post-ops and x86's max/min do
  // (C's fmax): relu(NaN) is 0, clip(NaN) is a_min, so a relu or clip that
  // oneDNN fuses into its anchor agrees with this meaning (docs/operators.md).
  row({.name = "nn.relu", .doc = "x if x > 0, else +0 (relu(NaN) is 0)"},
      {select(call(kGreater, {x, zero}), x, zero), kNumeric});
  row({.name = "exp", .doc = "e^x"}, {f(kExp), kFloat});
  row({.name = "log", .doc = "natural logarithm"}, {f(kLog), kFloat});
  row({.name = "sqrt", .doc = "square root"}, {f(kSqrt), kFloat});
  row({.name = "rsqrt", .doc = "1 / sqrt(x)"}, {one / f(kSqrt), kFloat});
  row({.name = "erf", .doc = "Gauss error function"}, {f(kErf), kFloat});
  row({.name = "tanh", .doc = "hyperbolic tangent"}, {f(kTanh), kFloat});
  row({.name = "sin", .doc = "sine"}, {f(kSin), kFloat});
  row({.name = "cos", .doc = "cosine"}, {f(kCos), kFloat});
  row({.name = "tan", .doc = "tangent"}, {f(kTan), kFloat});
  row({.name = "asin", .doc = "arcsine"}, {f(kAsin), kFloat});
  row({.name = "acos", .doc = "arccosine"}, {f(kAcos), kFloat});
  row({.name = "atan", .doc = "arctangent"}, {f(kAtan), kFloat});
  row({.name = "sinh", .doc = "hyperbolic sine"}, {f(kSinh), kFloat});
  row({.name = "cosh", .doc = "hyperbolic cosine"}, {f(kCosh), kFloat});
  row({.name = "asinh", .doc = "inverse hyperbolic sine"}, {f(kAsinh), kFloat});
  row({.name = "acosh", .doc = "inverse hyperbolic cosine"}, {f(kAcosh), kFloat});
  row({.name = "atanh", .doc = "inverse hyperbolic tangent"}, {f(kAtanh), kFloat});
  row({.name = "sigmoid", .doc = "1 / (1 + e^-x)"}, {one / (one + call(kExp, {-x})), kFloat});
  row({.name = "floor", .doc = "the largest integer not above x"}, {f(kFloor), kFloat});
  row({.name = "ceil", .doc = "the smallest integer not below x"}, {f(kCeil), kFloat});
  row({.name = "round", .doc = "x rounded to the nearest integer, halves to even"}, {f(kRound), kFloat});
  // Bounds in x's dtype (integers truncate them, as TVM casts them).
  ScalarExpr low = attribute("a_min"), high = attribute("a_max");
  row({.name = "clip",
       .attrs = {{"a_min", AttrKind::kFloat, AttrValue()}, {"a_max", AttrKind::kFloat, AttrValue()}},
       .check_attrs = check_clip_bounds,
       .doc = "a_max if x > a_max, x if x > a_min, else a_min (clip(NaN) is a_min)"},
      {select(call(kGreater, {x, high}), high, select(call(kGreater, {x, low}), x, low)), kNumeric});
  // float to float rounds; float to integer truncates toward zero, saturates
  // to int64 and wraps to the width; integer to integer wraps; anything to
  // bool is "!= 0".
  row({.name = "cast", .attrs = {{"dtype", AttrKind::kDType, AttrValue()}}, .type_relation = cast_relation,
       .doc = "x converted to dtype"},
      {cast(x, "dtype")});
  // Layout planning inserts it between a value and readers that want it in
  // another layout (its result's device says which); the value is the same.
  row({.name = "layout_convert", .doc = "x, in the layout its result's device names (PlanLayouts inserts it)"},
      {x});
  row({.name = "where", .type_relation = where_relation, .doc = "cond ? x : y, element-wise with broadcasting"},
      {select(x, y, operand(2)), kAny, {"condition", "x", "y"}, 1});
}

}  // namespace switchyard
