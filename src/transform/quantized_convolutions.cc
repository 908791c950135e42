// FuseQDQ: matches the importer's spelling of QuantizeLinear and
// DequantizeLinear around nn.conv2d, nn.dense and matmul, and of
// QLinearConv and QLinearMatMul (frontend/onnx/converters_quant.cc), on the
// original nodes, each intermediate read once, and replaces the quantize by
// one qnn.conv2d or qnn.dense; and moves max pools before dequantizes.
#include "transform/quantized_convolutions.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_map>

#include "ir/functor.h"
#include "op/elementwise_attrs.h"
#include "op/movement_attrs.h"
#include "op/handles.h"
#include "op/quantized_attrs.h"
#include "op/registry.h"
#include "op/window_attrs.h"
#include "transform/quantized_values.h"
#include "transform/read_counting_mutator.h"

namespace switchyard {

namespace {

using namespace quantized_values;

// A quantized tensor's scale and zero point, one each.
struct Quantization {
  double scale = 1;
  int64_t zero_point = 0;
};

class QdqFuser : public ReadCountingMutator {
 public:
  explicit QdqFuser(const Expr& body) : ReadCountingMutator(body) {}

  Expr visit_call(const Call& n) override {
    if (Expr fused = fuse(*n)) return fused;
    if (Expr pooled = pool_before_dequantize(n)) return pooled;
    if (Expr exact = integer_product_in_float(*n)) return exact;
    return ExprMutator::visit_call(n);
  }

 private:
  // dequantize(x) = multiply(subtract?(cast(x, float32), zero_point), scale),
  // one scale and zero point: x and them.
  std::optional<std::pair<Expr, Quantization>> dequantized(const Expr& e) const {
    const CallNode* product = call_of(e, ops::multiply());
    if (!product) return std::nullopt;
    std::optional<double> scale = scalar_constant(product->args[1]);
    Expr shifted = product->args[0];
    if (!scale || !(*scale > 0)) return std::nullopt;
    Quantization q{*scale, 0};
    if (const CallNode* difference = call_of(shifted, ops::subtract())) {
      std::optional<double> zero_point = scalar_constant(difference->args[1]);
      if (!zero_point || !read_once(shifted)) return std::nullopt;
      q.zero_point = int64_t(*zero_point);
      shifted = difference->args[0];
    }
    const CallNode* cast = call_of(shifted, ops::cast());
    if (!cast || !is_int8(dtype_of(cast->args[0])) || dtype_of(shifted) != DType::kFloat32) return std::nullopt;
    return std::pair{cast->args[0], q};
  }

  // dequantize(w) of int8 constant weights, zero point 0 (the importer's
  // subtract of a zero point is gone after SimplifyExpr), one scale or one
  // per output channel along `axis` (its shape then the importer's
  // broadcast: {O, 1, 1, 1} for a convolution's axis 0, {N, 1} for
  // nn.dense's, {N} for a matmul's axis 1): w and one scale per channel.
  std::optional<std::pair<const ConstantNode*, std::vector<double>>> dequantized_weights(const Expr& e, int rank,
                                                                                         int axis) const {
    const CallNode* product = call_of(e, ops::multiply());
    if (!product || !read_once(e)) return std::nullopt;
    const CallNode* cast = call_of(product->args[0], ops::cast());
    const ConstantNode* scale = as<ConstantNode>(product->args[1]);
    if (!cast || !scale || !read_once(product->args[0])) return std::nullopt;
    const ConstantNode* weights = as<ConstantNode>(cast->args[0]);
    if (!weights || weights->data.dtype() != DType::kInt8 || weights->data.ndim() != rank) return std::nullopt;
    int64_t channels = weights->data.shape()[size_t(axis)];
    std::vector<int64_t> along(size_t(rank - axis), 1);
    along[0] = channels;
    const std::vector<int64_t>& shape = scale->data.shape();
    bool per_tensor = scale->data.numel() == 1 && shape.size() <= 1;
    if (!per_tensor && shape != along) return std::nullopt;
    std::vector<double> scales;
    for (int64_t c = 0; c < channels; ++c) {
      double s = scale->data.get_as_double(per_tensor ? 0 : c);
      if (!(s > 0)) return std::nullopt;
      scales.push_back(s);
    }
    return std::pair{weights, scales};
  }

