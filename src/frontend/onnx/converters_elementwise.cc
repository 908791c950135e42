// Converters of ONNX's element-wise operators: arithmetic, comparisons,
// logic, unary math and the activations, which are built from IR
// element-wise operators where the IR has no operator of their own.
#include <cmath>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_tensor.h"

namespace switchyard {

namespace {

// The versions of these operators differ only in the element types they
// allow (a type the IR lacks is refused where the tensor enters), except
// where a row says otherwise. Before version 7 the arithmetic and logic
// operators broadcast only when a `broadcast` attribute said so; Max, Min,
// Sum and Mean-6 do not broadcast at all, so broadcasting converts them too.

// A binary operator of one IR operator: NumPy's broadcasting from version
// 7, the `broadcast` attribute's before (converters_legacy.cc); Add, Sub,
// Mul and Div-1 also carry `consumed_inputs`, a hint.
void binary(const std::string& onnx, std::vector<int> versions, const std::string& op, bool consumed_inputs = false) {
  add_onnx_converter(onnx, std::move(versions), {{1, [op, consumed_inputs](NodeContext& c) {
                                                    if (consumed_inputs) ignore_consumed_inputs(c);
                                                    convert_legacy_binary(c, op);
                                                  }},
                                                 {7, [op](NodeContext& c) {
                                                    set_single_output(c, c.call(op, {c.input(0), c.input(1)}));
                                                  }}});
}

void unary(const std::string& onnx, std::vector<int> versions, int since, const std::string& op) {
  add_onnx_converter(onnx, std::move(versions),
                     {{since, [op](NodeContext& c) { set_single_output(c, c.call(op, {c.input(0)})); }}});
}

// A unary operator ONNX defines for floating-point types only.
void float_unary(const std::string& onnx, std::vector<int> versions, int since, const std::string& op) {
  add_onnx_converter(onnx, std::move(versions), {{since, [op](NodeContext& c) {
                                                    require_float(c, 0);
                                                    set_single_output(c, c.call(op, {c.input(0)}));
                                                  }}});
}

// Max, Min, Sum, Mean: a chain over any number of inputs.
void variadic(const std::string& onnx, const std::string& op, bool mean) {
  std::vector<int> versions = mean || onnx == "Sum" ? std::vector<int>{1, 6, 8, 13} : std::vector<int>{1, 6, 8, 12, 13};
  add_onnx_converter(onnx, versions, {{6, [op, mean](NodeContext& c) {
                                         Expr acc = c.input(0);
                                         for (size_t i = 1; i < c.input_count(); ++i) acc = c.call(op, {acc, c.input(i)});
                                         if (mean) acc = c.call("divide", {acc, c.scalar(double(c.input_count()), c.input_dtype(0))});
                                         set_single_output(c, acc);
                                       }}});
}


// Mod: the remainder with the dividend's sign (fmod=1, C's fmod): for
// integers a - trunc(a / b) * b from the IR's truncating division, for
// floating point the IR's fmod, which is exact. fmod=0 (Python's %, ONNX's
// default, which ONNX defines for integers and NumPy's mod gives for
// floats) moves a remainder whose sign differs from the divisor's by one
// divisor.
void convert_mod(NodeContext& c) {
  bool fmod = c.attr_int("fmod", 0) != 0;
  DType t = c.input_dtype(0);
  if (!dtype_is_int(t) && !dtype_is_float(t)) c.fail(std::string("Mod of ") + dtype_name(t) + " is not supported");
  Expr a = c.input(0), b = c.input(1);
  Expr r = dtype_is_float(t) ? c.call("fmod", {a, b})
                             : c.call("subtract", {a, c.call("multiply", {c.call("divide", {a, b}), b})});
  if (!fmod && !dtype_is_unsigned(t)) {
    Expr zero = c.scalar(0, t);
    Expr same_sign = c.call("equal", {c.call("less", {r, zero}), c.call("less", {b, zero})});
    Expr fix = c.call("minimum", {c.call("equal", {same_sign, c.scalar(0, DType::kBool)}),
                                  c.call("equal", {c.call("equal", {r, zero}), c.scalar(0, DType::kBool)})});
    r = c.call("where", {fix, c.call("add", {r, b}), r});
  }
  set_single_output(c, r);
}

// x < 0 ? negative_branch : x
Expr negative_part(NodeContext& c, const Expr& x, const Expr& negative_branch) {
  Expr is_negative = c.call("less", {x, c.scalar(0, tensor_type_of(x).dtype)});
  return c.call("where", {is_negative, negative_branch, x});
}

// clip(alpha * x + beta, 0, 1)
Expr hard_sigmoid(NodeContext& c, const Expr& x, double alpha, double beta) {
  DType t = tensor_type_of(x).dtype;
  Expr linear = c.call("add", {c.call("multiply", {x, c.scalar(alpha, t)}), c.scalar(beta, t)});
  return c.call("clip", {linear}, {{"a_min", 0.0}, {"a_max", 1.0}});
}

Expr gelu(NodeContext& c) {
  require_float(c, 0);
  Expr x = c.input(0);
  DType t = c.input_dtype(0);
  std::string approximate = c.attr_string("approximate", "none");
  Expr inner;
  if (approximate == "none") {
    inner = c.call("erf", {c.call("multiply", {x, c.scalar(M_SQRT1_2, t)})});
  } else if (approximate == "tanh") {
    Expr cube = c.call("multiply", {c.call("multiply", {x, x}), x});
    Expr poly = c.call("add", {x, c.call("multiply", {cube, c.scalar(0.044715, t)})});
    inner = c.call("tanh", {c.call("multiply", {poly, c.scalar(std::sqrt(2.0 / M_PI), t)})});
  } else {
    c.fail("approximate='" + approximate + "' is not one of 'none', 'tanh'");
  }
  Expr half_x = c.call("multiply", {x, c.scalar(0.5, t)});
  return c.call("multiply", {half_x, c.call("add", {inner, c.scalar(1, t)})});
}

// log(1 + e^x) as max(x, 0) + log(1 + e^-|x|), which cannot overflow.
Expr softplus(NodeContext& c, const Expr& x) {
  DType t = tensor_type_of(x).dtype;
  Expr tail = c.call("exp", {c.call("negative", {c.call("abs", {x})})});
  Expr log1p = c.call("log", {c.call("add", {tail, c.scalar(1, t)})});
  return c.call("add", {c.call("nn.relu", {x}), log1p});
}

// Clip's bounds: the min and max attributes before version 11 (`inputs`
// false), optional inputs from 11. Known float bounds make one clip; one
// bound, integer or computed bounds are max then min, as ONNX defines Clip.
void convert_clip(NodeContext& c, bool inputs) {
  Expr x = c.input(0);
  DType t = c.input_dtype(0);
  std::optional<Expr> low, high;
  if (inputs) {
    if (c.has_input(1)) low = c.input(1);
    if (c.has_input(2)) high = c.input(2);
  } else {
    if (c.has_attr("min")) low = c.scalar(c.attr_float("min"), t);
    if (c.has_attr("max")) high = c.scalar(c.attr_float("max"), t);
  }
  const ConstantNode* lo = low ? as<ConstantNode>(*low) : nullptr;
  const ConstantNode* hi = high ? as<ConstantNode>(*high) : nullptr;
  if (lo && hi && dtype_is_float(t)) {
    double a = lo->data.get_as_double(0), b = hi->data.get_as_double(0);
    if (a > b) c.fail("min (" + std::to_string(a) + ") is above max (" + std::to_string(b) + ")");
    return set_single_output(c, c.call("clip", {x}, {{"a_min", a}, {"a_max", b}}));
  }
  if (low) x = c.call("maximum", {x, *low});
  if (high) x = c.call("minimum", {x, *high});
  set_single_output(c, x);
}

void register_activations() {
  add_onnx_converter("LeakyRelu", {1, 6, 16}, {{6, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       double alpha = c.attr_float("alpha", 0.01f);
                       set_single_output(c, negative_part(c, x, c.call("multiply", {x, c.scalar(alpha, c.input_dtype(0))})));
                     }}});
  // PRelu-7 broadcasts the slope to the input (before, a slope of one value
  // or one per channel: converters_legacy.cc).
  add_onnx_converter("PRelu", {1, 6, 7, 9, 16}, {{1, convert_legacy_prelu}, {7, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       set_single_output(c, negative_part(c, x, c.call("multiply", {x, c.input(1)})));
                     }}});
  add_onnx_converter("Elu", {1, 6}, {{6, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       DType t = c.input_dtype(0);
                       double alpha = c.attr_float("alpha", 1.0f);
                       Expr expm1 = c.call("subtract", {c.call("exp", {x}), c.scalar(1, t)});
                       set_single_output(c, negative_part(c, x, c.call("multiply", {expm1, c.scalar(alpha, t)})));
                     }}});
  add_onnx_converter("Selu", {1, 6}, {{6, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       DType t = c.input_dtype(0);
                       double alpha = c.attr_float("alpha", 1.67326319217681884765625f);
                       double gamma = c.attr_float("gamma", 1.05070102214813232421875f);
                       Expr expm1 = c.call("subtract", {c.call("exp", {x}), c.scalar(1, t)});
                       Expr inner = negative_part(c, x, c.call("multiply", {expm1, c.scalar(alpha, t)}));
                       set_single_output(c, c.call("multiply", {inner, c.scalar(gamma, t)}));
                     }}});
  add_onnx_converter("HardSigmoid", {1, 6}, {{6, [](NodeContext& c) {
                       require_float(c, 0);
                       set_single_output(c, hard_sigmoid(c, c.input(0), c.attr_float("alpha", 0.2f), c.attr_float("beta", 0.5f)));
                     }}});
  add_onnx_converter("HardSwish", {14}, {{14, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       set_single_output(c, c.call("multiply", {x, hard_sigmoid(c, x, 1.0 / 6.0, 0.5)}));
                     }}});
  add_onnx_converter("Softsign", {1}, {{1, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       Expr denominator = c.call("add", {c.call("abs", {x}), c.scalar(1, c.input_dtype(0))});
                       set_single_output(c, c.call("divide", {x, denominator}));
                     }}});
  // 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation.
  add_onnx_converter("Gelu", {20}, {{20, [](NodeContext& c) { set_single_output(c, gelu(c)); }}});
  add_onnx_converter("ThresholdedRelu", {10}, {{10, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       DType t = c.input_dtype(0);
                       Expr above = c.call("greater", {x, c.scalar(c.attr_float("alpha", 1.0f), t)});
                       set_single_output(c, c.call("where", {above, x, c.scalar(0, t)}));
                     }}});
  add_onnx_converter("Shrink", {9}, {{9, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       DType t = c.input_dtype(0);
                       double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.0f);
                       Expr high = c.call("where", {c.call("greater", {x, c.scalar(lambd, t)}),
                                                    c.call("subtract", {x, c.scalar(bias, t)}), c.scalar(0, t)});
                       Expr low = c.call("less", {x, c.scalar(-lambd, t)});
                       set_single_output(c, c.call("where", {low, c.call("add", {x, c.scalar(bias, t)}), high}));
                     }}});
  add_onnx_converter("Softplus", {1}, {{1, [](NodeContext& c) {
                       require_float(c, 0);
                       set_single_output(c, softplus(c, c.input(0)));
                     }}});
  // Mish (opset 18): x tanh(softplus(x)).
  add_onnx_converter("Mish", {18}, {{18, [](NodeContext& c) {
                       require_float(c, 0);
                       Expr x = c.input(0);
                       set_single_output(c, c.call("multiply", {x, c.call("tanh", {softplus(c, x)})}));
                     }}});
  // max(0, x) + min(0, alpha (e^(x / alpha) - 1))
  add_onnx_converter("Celu", {12}, {{12, [](NodeContext& c) {
                       if (c.input_dtype(0) != DType::kFloat32) c.fail("needs a float32 input");
                       Expr x = c.input(0);
                       DType t = c.input_dtype(0);
                       double alpha = c.attr_float("alpha", 1.0f);
                       Expr expm1 = c.call("subtract", {c.call("exp", {c.call("divide", {x, c.scalar(alpha, t)})}), c.scalar(1, t)});
                       Expr negative = c.call("minimum", {c.call("multiply", {expm1, c.scalar(alpha, t)}), c.scalar(0, t)});
                       set_single_output(c, c.call("add", {c.call("nn.relu", {x}), negative}));
                     }}});
  add_onnx_converter("Clip", {1, 6, 11, 12, 13}, {{6, [](NodeContext& c) { convert_clip(c, false); }},
                                                   {11, [](NodeContext& c) { convert_clip(c, true); }}});
}

