// Converters of ONNX's element-wise operators: arithmetic, comparisons,
// logic, unary math and the activations, which are built from IR
// element-wise operators where the IR has no operator of their own.
#include <cmath>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_tensor.h"

namespace switchyard {

namespace {

void binary(const std::string& onnx, const std::string& op) {
  add_onnx_converter(onnx, [op](NodeContext& c) { set_single_output(c, c.call(op, {c.input(0), c.input(1)})); });
}

void unary(const std::string& onnx, const std::string& op) {
  add_onnx_converter(onnx, [op](NodeContext& c) { set_single_output(c, c.call(op, {c.input(0)})); });
}

// Max, Min, Sum, Mean: a chain over any number of inputs.
void variadic(const std::string& onnx, const std::string& op, bool mean) {
  add_onnx_converter(onnx, [op, mean](NodeContext& c) {
    Expr acc = c.input(0);
    for (size_t i = 1; i < c.input_count(); ++i) acc = c.call(op, {acc, c.input(i)});
    if (mean) acc = c.call("divide", {acc, c.scalar(double(c.input_count()), c.input_dtype(0))});
    set_single_output(c, acc);
  });
}

void require_float(NodeContext& c, size_t i) {
  if (!dtype_is_float(c.input_dtype(i))) c.fail(std::string("needs a floating-point input, got ") + dtype_name(c.input_dtype(i)));
}

Expr cast_to(NodeContext& c, const Expr& x, DType dtype) {
  if (tensor_type_of(x).dtype == dtype) return x;
  return c.call("cast", {x}, {{"dtype", std::string(dtype_name(dtype))}});
}


// Integer Mod from the IR's truncating division: a - trunc(a / b) * b has
// the dividend's sign (fmod=1); fmod=0 moves a remainder whose sign differs
// from the divisor's by one divisor. A floating-point Mod would need a
// truncation the IR does not have.
void convert_mod(NodeContext& c) {
  bool fmod = c.attr_int("fmod", 0) != 0;
  DType t = c.input_dtype(0);
  if (!dtype_is_int(t)) c.fail(std::string("Mod of ") + dtype_name(t) + " is not supported (integers only)");
  Expr a = c.input(0), b = c.input(1);
  Expr r = c.call("subtract", {a, c.call("multiply", {c.call("divide", {a, b}), b})});
  if (!fmod && t != DType::kUInt8) {
    Expr zero = c.scalar(0, t);
    Expr same_sign = c.call("equal", {c.call("less", {r, zero}), c.call("less", {b, zero})});
    Expr fix = c.call("minimum", {c.call("equal", {same_sign, c.scalar(0, DType::kBool)}),
                                  c.call("equal", {c.call("equal", {r, zero}), c.scalar(0, DType::kBool)})});
    r = c.call("where", {fix, c.call("add", {r, b}), r});
  }
  set_single_output(c, r);
}

// DequantizeLinear: (x - zero_point) * scale in float32, the scale and
// zero point one value or one per element of `axis`.
void convert_dequantize(NodeContext& c) {
  DType t = c.input_dtype(0);
  if (t != DType::kInt8 && t != DType::kUInt8 && t != DType::kInt32) c.fail("needs an int8, uint8 or int32 input");
  if (c.input_dtype(1) != DType::kFloat32) c.fail("the scale must be float32");
  int64_t rank = c.input_type(0).ndim();
  int64_t axis = c.attr_int("axis", 1);
  // A per-axis vector is shaped to broadcast along `axis` (which only then matters).
  auto along_axis = [&](const Expr& v) {
    const TensorTypeNode& vt = tensor_type_of(v);
    if (vt.ndim() == 0) return v;
    if (axis < -rank || axis >= rank) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    if (vt.ndim() != 1 || vt.shape[0] != c.input_shape(0)[size_t(axis)])
      c.fail("the scale and zero point must be scalars or hold one value per element of axis " + std::to_string(axis));
    std::vector<int64_t> shape(size_t(rank - axis), 1);
    shape[0] = vt.shape[0];
    return c.call("reshape", {v}, {{"newshape", shape}});
  };
  Expr x = cast_to(c, c.input(0), DType::kFloat32);
  if (c.has_input(2)) {
    if (c.input_dtype(2) != t) c.fail("the zero point must have the input's element type");
    x = c.call("subtract", {x, along_axis(cast_to(c, c.input(2), DType::kFloat32))});
  }
  set_single_output(c, c.call("multiply", {x, along_axis(c.input(1))}));
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

void register_activations() {
  add_onnx_converter("LeakyRelu", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    double alpha = c.attr_float("alpha", 0.01f);
    set_single_output(c, negative_part(c, x, c.call("multiply", {x, c.scalar(alpha, c.input_dtype(0))})));
  });
  add_onnx_converter("PRelu", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    set_single_output(c, negative_part(c, x, c.call("multiply", {x, c.input(1)})));
  });
  add_onnx_converter("Elu", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    double alpha = c.attr_float("alpha", 1.0f);
    Expr expm1 = c.call("subtract", {c.call("exp", {x}), c.scalar(1, t)});
    set_single_output(c, negative_part(c, x, c.call("multiply", {expm1, c.scalar(alpha, t)})));
  });
  add_onnx_converter("Selu", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    double alpha = c.attr_float("alpha", 1.67326319217681884765625f);
    double gamma = c.attr_float("gamma", 1.05070102214813232421875f);
    Expr expm1 = c.call("subtract", {c.call("exp", {x}), c.scalar(1, t)});
    Expr inner = negative_part(c, x, c.call("multiply", {expm1, c.scalar(alpha, t)}));
    set_single_output(c, c.call("multiply", {inner, c.scalar(gamma, t)}));
  });
  add_onnx_converter("HardSigmoid", [](NodeContext& c) {
    require_float(c, 0);
    set_single_output(c, hard_sigmoid(c, c.input(0), c.attr_float("alpha", 0.2f), c.attr_float("beta", 0.5f)));
  });
  add_onnx_converter("HardSwish", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    set_single_output(c, c.call("multiply", {x, hard_sigmoid(c, x, 1.0 / 6.0, 0.5)}));
  });
  add_onnx_converter("Softsign", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    Expr denominator = c.call("add", {c.call("abs", {x}), c.scalar(1, c.input_dtype(0))});
    set_single_output(c, c.call("divide", {x, denominator}));
  });
  // Gelu as in opset 20 (also found in models that declare it early):
  // 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation.
  add_onnx_converter("Gelu", [](NodeContext& c) {
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
    set_single_output(c, c.call("multiply", {half_x, c.call("add", {inner, c.scalar(1, t)})}));
  });
  add_onnx_converter("ThresholdedRelu", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    Expr above = c.call("greater", {x, c.scalar(c.attr_float("alpha", 1.0f), t)});
    set_single_output(c, c.call("where", {above, x, c.scalar(0, t)}));
  });
  add_onnx_converter("Shrink", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.0f);
    Expr high = c.call("where", {c.call("greater", {x, c.scalar(lambd, t)}), c.call("subtract", {x, c.scalar(bias, t)}),
                                 c.scalar(0, t)});
    Expr low = c.call("less", {x, c.scalar(-lambd, t)});
    set_single_output(c, c.call("where", {low, c.call("add", {x, c.scalar(bias, t)}), high}));
  });
  // log(1 + e^x) as max(x, 0) + log(1 + e^-|x|), which cannot overflow.
  add_onnx_converter("Softplus", [](NodeContext& c) {
    require_float(c, 0);
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    Expr tail = c.call("exp", {c.call("negative", {c.call("abs", {x})})});
    Expr log1p = c.call("log", {c.call("add", {tail, c.scalar(1, t)})});
    set_single_output(c, c.call("add", {c.call("nn.relu", {x}), log1p}));
  });
  // max(0, x) + min(0, alpha (e^(x / alpha) - 1))
  add_onnx_converter("Celu", [](NodeContext& c) {
    if (c.input_dtype(0) != DType::kFloat32) c.fail("needs a float32 input");
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    double alpha = c.attr_float("alpha", 1.0f);
    Expr expm1 = c.call("subtract", {c.call("exp", {c.call("divide", {x, c.scalar(alpha, t)})}), c.scalar(1, t)});
    Expr negative = c.call("minimum", {c.call("multiply", {expm1, c.scalar(alpha, t)}), c.scalar(0, t)});
    set_single_output(c, c.call("add", {c.call("nn.relu", {x}), negative}));
  });
  add_onnx_converter("Clip", [](NodeContext& c) {
    Expr x = c.input(0);
    const NDArray* low = c.constant_input(1);
    const NDArray* high = c.constant_input(2);
    if (low && high && dtype_is_float(c.input_dtype(0))) {
      double lo = low->get_as_double(0), hi = high->get_as_double(0);
      if (lo > hi) c.fail("min (" + std::to_string(lo) + ") is above max (" + std::to_string(hi) + ")");
      set_single_output(c, c.call("clip", {x}, {{"a_min", lo}, {"a_max", hi}}));
      return;
    }
    // One bound, integer or computed bounds: max then min, as ONNX defines Clip.
    if (c.has_input(1)) x = c.call("maximum", {x, c.input(1)});
    if (c.has_input(2)) x = c.call("minimum", {x, c.input(2)});
    set_single_output(c, x);
  });
}

}  // namespace