  // The end of a quantize, cast(clip(add?(round(e), zero_point))) to int8
  // or uint8 with the clip at the type's range, each step read once: e,
  // the zero point and the type. Each step passed is added to `steps`.
  struct Rounded {
    Expr operand;
    int64_t zero_point = 0;
    DType dtype;
  };
  std::optional<Rounded> rounded_to_eight_bits(const CallNode& cast, std::vector<Expr>& steps) const {
    DType out = dtype_of(Expr(&cast));
    if (as<OpNode>(cast.op) != ops::cast() || !is_int8(out)) return std::nullopt;
    auto step = [&](const Expr& e, const OpNode* op) -> const CallNode* {
      const CallNode* call = call_of(e, op);
      if (!call || !read_once(e)) return nullptr;
      steps.push_back(e);
      return call;
    };
    const CallNode* clip = step(cast.args[0], ops::clip());
    if (!clip) return std::nullopt;
    ClipAttrs bounds = clip_attrs(*clip->attrs);
    auto [low, high] = eight_bit_range(out);
    if (bounds.a_min != double(low) || bounds.a_max != double(high)) return std::nullopt;
    Rounded r{clip->args[0], 0, out};
    if (const CallNode* sum = step(r.operand, ops::add())) {
      std::optional<double> zero_point = scalar_constant(sum->args[1]);
      if (!zero_point || *zero_point != double(int64_t(*zero_point)) || *zero_point < low || *zero_point > high)
        return std::nullopt;
      r.zero_point = int64_t(*zero_point);
      r.operand = sum->args[0];
    }
    const CallNode* round = step(r.operand, op_get("round").get());
    if (!round) return std::nullopt;
    r.operand = round->args[0];
    return r;
  }

  // quantize(v) = cast(clip(add?(round(divide(v, scale)), zero_point)), int8 or
  // uint8) with the clip at the type's range: v, the quantization and type.
  struct Quantized {
    Expr value;
    Quantization q;
    DType dtype;
  };
  std::optional<Quantized> quantized(const CallNode& cast) const {
    std::vector<Expr> steps;
    std::optional<Rounded> r = rounded_to_eight_bits(cast, steps);
    if (!r) return std::nullopt;
    const CallNode* quotient = call_of(r->operand, ops::divide());
    if (!quotient || !read_once(r->operand)) return std::nullopt;
    std::optional<double> scale = scalar_constant(quotient->args[1]);
    if (!scale || !(*scale > 0) || dtype_of(quotient->args[0]) != DType::kFloat32) return std::nullopt;
    return Quantized{quotient->args[0], {*scale, r->zero_point}, r->dtype};
  }

  // max_pool2d(dequantize(x)) as dequantize(max_pool2d(x)): a dequantize
  // with a positive scale is non-decreasing, so the largest of a window's
  // dequantized values is the dequantized largest, exactly; the pool then
  // reads and writes 8-bit values (a quarter of the bytes) and a quantize
  // after it meets a dequantize of its own. Only where every window holds
  // an element of the image: a window of padding alone is the lowest
  // float (-inf) pooled from floats, the lowest 8-bit value pooled from x.
  // Null where it does not apply.
  Expr pool_before_dequantize(const Call& pool) {
    if (as<OpNode>(pool->op) != ops::max_pool2d() || pool->virtual_device()->kind() != DeviceKind::kCPU) return Expr();
    std::optional<std::pair<Expr, Quantization>> x = dequantized(pool->args[0]);
    const WindowAttrs w = window_attrs(*pool);
    if (!x || w.data_layout != "NCHW" || !every_window_reads_the_image(*pool, w)) return Expr();
    // The dequantize's calls, outermost first (multiply, subtract?, cast),
    // each read by the next alone and placed with the pool.
    std::vector<Call> steps{downcast<CallNode>(pool->args[0])};
    while (as<OpNode>(steps.back()->op) != ops::cast()) steps.push_back(downcast<CallNode>(steps.back()->args[0]));
    for (const Call& step : steps)
      if (!read_once(step) || step->virtual_device() != pool->virtual_device()) return Expr();
    Expr value = with_fields(pool, {.args = std::vector<Expr>{mutate(x->first)}});
    for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
      std::vector<Expr> args = (*step)->args;
      args[0] = value;
      value = with_fields(*step, {.args = std::move(args), .virtual_device = pool->virtual_device()});
    }
    return value;
  }

