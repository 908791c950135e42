// Converters of ONNX's quantization operators, composed from IR operators
// (the IR has no quantized operator of its own): QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear and the integer products
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv. The products
// shift their int8/uint8 operands by the zero points in int32 and multiply
// and accumulate in int32 (matmul, nn.conv2d), exactly as ONNX defines them;
// requantizing computes in float32 and rounds halves to even. Only int8 and
// uint8 quantization: the float8, int4 and 16-bit types never reach a
// converter (the tensor or input is refused naming its type), and
// `output_dtype` naming one is refused here.
#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_tensor.h"
#include "op/registry.h"

namespace switchyard {

namespace {

bool is_quantized(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// The lowest and highest value of a quantized dtype.
std::pair<double, double> range_of(DType t) {
  return t == DType::kInt8 ? std::pair{-128.0, 127.0} : std::pair{0.0, 255.0};
}

// Fails unless input i, `role`, is int8 or uint8.
void require_quantized(NodeContext& c, size_t i, const std::string& role) {
  DType t = c.input_dtype(i);
  if (!is_quantized(t)) c.fail(role + " is " + dtype_name(t) + "; only int8 and uint8 quantization is supported");
}

// A scale must be floating-point. One that divides (QuantizeLinear's, an
// output's) is refused when known to hold a zero: the quantized value would
// be undefined.
void check_scale(NodeContext& c, size_t i, const std::string& role, bool divides) {
  DType t = c.input_dtype(i);
  if (!dtype_is_float(t)) c.fail(role + " is " + dtype_name(t) + ", not a floating-point type");
  const NDArray* value = divides ? c.constant_input(i) : nullptr;
  if (!value) return;
  for (int64_t k = 0; k < value->numel(); ++k)
    if (value->get_as_double(k) == 0)
      c.fail(role + " is zero" + (value->numel() > 1 ? " at element " + std::to_string(k) : "") +
             ", so the quantized value x / scale is undefined");
}

// A zero point must have the type of the tensor it belongs to.
void check_zero_point_dtype(NodeContext& c, size_t zero_point, DType expected, const std::string& role,
                            const std::string& of) {
  DType t = c.input_dtype(zero_point);
  if (t != expected)
    c.fail(role + " is " + dtype_name(t) + " but " + of + " is " + dtype_name(expected) + "; they must match");
}

// How many values a scale or zero point may hold: one (per tensor) or,
// where `count` is set, one per element of an axis of that extent
// (`per_what` names it for messages: "per element of axis 1").
struct Granularity {
  std::optional<int64_t> count;
  std::string per_what;
  std::string refusal;  // when `count` is unset: why only one value is allowed
};

// Input i, `role`, as a float32 (scales) or int32 (zero points) value: a
// 0-d scalar, or a 1-D vector of `g.count` values.
Expr parameter(NodeContext& c, size_t i, DType as, const Granularity& g, const std::string& role) {
  const TensorTypeNode& t = c.input_type(i);
  if (t.numel() == 1 && t.ndim() <= 1) return reshape_to(c, cast_to(c, c.input(i), as), {});
  if (!g.count) c.fail(role + " has shape " + shape_to_string(t.shape) + ": it must hold one value" + g.refusal);
  if (t.ndim() != 1 || t.shape[0] != *g.count)
    c.fail(role + " has shape " + shape_to_string(t.shape) + ", but must be one value or " + std::to_string(*g.count) +
           " (one " + g.per_what + ")");
  return cast_to(c, c.input(i), as);
}

// A parameter vector shaped (n, 1, ..., 1) to broadcast along `axis` of a
// tensor of `rank` dimensions; a scalar as it is.
Expr along(NodeContext& c, const Expr& v, int64_t axis, int64_t rank) {
  const TensorTypeNode& t = tensor_type_of(v);
  if (t.ndim() == 0) return v;
  std::vector<int64_t> shape(size_t(rank - axis), 1);
  shape[0] = t.shape[0];
  return reshape_to(c, v, shape);
}

// Scale and zero point (inputs `scale`, `zero_point`) must agree in length.
void check_same_length(NodeContext& c, size_t scale, size_t zero_point, const std::string& what) {
  if (!c.has_input(zero_point)) return;
  int64_t s = c.input_type(scale).numel(), z = c.input_type(zero_point).numel();
  if (s != z)
    c.fail(what + "'s scale holds " + std::to_string(s) + " values but its zero point " + std::to_string(z) +
           "; they must match");
}

// saturate(round_half_to_even(value) + zero_point) as `dtype`: value and
// zero point float32, broadcast alike.
Expr saturate_to(NodeContext& c, const Expr& value, const Expr& zero_point, DType dtype) {
  Expr y = c.call("round", {value});
  if (zero_point) y = c.call("add", {y, zero_point});
  auto [low, high] = range_of(dtype);
  return cast_to(c, c.call("clip", {y}, {{"a_min", low}, {"a_max", high}}), dtype);
}

// An integer operand (input i) minus its zero point (input zp, optional), in
// int32; the zero point a scalar or a vector along `axis`.
Expr shifted(NodeContext& c, size_t i, size_t zero_point, const Granularity& g, int64_t axis, const std::string& role) {
  Expr x = cast_to(c, c.input(i), DType::kInt32);
  if (!c.has_input(zero_point)) return x;
  check_zero_point_dtype(c, zero_point, c.input_dtype(i), role + "'s zero point", role);
  Expr z = parameter(c, zero_point, DType::kInt32, g, role + "'s zero point");
  return c.call("subtract", {x, along(c, z, axis, c.input_type(i).ndim())});
}

// What the versions of QuantizeLinear and DequantizeLinear add.
struct QuantizeVersion {
  bool per_axis = false;      // `axis` from 13
  bool float16_scale = false;  // scales of float16 and bfloat16 from 19 (and QuantizeLinear's `saturate`)
  bool blocks = false;        // `block_size` from 21 (and QuantizeLinear's `output_dtype`)
};

// The granularity of QuantizeLinear's and DequantizeLinear's parameters
// for input 0, and the axis they vary along.
std::pair<Granularity, int64_t> per_axis_of(NodeContext& c, QuantizeVersion v) {
  int64_t rank = c.input_type(0).ndim();
  if (!v.per_axis) return {{std::nullopt, "", " (one per axis came with version 13)"}, 0};
  int64_t axis = c.attr_int("axis", 1);
  const TensorTypeNode& scale = c.input_type(1);
  if (scale.numel() == 1 && scale.ndim() <= 1) return {{std::nullopt, "", ""}, 0};  // axis unused
  axis = normalize_axis(c, axis, rank);
  return {{c.input_shape(0)[size_t(axis)], "per element of axis " + std::to_string(axis), ""}, axis};
}

void check_version_scale(NodeContext& c, QuantizeVersion v, bool divides) {
  check_scale(c, 1, "the scale", divides);
  DType t = c.input_dtype(1);
  if (t != DType::kFloat32 && !v.float16_scale)
    c.fail("the scale is " + std::string(dtype_name(t)) + "; before version 19 it must be float32");
  if (v.blocks && c.attr_int("block_size", 0) != 0) c.fail("blocked quantization (block_size > 0) is not supported");
}

// QuantizeLinear: saturate(round(x / scale) + zero_point), of the zero
// point's type (uint8 without one, or version 21's `output_dtype`).
void convert_quantize(NodeContext& c, QuantizeVersion v) {
  DType x_type = c.input_dtype(0);
  if (!dtype_is_float(x_type) && x_type != DType::kInt32)
    c.fail("the input is " + std::string(dtype_name(x_type)) + ", not a floating-point type or int32");
  check_version_scale(c, v, true);
  if (v.float16_scale) c.attr_int("saturate", 1);  // concerns float8 outputs only, which are refused
  DType out = DType::kUInt8;
  int64_t output_dtype = v.blocks ? c.attr_int("output_dtype", 0) : 0;
  if (output_dtype != 0) {
    std::optional<DType> d = dtype_from_onnx(int(output_dtype));
    if (!d || !is_quantized(*d))
      c.fail("output_dtype " + onnx_type_name(int(output_dtype)) + " is not supported (int8 and uint8 only)");
    out = *d;
  }
  if (c.has_input(2)) {
    require_quantized(c, 2, "the zero point");
    if (output_dtype != 0 && c.input_dtype(2) != out)
      c.fail("the zero point is " + std::string(dtype_name(c.input_dtype(2))) + " but output_dtype is " +
             dtype_name(out) + "; they must match");
    out = c.input_dtype(2);
  }
  check_same_length(c, 1, 2, "the input");
  auto [granularity, axis] = per_axis_of(c, v);
  int64_t rank = c.input_type(0).ndim();
  Expr scale = along(c, parameter(c, 1, DType::kFloat32, granularity, "the scale"), axis, rank);
  Expr scaled = c.call("divide", {cast_to(c, c.input(0), DType::kFloat32), scale});
  Expr zero_point;
  if (c.has_input(2))
    zero_point = along(c, parameter(c, 2, DType::kFloat32, granularity, "the zero point"), axis, rank);
  set_single_output(c, saturate_to(c, scaled, zero_point, out));
}

// DequantizeLinear: (x - zero_point) * scale, in float32 and then the
// scale's type.
void convert_dequantize(NodeContext& c, QuantizeVersion v) {
  DType t = c.input_dtype(0);
  if (!is_quantized(t) && t != DType::kInt32)
    c.fail("the input is " + std::string(dtype_name(t)) + "; only int8, uint8 and int32 are supported");
  check_version_scale(c, v, false);
  check_same_length(c, 1, 2, "the input");
  auto [granularity, axis] = per_axis_of(c, v);
  int64_t rank = c.input_type(0).ndim();
  // An int8 constant (a QDQ model's weights) is cast unfolded, so that it
  // stays int8 data times its scale until FoldConstant: FuseQDQ
  // (transform/quantized_convolutions.h) takes the int8 data. (Not folded
  // first and then dropped: folding ResNet-50's weights took 0.3 s.)
  Expr x = t == DType::kInt8 && c.constant_input(0)
               ? Expr(make_op_call("cast", {c.input(0)}, {{"dtype", std::string("float32")}},
                                   {.span = c.span(), .checked_type = tensor_type(c.input_shape(0), DType::kFloat32)}))
               : cast_to(c, c.input(0), DType::kFloat32);
  if (c.has_input(2)) {
    check_zero_point_dtype(c, 2, t, "the zero point", "the input");
    x = c.call("subtract", {x, along(c, parameter(c, 2, DType::kFloat32, granularity, "the zero point"), axis, rank)});
  }
  Expr y = c.call("multiply", {x, along(c, parameter(c, 1, DType::kFloat32, granularity, "the scale"), axis, rank)});
  set_single_output(c, cast_to(c, y, c.input_dtype(1)));
}

// DynamicQuantizeLinear: uint8 with the scale and zero point that map
// [min(x, 0), max(x, 0)] onto [0, 255], in the order ONNX's function body
// computes them (each step rounded in float32).
void convert_dynamic_quantize(NodeContext& c) {
  if (c.input_dtype(0) != DType::kFloat32) c.fail("the input must be float32");
  Expr x = c.input(0);
  Expr zero = c.scalar(0, DType::kFloat32);
  Expr low = c.call("minimum", {c.call("negative", {c.call("max", {c.call("negative", {x})})}), zero});
  Expr high = c.call("maximum", {c.call("max", {x}), zero});
  Expr scale = c.call("divide", {c.call("subtract", {high, low}), c.scalar(255, DType::kFloat32)});
  Expr initial = c.call("subtract", {zero, c.call("divide", {low, scale})});
  Expr zero_point = c.call("round", {c.call("clip", {initial}, {{"a_min", 0.0}, {"a_max", 255.0}})});
  c.set_output(0, saturate_to(c, c.call("divide", {x, scale}), zero_point, DType::kUInt8));
  c.set_output(1, scale);
  c.set_output(2, cast_to(c, zero_point, DType::kUInt8));
}

const Granularity kPerTensor{std::nullopt, "", ""};

// The products' operands: a (…, M, K) shifted per tensor or per row,
// b (…, K, N) per tensor or per column.
Granularity rows_of(NodeContext& c, size_t i) {
  const std::vector<int64_t>& s = c.input_shape(i);
  if (s.size() < 2) return {std::nullopt, "", " (A is 1-D)"};
  return {s[s.size() - 2], "per row of A", ""};
}
Granularity columns_of(NodeContext& c, size_t i, const std::string& name) {
  const std::vector<int64_t>& s = c.input_shape(i);
  if (s.size() < 2) return {std::nullopt, "", " (" + name + " is 1-D)"};
  return {s.back(), "per column of " + name, ""};
}

// MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32.
void convert_matmul_integer(NodeContext& c) {
  require_quantized(c, 0, "A");
  require_quantized(c, 1, "B");
  int64_t a_rank = c.input_type(0).ndim(), b_rank = c.input_type(1).ndim();
  Expr a = shifted(c, 0, 2, rows_of(c, 0), a_rank - 2, "A");
  Expr b = shifted(c, 1, 3, columns_of(c, 1, "B"), b_rank - 1, "B");
  set_single_output(c, c.call("matmul", {a, b}));
}

// The float32 factor that takes the int32 accumulator of a product to the
// output's scale: a_scale * b_scale / y_scale (inputs `a`, `b`, `y`), b's
// per output channel along `axis` of the accumulator.
Expr requantize_factor(NodeContext& c, size_t a, size_t b, size_t y, const Granularity& b_granularity, int64_t axis,
                       int64_t rank) {
  for (auto [i, role] : {std::pair{a, "the first operand's scale"}, {b, "the second operand's scale"}})
    check_scale(c, i, role, false);
  check_scale(c, y, "the output's scale", true);
  Expr b_scale = along(c, parameter(c, b, DType::kFloat32, b_granularity, "the second operand's scale"), axis, rank);
  Expr a_scale = parameter(c, a, DType::kFloat32, kPerTensor, "the first operand's scale");
  Expr product = c.call("multiply", {a_scale, b_scale});
  return c.call("divide", {product, parameter(c, y, DType::kFloat32, kPerTensor, "the output's scale")});
}

// The output of a QLinear product: its int32 accumulator requantized to the
// output's scale (input `y`) and zero point (input `y + 1`).
Expr requantized(NodeContext& c, const Expr& accumulator, const Expr& factor, size_t y) {
  require_quantized(c, y + 1, "the output's zero point");
  check_same_length(c, y, y + 1, "the output");
  Expr zero_point = parameter(c, y + 1, DType::kFloat32, kPerTensor, "the output's zero point");
  Expr scaled = c.call("multiply", {cast_to(c, accumulator, DType::kFloat32), factor});
  return saturate_to(c, scaled, zero_point, c.input_dtype(y + 1));
}

// QLinearMatMul: a (per tensor) and b (per tensor or per column), inputs
// a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
void convert_qlinear_matmul(NodeContext& c) {
  require_quantized(c, 0, "a");
  require_quantized(c, 3, "b");
  check_same_length(c, 1, 2, "a");
  check_same_length(c, 4, 5, "b");
  Granularity a_granularity{std::nullopt, "", " (a per-row scale is not supported)"};
  Granularity b_granularity = columns_of(c, 3, "b");
  int64_t b_rank = c.input_type(3).ndim();
  Expr a = shifted(c, 0, 2, a_granularity, 0, "a");
  Expr b = shifted(c, 3, 5, b_granularity, b_rank - 1, "b");
  Expr accumulator = c.call("matmul", {a, b});
  Expr factor = requantize_factor(c, 1, 4, 6, b_granularity, 0, 1);
  set_single_output(c, requantized(c, accumulator, factor, 6));
}

// ConvInteger (inputs x, w, x_zero_point, w_zero_point) and QLinearConv
// (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B): x shifted per tensor, w per tensor or per output
// channel; the padding is zero after the shift, as ONNX pads with x's zero
// point.
Expr integer_convolution(NodeContext& c, size_t x, size_t x_zero_point, size_t w, size_t w_zero_point,
                         const Expr& bias) {
  require_quantized(c, x, "x");
  require_quantized(c, w, "w");
  Granularity per_channel{c.input_shape(w).empty() ? 0 : c.input_shape(w)[0], "per output channel", ""};
  Expr shifted_x = shifted(c, x, x_zero_point, kPerTensor, 0, "x");
  Expr shifted_w = shifted(c, w, w_zero_point, per_channel, 0, "w");
  return onnx_convolution(c, shifted_x, shifted_w, bias);
}

void convert_qlinear_conv(NodeContext& c) {
  check_same_length(c, 1, 2, "x");
  check_same_length(c, 4, 5, "w");
  Expr bias;
  if (c.has_input(8)) {
    if (c.input_dtype(8) != DType::kInt32)
      c.fail("the bias B is " + std::string(dtype_name(c.input_dtype(8))) + ", not int32");
    bias = c.input(8);
  }
  Expr accumulator = integer_convolution(c, 0, 2, 3, 5, bias);
  int64_t rank = tensor_type_of(accumulator).ndim();
  Granularity per_channel{c.input_shape(3)[0], "per output channel", ""};
  Expr factor = requantize_factor(c, 1, 4, 6, per_channel, 1, rank);
  set_single_output(c, requantized(c, accumulator, factor, 6));
}

}  // namespace

void register_quant_converters() {
  add_onnx_converter("QuantizeLinear", {10, 13, 19, 21},
                     {{10, [](NodeContext& c) { convert_quantize(c, {}); }},
                      {13, [](NodeContext& c) { convert_quantize(c, {.per_axis = true}); }},
                      {19, [](NodeContext& c) { convert_quantize(c, {.per_axis = true, .float16_scale = true}); }},
                      {21, [](NodeContext& c) {
                         convert_quantize(c, {.per_axis = true, .float16_scale = true, .blocks = true});
                       }}});
  add_onnx_converter("DequantizeLinear", {10, 13, 19, 21},
                     {{10, [](NodeContext& c) { convert_dequantize(c, {}); }},
                      {13, [](NodeContext& c) { convert_dequantize(c, {.per_axis = true}); }},
                      {19, [](NodeContext& c) { convert_dequantize(c, {.per_axis = true, .float16_scale = true}); }},
                      {21, [](NodeContext& c) {
                         convert_dequantize(c, {.per_axis = true, .float16_scale = true, .blocks = true});
                       }}});
  add_onnx_converter("DynamicQuantizeLinear", {11}, {{11, convert_dynamic_quantize}});
  add_onnx_converter("MatMulInteger", {10}, {{10, convert_matmul_integer}});
  add_onnx_converter("ConvInteger", {10}, {{10, [](NodeContext& c) {
                       set_single_output(c, integer_convolution(c, 0, 2, 1, 3, Expr()));
                     }}});
  add_onnx_converter("QLinearMatMul", {10, 21}, {{10, convert_qlinear_matmul}});
  add_onnx_converter("QLinearConv", {10}, {{10, convert_qlinear_conv}});
}

}  // namespace switchyard