Expr is_nan_expr(NodeContext& c, const Expr& x) {
  return c.call("equal", {c.call("equal", {x, x}), c.scalar(0, DType::kBool)});
}

void register_elementwise_converters() {
  binary("Add", "add");
  binary("Sub", "subtract");
  binary("Mul", "multiply");
  binary("Div", "divide");
  binary("Equal", "equal");
  binary("Less", "less");
  binary("Greater", "greater");
  add_onnx_converter("LessOrEqual", [](NodeContext& c) {
    set_single_output(c, c.call("equal", {c.call("greater", {c.input(0), c.input(1)}), c.scalar(0, DType::kBool)}));
  });
  add_onnx_converter("GreaterOrEqual", [](NodeContext& c) {
    set_single_output(c, c.call("equal", {c.call("less", {c.input(0), c.input(1)}), c.scalar(0, DType::kBool)}));
  });
  add_onnx_converter("Pow", [](NodeContext& c) {
    Expr exponent = c.input(1);
    if (c.input_dtype(1) != c.input_dtype(0)) {
      if (!dtype_is_float(c.input_dtype(0))) c.fail("an integer base with an exponent of another type is not supported");
      exponent = c.call("cast", {exponent}, {{"dtype", std::string(dtype_name(c.input_dtype(0)))}});
    }
    set_single_output(c, c.call("power", {c.input(0), exponent}));
  });
  variadic("Max", "maximum", false);
  variadic("Min", "minimum", false);
  variadic("Sum", "add", false);
  variadic("Mean", "add", true);
  // Logic on bool tensors: false < true, so And is the minimum and Or the maximum.
  for (const char* name : {"And", "Or", "Xor"}) {
    std::string op_type = name;
    add_onnx_converter(op_type, [op_type](NodeContext& c) {
      if (c.input_dtype(0) != DType::kBool) c.fail("needs bool inputs");
      const char* op = op_type == "And" ? "minimum" : op_type == "Or" ? "maximum" : nullptr;
      Expr result = op ? c.call(op, {c.input(0), c.input(1)})
                       : c.call("equal", {c.call("equal", {c.input(0), c.input(1)}), c.scalar(0, DType::kBool)});
      set_single_output(c, result);
    });
  }
  add_onnx_converter("Not", [](NodeContext& c) {
    if (c.input_dtype(0) != DType::kBool) c.fail("needs a bool input");
    set_single_output(c, c.call("equal", {c.input(0), c.scalar(0, DType::kBool)}));
  });
  unary("Neg", "negative");
  unary("Abs", "abs");
  unary("Exp", "exp");
  unary("Log", "log");
  unary("Sqrt", "sqrt");
  unary("Erf", "erf");
  unary("Tanh", "tanh");
  unary("Sigmoid", "sigmoid");
  unary("Relu", "nn.relu");
  unary("Floor", "floor");
  unary("Ceil", "ceil");
  unary("Round", "round");  // halves to even, as ONNX's
  add_onnx_converter("Sign", [](NodeContext& c) {
    Expr x = c.input(0);
    DType t = c.input_dtype(0);
    if (t == DType::kBool) c.fail("needs a numeric input");
    Expr zero = c.scalar(0, t);
    Expr y = c.call("where", {c.call("greater", {x, zero}), c.scalar(1, t), zero});
    if (t != DType::kUInt8) y = c.call("where", {c.call("less", {x, zero}), c.scalar(-1, t), y});
    if (dtype_is_float(t)) y = c.call("where", {is_nan_expr(c, x), x, y});  // the sign of NaN is NaN
    set_single_output(c, y);
  });
  add_onnx_converter("IsNaN", [](NodeContext& c) {
    require_float(c, 0);
    set_single_output(c, is_nan_expr(c, c.input(0)));
  });
  add_onnx_converter("IsInf", [](NodeContext& c) {
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
  });
  add_onnx_converter("Mod", convert_mod);
  add_onnx_converter("DequantizeLinear", convert_dequantize);
  add_onnx_converter("Reciprocal", [](NodeContext& c) {
    require_float(c, 0);
    set_single_output(c, c.call("divide", {c.scalar(1, c.input_dtype(0)), c.input(0)}));
  });
  add_onnx_converter("Where", [](NodeContext& c) {
    set_single_output(c, c.call("where", {c.input(0), c.input(1), c.input(2)}));
  });
  add_onnx_converter("Cast", [](NodeContext& c) {
    int to = int(c.attr_int("to"));
    std::optional<DType> dtype = dtype_from_onnx(to);
    if (!dtype) c.fail("cast to element type " + onnx_type_name(to) + ", which Switchyard does not support");
    if (c.has_attr("saturate")) c.attr_int("saturate");
    set_single_output(c, cast_to(c, c.input(0), *dtype));
  });
  add_onnx_converter("CastLike", [](NodeContext& c) {
    if (c.has_attr("saturate")) c.attr_int("saturate");
    set_single_output(c, cast_to(c, c.input(0), c.input_dtype(1)));
  });
  register_activations();
}

}  // namespace switchyard