  // An int32 matmul of 8-bit data (less a zero point, maybe computed at
  // run time: dynamic quantization's MatMulInteger) by constant weights, as
  // float32 matmuls, exactly: every product and every partial sum of up to
  // `chunk` of them is an integer below 2^24, which float32 holds whatever
  // the order of the sums, so a float32 product of K-chunks that short is
  // the exact integer; the chunks' products are summed in int32. The int32
  // matmul ran as a generated loop (a 128x768 by 768x768 one: 89 ms); the
  // float32 ones are the library's. Null where it does not apply.
  Expr integer_product_in_float(const CallNode& product) {
    if (as<OpNode>(product.op) != ops::matmul() || dtype_of(Expr(&product)) != DType::kInt32 ||
        product.virtual_device()->kind() != DeviceKind::kCPU)
      return Expr();
    const TensorTypeNode* data = as_tensor(product.args[0]->checked_type());
    const ConstantNode* weights = as<ConstantNode>(product.args[1]);
    if (!data || !data->is_static() || data->ndim() < 2 || !weights || weights->data.dtype() != DType::kInt32 ||
        weights->data.ndim() != 2)
      return Expr();
    std::optional<int64_t> data_bound = eight_bit_difference_bound(product.args[0]);
    if (!data_bound) return Expr();
    int64_t weights_bound = 0;
    for (int64_t i = 0; i < weights->data.numel(); ++i)
      weights_bound = std::max<int64_t>(weights_bound, std::llabs(int64_t(weights->data.get_as_double(i))));
    const int64_t k_size = data->shape.back(), n_size = weights->data.shape()[1];
    if (weights->data.shape()[0] != k_size || k_size == 0) return Expr();
    const int64_t most = ((int64_t(1) << 24) - 1) / std::max<int64_t>(1, *data_bound * weights_bound);
    int64_t chunk = std::min(k_size, most);
    while (chunk > 0 && k_size % chunk != 0) --chunk;
    if (chunk < std::min<int64_t>(k_size, 16)) return Expr();  // too short to pay
    const int64_t chunks = k_size / chunk;
    const VirtualDevice* device = product.virtual_device();
    auto call = [&](const OpNode* op, std::vector<Expr> args, std::vector<std::pair<std::string, AttrValue>> attrs,
                    std::vector<int64_t> shape, DType dtype) {
      return make_op_call(op, std::move(args), std::move(attrs),
                          {.virtual_device = device, .span = product.span(), .checked_type = tensor_type(shape, dtype)});
    };
    std::vector<int64_t> data_shape = data->shape;
    Expr as_float = call(ops::cast(), {mutate(product.args[0])}, {{"dtype", std::string("float32")}}, data_shape,
                         DType::kFloat32);
    NDArray float_weights(DType::kFloat32, {chunks, chunk, n_size});
    for (int64_t i = 0; i < weights->data.numel(); ++i) float_weights.set_from_double(i, weights->data.get_as_double(i));
    const std::vector<int64_t>& result = as_tensor(product.checked_type())->shape;
    if (chunks == 1) {
      float_weights = float_weights.reshaped({k_size, n_size});
      Expr w = make_constant(std::move(float_weights), {.virtual_device = weights->virtual_device(),
                                                        .span = weights->span(),
                                                        .checked_type = tensor_type({k_size, n_size}, DType::kFloat32)});
      Expr p = call(ops::matmul(), {as_float, w}, {}, result, DType::kFloat32);
      return call(ops::cast(), {p}, {{"dtype", std::string("int32")}}, result, DType::kInt32);
    }
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < data_shape.size(); ++d) rows *= data_shape[d];
    Expr split = call(ops::reshape(), {as_float}, attr_entries(ReshapeAttrs{{rows, chunks, chunk}}),
                      {rows, chunks, chunk}, DType::kFloat32);
    Expr by_chunk = call(ops::transpose(), {split}, attr_entries(TransposeAttrs{std::vector<int64_t>{1, 0, 2}}),
                         {chunks, rows, chunk}, DType::kFloat32);
    Expr w = make_constant(std::move(float_weights),
                           {.virtual_device = weights->virtual_device(), .span = weights->span(),
                            .checked_type = tensor_type({chunks, chunk, n_size}, DType::kFloat32)});
    Expr partial = call(ops::matmul(), {by_chunk, w}, {}, {chunks, rows, n_size}, DType::kFloat32);
    Expr exact = call(ops::cast(), {partial}, {{"dtype", std::string("int32")}}, {chunks, rows, n_size}, DType::kInt32);
    Expr summed = call(ops::sum(), {exact}, {{"axis", std::vector<int64_t>{0}}}, {rows, n_size}, DType::kInt32);
    return call(ops::reshape(), {summed}, attr_entries(ReshapeAttrs{result}), result, DType::kInt32);
  }