void convert_sign(NodeContext& c) {
  Expr x = c.input(0);
  DType t = c.input_dtype(0);
  if (t == DType::kBool) c.fail("needs a numeric input");
  Expr zero = c.scalar(0, t);
  Expr y = c.call("where", {c.call("greater", {x, zero}), c.scalar(1, t), zero});
  if (!dtype_is_unsigned(t)) y = c.call("where", {c.call("less", {x, zero}), c.scalar(-1, t), y});
  if (dtype_is_float(t)) y = c.call("where", {is_nan_expr(c, x), x, y});  // the sign of NaN is NaN
  set_single_output(c, y);
}

void convert_is_inf(NodeContext& c) {
  require_float(c, 0);
  Expr x = c.input(0);
  DType t = c.input_dtype(0);
  bool positive = c.attr_int("detect_positive", 1) != 0, negative = c.attr_int("detect_negative", 1) != 0;
  Expr y = c.call("broadcast_to", {c.scalar(0, DType::kBool)}, {{"shape", c.input_shape(0)}});
  if (positive) y = c.call("equal", {x, c.scalar(INFINITY, t)});
  if (negative) {
    Expr is_negative = c.call("equal", {x, c.scalar(-INFINITY, t)});
    y = positive ? c.call("maximum", {y, is_negative}) : is_negative;
  }
  set_single_output(c, y);
}