  // The largest |value| of `e` when it is an 8-bit value cast to int32,
  // less nothing, an integer constant or another such cast of the same
  // type; nullopt otherwise.
  static std::optional<int64_t> eight_bit_difference_bound(const Expr& e) {
    auto widened = [](const Expr& v) -> std::optional<DType> {
      const CallNode* c = call_of(v, ops::cast());
      if (!c || dtype_of(v) != DType::kInt32 || !is_int8(dtype_of(c->args[0]))) return std::nullopt;
      return dtype_of(c->args[0]);
    };
    if (std::optional<DType> t = widened(e)) return std::max(-eight_bit_range(*t).first, eight_bit_range(*t).second);
    const CallNode* difference = call_of(e, ops::subtract());
    if (!difference) return std::nullopt;
    std::optional<DType> left = widened(difference->args[0]);
    if (!left) return std::nullopt;
    auto [low, high] = eight_bit_range(*left);
    if (std::optional<DType> right = widened(difference->args[1]); right && *right == *left) return high - low;
    std::optional<double> constant = scalar_constant(difference->args[1]);
    if (!constant || *constant != double(int64_t(*constant)) || std::abs(*constant) > 1e6) return std::nullopt;
    return std::max(std::llabs(low - int64_t(*constant)), std::llabs(high - int64_t(*constant)));
  }

  static bool every_window_reads_the_image(const CallNode& pool, const WindowAttrs& w) {
    const TensorTypeNode* in = as_tensor(pool.args[0]->checked_type());
    const TensorTypeNode* out = as_tensor(pool.checked_type());
    if (!in || !out || !in->is_static() || !out->is_static() || in->ndim() != 4) return false;
    auto reads = [](int64_t extent, int64_t before, int64_t window, int64_t stride, int64_t dilation, int64_t count) {
      for (int64_t o = 0; o < count; ++o) {
        bool inside = false;
        for (int64_t k = 0; k < window && !inside; ++k) {
          int64_t at = o * stride - before + k * dilation;
          inside = at >= 0 && at < extent;
        }
        if (!inside) return false;
      }
      return true;
    };
    return reads(in->shape[2], w.padding.top, w.pool_h, w.stride_h, w.dilation_h, out->shape[2]) &&
           reads(in->shape[3], w.padding.left, w.pool_w, w.stride_w, w.dilation_w, out->shape[3]);
  }

  // A QLinearConv or QLinearMatMul as the importer spells it
  // (frontend/onnx/converters_quant.cc):
  //
  //   cast(clip(add?(round(multiply(cast(nn.bias_add?(nn.conv2d(subtract?(cast(x, int32), x_zero_point),
  //        w), b), float32), factor)), y_zero_point)), int8 or uint8)
  //
  // or matmul(..., w) for nn.conv2d, without a bias. x int8 or uint8 with
  // one zero point, w an int32 constant whose values fit int8 (the weights
  // less their zero point), b an int32 constant vector, factor x_scale *
  // w_scale[o] / y_scale: one positive float32, or one per output channel
  // (a matmul's column). As qnn.conv2d or qnn.dense (of x's rows) of w as
  // int8, b in the accumulator's units already; the rounding of halves is
  // the int8 operators' (oneDNN's), within one quantum of ONNX's. Null
  // where it does not apply.
  Expr qlinear_product(const CallNode& cast) {
    if (cast.virtual_device()->kind() != DeviceKind::kCPU) return Expr();
    std::vector<Expr> spelled;
    std::optional<Rounded> rounded = rounded_to_eight_bits(cast, spelled);
    if (!rounded) return Expr();
    const DType out = rounded->dtype;
    const int64_t y_zero_point = rounded->zero_point;
    auto step = [&](const Expr& e, const OpNode* op) -> const CallNode* {
      const CallNode* call = call_of(e, op);
      if (!call || !read_once(e)) return nullptr;
      spelled.push_back(e);
      return call;
    };
    const CallNode* scaled = step(rounded->operand, ops::multiply());
    const CallNode* to_float = scaled ? step(scaled->args[0], ops::cast()) : nullptr;
    const ConstantNode* factor = scaled ? as<ConstantNode>(scaled->args[1]) : nullptr;
    if (!to_float || !factor || dtype_of(scaled->args[0]) != DType::kFloat32 ||
        dtype_of(to_float->args[0]) != DType::kInt32)
      return Expr();
    Expr accumulator = to_float->args[0];
    const ConstantNode* bias = nullptr;
    if (const CallNode* bias_add = step(accumulator, ops::bias_add())) {
      bias = as<ConstantNode>(bias_add->args[1]);
      if (!bias || bias->data.dtype() != DType::kInt32 || bias->data.ndim() != 1 ||
          bias_add->attrs->get_int("axis") != 1)
        return Expr();
      accumulator = bias_add->args[0];
    }
    const CallNode* conv = call_of(accumulator, ops::conv2d());
    const CallNode* matmul = call_of(accumulator, ops::matmul());
    const CallNode* product = step(accumulator, conv ? ops::conv2d() : ops::matmul());
    if (!product || (matmul && bias)) return Expr();
    const ConstantNode* weights = as<ConstantNode>(product->args[1]);
    if (!weights || weights->data.dtype() != DType::kInt32 || weights->data.ndim() != (conv ? 4 : 2)) return Expr();
    WindowAttrs window;
    if (conv) {
      window = window_attrs(*conv);
      if (window.data_layout != "NCHW" || window.kernel_layout != "OIHW") return Expr();
    }
    // x: cast(x, int32), less its zero point.
    Expr shifted = product->args[0];
    int64_t x_zero_point = 0;
    if (const CallNode* difference = step(shifted, ops::subtract())) {
      std::optional<double> zero_point = scalar_constant(difference->args[1]);
      if (!zero_point || *zero_point != double(int64_t(*zero_point))) return Expr();
      x_zero_point = int64_t(*zero_point);
      shifted = difference->args[0];
    }
    const CallNode* widened = step(shifted, ops::cast());
    if (!widened || !is_int8(dtype_of(widened->args[0])) || dtype_of(shifted) != DType::kInt32) return Expr();
    const DType x_dtype = dtype_of(widened->args[0]);
    if (x_zero_point < eight_bit_range(x_dtype).first || x_zero_point > eight_bit_range(x_dtype).second) return Expr();
    const TensorTypeNode* data = as_tensor(widened->args[0]->checked_type());
    if (!data || !data->is_static() || (matmul && data->ndim() < 2)) return Expr();
    for (const Expr& e : spelled)
      if (e->virtual_device() != cast.virtual_device()) return Expr();
    // The weights as int8 (a matmul's (K, N) transposed to qnn.dense's (N, K)),
    // and the factor per output channel (a convolution's {O, 1, 1}, a matmul's {N}).
    const NDArray& w = weights->data;
    const int64_t channels = conv ? w.shape()[0] : w.shape()[1];
    const std::vector<int64_t> weights_shape = conv ? w.shape() : std::vector<int64_t>{channels, w.shape()[0]};
    NDArray w8(DType::kInt8, weights_shape);
    for (int64_t i = 0; i < w.numel(); ++i) {
      double v = w.get_as_double(i);
      if (v < -128 || v > 127) return Expr();
      w8.set_from_double(conv ? i : i % channels * w.shape()[0] + i / channels, v);
    }
    const std::vector<int64_t> per_channel_shape = conv ? std::vector<int64_t>{channels, 1, 1} : std::vector<int64_t>{channels};
    const bool per_tensor = factor->data.numel() == 1;
    if (!per_tensor && factor->data.shape() != per_channel_shape) return Expr();
    if (bias && bias->data.shape() != std::vector<int64_t>{channels}) return Expr();
    QuantizedAttrs quantized{.input_zero_point = x_zero_point, .output_zero_point = y_zero_point, .out_dtype = out};
    NDArray bias_units(DType::kFloat32, {channels});
    for (int64_t o = 0; o < channels; ++o) {
      double f = factor->data.get_as_double(per_tensor ? 0 : o);
      if (!(f > 0) || !std::isfinite(f)) return Expr();
      quantized.output_scales.push_back(float(f));
      bias_units.set_from_double(o, bias ? bias->data.get_as_double(o) : 0.0);
    }
    Expr weights8 = make_constant(std::move(w8), {.virtual_device = weights->virtual_device(), .span = weights->span(),
                                                  .checked_type = tensor_type(weights_shape, DType::kInt8)});
    Expr bias_arg = make_constant(std::move(bias_units), {.virtual_device = cast.virtual_device(), .span = cast.span(),
                                                          .checked_type = tensor_type({channels}, DType::kFloat32)});
    std::vector<std::pair<std::string, AttrValue>> attrs;
    if (conv)
      attrs = {{"strides", std::vector<int64_t>{window.stride_h, window.stride_w}},
               {"padding", std::vector<int64_t>{window.padding.top, window.padding.left, window.padding.bottom,
                                                window.padding.right}},
               {"dilation", std::vector<int64_t>{window.dilation_h, window.dilation_w}},
               {"groups", window.groups}};
    for (auto& entry : attr_entries(quantized)) attrs.push_back(std::move(entry));
    if (conv)
      return make_op_call(ops::quantized_conv2d(), {mutate(widened->args[0]), weights8, bias_arg}, std::move(attrs),
                          {.checked_type = cast.checked_type()});
    return rows_product(cast, mutate(widened->args[0]), weights8, bias_arg, std::move(attrs));
  }