// Cast's `to`; `saturate` (version 19) concerns float8 targets only, which are refused.
void convert_cast(NodeContext& c, bool saturate) {
  int to = int(c.attr_int("to"));
  std::optional<DType> dtype = dtype_from_onnx(to);
  if (!dtype) c.fail("cast to element type " + onnx_type_name(to) + ", which Switchyard does not support");
  if (saturate) c.attr_int("saturate", 1);
  set_single_output(c, cast_to(c, c.input(0), *dtype));
}

}  // namespace

Expr is_nan_expr(NodeContext& c, const Expr& x) {
  return c.call("equal", {c.call("equal", {x, x}), c.scalar(0, DType::kBool)});
}

void register_elementwise_converters() {
  const std::vector<int> arithmetic{1, 6, 7, 13, 14};
  binary("Add", arithmetic, "add", true);
  binary("Sub", arithmetic, "subtract", true);
  binary("Mul", arithmetic, "multiply", true);
  binary("Div", arithmetic, "divide", true);
  binary("Equal", {1, 7, 11, 13, 19}, "equal");
  binary("Less", {1, 7, 9, 13}, "less");
  binary("Greater", {1, 7, 9, 13}, "greater");
  add_onnx_converter("LessOrEqual", {12, 16}, {{12, [](NodeContext& c) {
                       Expr greater = c.call("greater", {c.input(0), c.input(1)});
                       set_single_output(c, c.call("equal", {greater, c.scalar(0, DType::kBool)}));
                     }}});
  add_onnx_converter("GreaterOrEqual", {12, 16}, {{12, [](NodeContext& c) {
                       Expr less = c.call("less", {c.input(0), c.input(1)});
                       set_single_output(c, c.call("equal", {less, c.scalar(0, DType::kBool)}));
                     }}});
  // Pow-1 broadcasts by attribute; Pow-7 takes one type for both; from 12
  // the exponent may differ: cast to a floating-point base's type or
  // another integer's; an integer base with a floating-point exponent is
  // raised in float64 and truncated to the base's type, as NumPy's power
  // and astype (the reference) do.
  add_onnx_converter("Pow", {1, 7, 12, 13, 15}, {{1, [](NodeContext& c) { convert_legacy_binary(c, "power"); }},
                                                 {7, [](NodeContext& c) {
                       DType base = c.input_dtype(0), exponent = c.input_dtype(1);
                       if (dtype_is_float(base) || !dtype_is_float(exponent)) {
                         Expr cast = cast_to(c, c.input(1), base);
                         return set_single_output(c, c.call("power", {c.input(0), cast}));
                       }
                       Expr wide = c.call("power", {cast_to(c, c.input(0), DType::kFloat64),
                                                    cast_to(c, c.input(1), DType::kFloat64)});
                       set_single_output(c, cast_to(c, wide, base));
                     }}});
  variadic("Max", "maximum", false);
  variadic("Min", "minimum", false);
  variadic("Sum", "add", false);
  variadic("Mean", "add", true);
  // Logic on bool tensors: false < true, so And is the minimum and Or the maximum.
  for (const char* name : {"And", "Or", "Xor"}) {
    std::string op_type = name;
    add_onnx_converter(op_type, {1, 7}, {{1, [op_type](NodeContext& c) {
                         if (c.input_dtype(0) != DType::kBool) c.fail("needs bool inputs");
                         const char* op = op_type == "And" ? "minimum" : op_type == "Or" ? "maximum" : nullptr;
                         Expr a = c.input(0);
                         Expr b = c.op_version() < 7 ? legacy_broadcast(c, c.input(1), c.input_shape(0)) : c.input(1);
                         Expr result = op ? c.call(op, {a, b})
                                          : c.call("equal", {c.call("equal", {a, b}), c.scalar(0, DType::kBool)});
                         set_single_output(c, result);
                       }}});
  }
  add_onnx_converter("Not", {1}, {{1, [](NodeContext& c) {
                       if (c.input_dtype(0) != DType::kBool) c.fail("needs a bool input");
                       set_single_output(c, c.call("equal", {c.input(0), c.scalar(0, DType::kBool)}));
                     }}});
  const std::vector<int> math{1, 6, 13};
  unary("Neg", math, 6, "negative");
  unary("Abs", math, 6, "abs");
  unary("Exp", math, 6, "exp");
  unary("Log", math, 6, "log");
  unary("Sqrt", math, 6, "sqrt");
  unary("Tanh", math, 6, "tanh");
  unary("Sigmoid", math, 6, "sigmoid");
  unary("Floor", math, 6, "floor");
  unary("Ceil", math, 6, "ceil");
  unary("Relu", {1, 6, 13, 14}, 6, "nn.relu");
  unary("Erf", {9, 13}, 9, "erf");
  unary("Round", {11}, 11, "round");  // halves to even, as ONNX's
  // Trigonometric from opset 7, hyperbolic from 9; ONNX types them float only.
  for (auto [onnx, op] : {std::pair{"Sin", "sin"}, {"Cos", "cos"}, {"Tan", "tan"}, {"Asin", "asin"},
                          {"Acos", "acos"}, {"Atan", "atan"}})
    float_unary(onnx, {7}, 7, op);
  for (auto [onnx, op] : {std::pair{"Sinh", "sinh"}, {"Cosh", "cosh"}, {"Asinh", "asinh"}, {"Acosh", "acosh"},
                          {"Atanh", "atanh"}})
    float_unary(onnx, {9}, 9, op);
  add_onnx_converter("Sign", {9, 13}, {{9, convert_sign}});
  add_onnx_converter("IsNaN", {9, 13, 20}, {{9, [](NodeContext& c) {
                       require_float(c, 0);
                       set_single_output(c, is_nan_expr(c, c.input(0)));
                     }}});
  add_onnx_converter("IsInf", {10, 20}, {{10, convert_is_inf}});
  add_onnx_converter("Mod", {10, 13}, {{10, convert_mod}});
  // ONNX shifts the unsigned integer types.
  add_onnx_converter("BitShift", {11}, {{11, [](NodeContext& c) {
                       std::string direction = c.attr_string("direction");
                       if (direction != "LEFT" && direction != "RIGHT")
                         c.fail("direction='" + direction + "' is not one of 'LEFT', 'RIGHT'");
                       if (!dtype_is_unsigned(c.input_dtype(0)))
                         c.fail(std::string("BitShift of ") + dtype_name(c.input_dtype(0)) +
                                " is not supported (unsigned integers only)");
                       const char* op = direction == "LEFT" ? "left_shift" : "right_shift";
                       set_single_output(c, c.call(op, {c.input(0), c.input(1)}));
                     }}});
  add_onnx_converter("Reciprocal", math, {{6, [](NodeContext& c) {
                       require_float(c, 0);
                       set_single_output(c, c.call("divide", {c.scalar(1, c.input_dtype(0)), c.input(0)}));
                     }}});
  add_onnx_converter("Where", {9, 16}, {{9, [](NodeContext& c) {
                       set_single_output(c, c.call("where", {c.input(0), c.input(1), c.input(2)}));
                     }}});
  add_onnx_converter("Cast", {1, 6, 9, 13, 19, 21}, {{6, [](NodeContext& c) { convert_cast(c, false); }},
                                                      {19, [](NodeContext& c) { convert_cast(c, true); }}});
  add_onnx_converter("CastLike", {15, 19, 21}, {{15, [](NodeContext& c) {
                                                   set_single_output(c, cast_to(c, c.input(0), c.input_dtype(1)));
                                                 }},
                                                {19, [](NodeContext& c) {
                                                   c.attr_int("saturate", 1);
                                                   set_single_output(c, cast_to(c, c.input(0), c.input_dtype(1)));
                                                 }}});
  register_activations();
}

}  // namespace switchyard