  // qnn.dense of `x`'s rows: x (..., M, K) reshaped to (rows, K) and the
  // (rows, N) result to the quantize's (..., M, N) where x has more than two
  // dimensions (a transformer's (batch, tokens, K) activations).
  Expr rows_product(const CallNode& cast, const Expr& x, const Expr& weights, const Expr& bias,
                    std::vector<std::pair<std::string, AttrValue>> attrs) {
    const int64_t n_size = as_tensor(cast.checked_type())->shape.back();
    Expr rows = as_rows(cast, x);
    Expr product = make_op_call(ops::quantized_dense(), {rows, weights, bias}, std::move(attrs),
                                {.virtual_device = cast.virtual_device(), .span = cast.span(),
                                 .checked_type = tensor_type({as_tensor(rows->checked_type())->shape[0], n_size}, dtype_of(Expr(&cast)))});
    return as_quantized_shape(cast, product);
  }

  // `x` (..., K) as (rows, K): itself when 2-d.
  static Expr as_rows(const CallNode& cast, const Expr& x) {
    const TensorTypeNode* data = as_tensor(x->checked_type());
    if (data->ndim() == 2) return x;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < data->shape.size(); ++d) rows *= data->shape[d];
    return make_op_call(ops::reshape(), {x}, attr_entries(ReshapeAttrs{{rows, data->shape.back()}}),
                        {.virtual_device = cast.virtual_device(), .span = cast.span(),
                         .checked_type = tensor_type({rows, data->shape.back()}, data->dtype)});
  }

  // A product of rows in the quantize's shape: itself when that is 2-d.
  static Expr as_quantized_shape(const CallNode& cast, const Expr& product) {
    const std::vector<int64_t>& result = as_tensor(cast.checked_type())->shape;
    if (result.size() == 2) return product;
    return make_op_call(ops::reshape(), {product}, attr_entries(ReshapeAttrs{result}),
                        {.virtual_device = cast.virtual_device(), .checked_type = cast.checked_type()});
  }

  // The int8 operator that `cast` (a quantize) computes, or null.
  Expr fuse(const CallNode& cast) {
    if (Expr qlinear = qlinear_product(cast)) return qlinear;
    std::optional<Quantized> y = quantized(cast);
    if (!y || cast.virtual_device()->kind() != DeviceKind::kCPU) return Expr();
    std::vector<Expr> spelled{y->value};
    Expr value = y->value;
    bool relu = false;
    if (const CallNode* r = call_of(value, ops::relu())) {
      if (!read_once(value)) return Expr();
      relu = true;
      value = r->args[0];
      spelled.push_back(value);
    }
    // The bias: nn.bias_add along a convolution's channels, or an add of a
    // vector to a product's rows.
    const ConstantNode* bias = nullptr;
    const CallNode* bias_add = call_of(value, ops::bias_add());
    const CallNode* add = call_of(value, ops::add());
    if (bias_add || add) {
      bias = as<ConstantNode>((bias_add ? bias_add : add)->args[1]);
      if (!bias || !read_once(value) || bias->data.dtype() != DType::kFloat32 || bias->data.ndim() != 1 ||
          (bias_add && bias_add->attrs->get_int("axis") != 1))
        return Expr();
      value = (bias_add ? bias_add : add)->args[0];
      spelled.push_back(value);
    }
    if (!read_once(value)) return Expr();
    for (const Expr& e : spelled)
      if (e->virtual_device() != cast.virtual_device()) return Expr();
    const CallNode* product = as<CallNode>(value);
    if (!product) return Expr();
    const OpNode* op = as<OpNode>(product->op);
    if (op == ops::conv2d() && !add) return convolution(cast, *product, *y, bias, relu);
    if ((op == ops::dense() || op == ops::matmul()) && !bias_add) return dense(cast, *product, *y, bias, relu);
    return Expr();
  }

  Expr convolution(const CallNode& cast, const CallNode& conv, const Quantized& y, const ConstantNode* bias,
                   bool relu) {
    const WindowAttrs window = window_attrs(conv);
    if (window.data_layout != "NCHW" || window.kernel_layout != "OIHW") return Expr();
    std::optional<std::pair<Expr, Quantization>> x = dequantized(conv.args[0]);
    auto w = dequantized_weights(conv.args[1], 4, 0);
    if (!x || !w) return Expr();
    std::vector<std::pair<std::string, AttrValue>> attrs = {
        {"strides", std::vector<int64_t>{window.stride_h, window.stride_w}},
        {"padding", std::vector<int64_t>{window.padding.top, window.padding.left, window.padding.bottom,
                                         window.padding.right}},
        {"dilation", std::vector<int64_t>{window.dilation_h, window.dilation_w}},
        {"groups", window.groups}};
    return quantized_call(ops::quantized_conv2d(), cast, *x, Expr(w->first), w->second, y, bias, relu,
                          std::move(attrs));
  }

  // nn.dense (Gemm; weights (N, K), or a transpose of (K, N)) and a matmul
  // of a matrix by (K, N) weights: qnn.dense of (N, K) weights.
  //
  // A matmul of (..., M, K) data (a transformer's (batch, tokens, K)) by
  // (K, N) weights is qnn.dense of the data's rows: the 8-bit data reshaped
  // to (rows, K) and the result back to (..., M, N), which is where the
  // quantize put it.
  Expr dense(const CallNode& cast, const CallNode& product, const Quantized& y, const ConstantNode* bias,
             bool relu) {
    const TensorTypeNode* data = as_tensor(product.args[0]->checked_type());
    const bool matmul = as<OpNode>(product.op) == ops::matmul();
    if (!data || !data->is_static() || data->ndim() < 2 || (data->ndim() > 2 && !matmul)) return Expr();
    std::optional<std::pair<Expr, Quantization>> x = dequantized(product.args[0]);
    Expr weights = product.args[1];
    bool columns = as<OpNode>(product.op) == ops::matmul();  // weights (K, N), transposed for qnn.dense
    if (const CallNode* t = call_of(weights, ops::transpose()); t && !columns) {
      if (!read_once(weights)) return Expr();
      weights = t->args[0];
      columns = true;
    }
    auto w = dequantized_weights(weights, 2, columns ? 1 : 0);
    if (!x || !w) return Expr();
    Expr rows = Expr(w->first);
    if (columns) {
      const NDArray& kn = w->first->data;
      int64_t k_size = kn.shape()[0], n_size = kn.shape()[1];
      NDArray nk(DType::kInt8, {n_size, k_size});
      for (int64_t k = 0; k < k_size; ++k)
        for (int64_t n = 0; n < n_size; ++n) nk.set_from_double(n * k_size + k, kn.get_as_double(k * n_size + n));
      rows = make_constant(std::move(nk), {.virtual_device = w->first->virtual_device(), .span = w->first->span(),
                                           .checked_type = tensor_type({n_size, k_size}, DType::kInt8)});
    }
    Expr data_rows = as_rows(cast, mutate(x->first));
    const int64_t n_size = as_tensor(rows->checked_type())->shape[0];
    Expr product2d = quantized_call(ops::quantized_dense(), cast, {data_rows, x->second}, rows, w->second, y, bias,
                                    relu, {}, tensor_type({as_tensor(data_rows->checked_type())->shape[0], n_size}, y.dtype),
                                    /*data_ready=*/true);
    return product2d ? as_quantized_shape(cast, product2d) : Expr();
  }

  // The int8 operator: the accumulator of x's and w's integers, times
  // x_scale * w_scale[o], is the float product, so the bias goes in the
  // accumulator's units and the output's scale divides.
  // `data_ready`: x's expression is already mutated (built here); the
  // call's type is `result_type`, or the quantize's.
  Expr quantized_call(const OpNode* op, const CallNode& cast, const std::pair<Expr, Quantization>& x,
                      const Expr& weights, const std::vector<double>& weight_scales, const Quantized& y,
                      const ConstantNode* bias, bool relu, std::vector<std::pair<std::string, AttrValue>> attrs,
                      std::optional<Type> result_type = std::nullopt, bool data_ready = false) {
    int64_t channels = int64_t(weight_scales.size());
    if (bias && bias->data.shape() != std::vector<int64_t>{channels}) return Expr();
    NDArray bias_units(DType::kFloat32, {channels});
    QuantizedAttrs quantized{.input_zero_point = x.second.zero_point,
                             .output_zero_point = y.q.zero_point,
                             .out_dtype = y.dtype,
                             .relu = relu};
    for (int64_t o = 0; o < channels; ++o) {
      double unit = x.second.scale * weight_scales[size_t(o)];
      bias_units.set_from_double(o, bias ? bias->data.get_as_double(o) / unit : 0.0);
      quantized.output_scales.push_back(float(unit / y.q.scale));
    }
    // A new constant is placed explicitly: the mutator places only the call
    // that replaces the quantize.
    Expr bias_arg = make_constant(std::move(bias_units), {.virtual_device = cast.virtual_device(), .span = cast.span(),
                                                          .checked_type = tensor_type({channels}, DType::kFloat32)});
    for (auto& entry : attr_entries(quantized)) attrs.push_back(std::move(entry));
    return make_op_call(op, {data_ready ? x.first : mutate(x.first), weights, bias_arg}, std::move(attrs),
                        {.virtual_device = cast.virtual_device(), .checked_type = result_type.value_or(cast.checked_type())});
  }

};

}  // namespace

Pass FuseQDQ() { return function_mutator_pass<QdqFuser>("FuseQDQ"); }

}  // namespace switchyard
