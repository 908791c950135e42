// Converters of ONNX's neural-network operators: convolution, matrix
// products, pools, normalisations, softmax, losses and recurrent layers.
#include <numeric>
#include <optional>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/window_attrs.h"

namespace switchyard {

namespace {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

// The spatial dimensions of an (N, C, spatial...) shape.
std::vector<int64_t> spatial_dims(NodeContext& c, const std::vector<int64_t>& shape, const std::string& what) {
  if (shape.size() < 3) c.fail(what + " has shape " + shape_to_string(shape) + ", not (N, C, spatial...)");
  return {shape.begin() + 2, shape.end()};
}

// Per-channel values (C,) shaped to broadcast against (N, C, ...) of `rank`.
Expr channel_broadcast(NodeContext& c, const Expr& v, int rank) {
  std::vector<int64_t> shape{tensor_type_of(v).numel()};
  shape.resize(size_t(std::max(rank - 1, 1)), 1);
  return c.call("reshape", {v}, {{"newshape", shape}});
}

// The axes [from, rank) as a list.
std::vector<int64_t> axes_from(int64_t from, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = from; a < rank; ++a) axes.push_back(a);
  return axes;
}

void require_float(NodeContext& c, size_t i) {
  if (!dtype_is_float(c.input_dtype(i))) c.fail(std::string("needs a floating-point input, got ") + dtype_name(c.input_dtype(i)));
}

void convert_conv(NodeContext& c) {
  int rank = c.input_type(0).ndim();
  const std::vector<int64_t>& w_shape = c.input_shape(1);
  if (rank != 3 && rank != 4) c.fail("only 1-D and 2-D convolutions are supported");
  if (int(w_shape.size()) != rank) c.fail("the weight's rank " + std::to_string(w_shape.size()) + " is not the input's " + std::to_string(rank));
  Window2d w = read_window(c, spatial_dims(c, c.input_shape(0), "the input"), spatial_dims(c, w_shape, "the weight"));
  int64_t groups = c.attr_int("group", 1);
  Expr weight = rank == 3 ? as_nchw(c, c.input(1)) : c.input(1);
  Expr y = c.call("nn.conv2d", {as_nchw(c, c.input(0)), weight},
                  {{"strides", w.strides}, {"padding", w.padding}, {"dilation", w.dilations}, {"groups", groups}});
  if (c.has_input(2)) y = c.call("nn.bias_add", {y, c.input(2)}, {{"axis", int64_t(1)}});
  set_single_output(c, from_nchw(c, y, rank));
}

void convert_pool(NodeContext& c, const std::string& op) {
  int rank = c.input_type(0).ndim();
  Window2d w = read_window(c, spatial_dims(c, c.input_shape(0), "the input"), {});
  AttrList attrs{{"pool_size", w.kernel}, {"strides", w.strides}, {"padding", w.padding},
                 {"ceil_mode", c.attr_int("ceil_mode", 0) != 0}};
  if (op == "nn.max_pool2d") {
    attrs.push_back({"dilation", w.dilations});
    if (c.attr_int("storage_order", 0) != 0) c.fail("storage_order=1 is not supported");
    if (c.output_used(1)) c.fail("the Indices output is not supported");
  } else {
    if (w.dilations != std::vector<int64_t>{1, 1}) c.fail("dilated average pooling is not supported");
    attrs.push_back({"count_include_pad", c.attr_int("count_include_pad", 0) != 0});
  }
  set_single_output(c, from_nchw(c, c.call(op, {as_nchw(c, c.input(0))}, attrs), rank));
}

void convert_global_pool(NodeContext& c, const std::string& reduce) {
  int rank = c.input_type(0).ndim();
  if (rank < 3) c.fail("expects an (N, C, ...) input");
  if (rank == 4 && reduce == "mean") {
    set_single_output(c, c.call("nn.global_avg_pool2d", {c.input(0)}));
    return;
  }
  set_single_output(c, c.call(reduce, {c.input(0)}, {{"axis", axes_from(2, rank)}, {"keepdims", true}}));
}

void convert_gemm(NodeContext& c) {
  if (c.input_type(0).ndim() != 2 || c.input_type(1).ndim() != 2) c.fail("A and B must be 2-D");
  DType t = c.input_dtype(0);
  Expr a = c.input(0), b = c.input(1);
  if (c.attr_int("transA", 0)) a = c.call("transpose", {a});
  if (!c.attr_int("transB", 0)) b = c.call("transpose", {b});  // nn.dense takes (N, K)
  double alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  Expr y = c.call("nn.dense", {a, b});
  if (alpha != 1.0) y = c.call("multiply", {y, c.scalar(alpha, t)});
  if (c.has_input(2) && beta != 0.0) {
    Expr bias = c.input(2);
    if (beta != 1.0) bias = c.call("multiply", {bias, c.scalar(beta, t)});
    y = c.call("add", {y, bias});
  }
  set_single_output(c, y);
}

void convert_batch_norm(NodeContext& c) {
  if (c.attr_int("training_mode", 0) != 0) c.fail("training_mode=1 is not supported (inference only)");
  c.attr_float("momentum", 0.9f);  // a training parameter: no effect in inference
  for (size_t i = 1; i < c.output_count(); ++i)
    if (c.output_used(i)) c.fail("the running-statistics outputs are not supported (inference only)");
  int rank = c.input_type(0).ndim();
  if (rank < 2) c.fail("expects an (N, C, ...) input");
  DType t = c.input_dtype(0);
  double epsilon = c.attr_float("epsilon", 1e-5f);
  // y = x * s + (b - mean * s) with s = scale / sqrt(var + epsilon): with
  // constant statistics both factors fold to per-channel constants.
  Expr s = c.call("multiply", {c.input(1), c.call("rsqrt", {c.call("add", {c.input(4), c.scalar(epsilon, t)})})});
  Expr shift = c.call("subtract", {c.input(2), c.call("multiply", {c.input(3), s})});
  Expr y = c.call("multiply", {c.input(0), channel_broadcast(c, s, rank)});
  set_single_output(c, c.call("add", {y, channel_broadcast(c, shift, rank)}));
}

Expr cast_to(NodeContext& c, const Expr& x, DType dtype) {
  if (tensor_type_of(x).dtype == dtype) return x;
  return c.call("cast", {x}, {{"dtype", std::string(dtype_name(dtype))}});
}

struct Normalized {
  Expr value;     // (x - mean) / sqrt(variance + epsilon)
  Expr mean;      // the statistics, reduced axes kept as dimensions of 1
  Expr inv_std;   // 1 / sqrt(variance + epsilon)
};

// x normalized over `axes`.
Normalized normalize_over(NodeContext& c, const Expr& x, const std::vector<int64_t>& axes, double epsilon) {
  DType t = tensor_type_of(x).dtype;
  AttrList reduce{{"axis", axes}, {"keepdims", true}};
  Normalized n;
  n.mean = c.call("mean", {x}, reduce);
  Expr centered = c.call("subtract", {x, n.mean});
  Expr variance = c.call("mean", {c.call("multiply", {centered, centered})}, reduce);
  n.inv_std = c.call("rsqrt", {c.call("add", {variance, c.scalar(epsilon, t)})});
  n.value = c.call("multiply", {centered, n.inv_std});
  return n;
}

void convert_instance_norm(NodeContext& c) {
  int rank = c.input_type(0).ndim();
  if (rank < 3) c.fail("expects an (N, C, ...) input");
  Expr y = normalize_over(c, c.input(0), axes_from(2, rank), c.attr_float("epsilon", 1e-5f)).value;
  y = c.call("multiply", {y, channel_broadcast(c, c.input(1), rank)});
  set_single_output(c, c.call("add", {y, channel_broadcast(c, c.input(2), rank)}));
}

void convert_layer_norm(NodeContext& c) {
  int64_t rank = c.input_type(0).ndim();
  int64_t axis = normalize_axis(c, c.attr_int("axis", -1), rank);
  double epsilon = c.attr_float("epsilon", 1e-5f);
  if (c.attr_int("stash_type", 1) != 1) c.fail("only stash_type=1 (statistics in float32) is supported");
  bool statistics = c.output_used(1) || c.output_used(2);
  DType t = c.input_dtype(0);
  const std::vector<int64_t>& shape = c.input_shape(0);
  int64_t width = shape.back();
  bool per_last_axis = axis == rank - 1 && c.input_type(1).numel() == width &&
                       (!c.has_input(2) || c.input_type(2).numel() == width);
  if (per_last_axis && !statistics) {
    Expr gamma = c.call("reshape", {c.input(1)}, {{"newshape", std::vector<int64_t>{width}}});
    Expr beta = c.has_input(2) ? c.call("reshape", {c.input(2)}, {{"newshape", std::vector<int64_t>{width}}})
                               : c.constant(NDArray(t, {width}));
    set_single_output(c, c.call("nn.layer_norm", {c.input(0), gamma, beta}, {{"axis", int64_t(-1)}, {"epsilon", epsilon}}));
    return;
  }
  // As ONNX's function body: the statistics (outputs Mean and InvStdDev)
  // in float32, the normalized value cast back before the scale and bias.
  Normalized n = normalize_over(c, cast_to(c, c.input(0), DType::kFloat32), axes_from(axis, rank), epsilon);
  Expr y = c.call("multiply", {cast_to(c, n.value, t), c.input(1)});
  if (c.has_input(2)) y = c.call("add", {y, c.input(2)});
  c.set_output(0, y);
  c.set_output(1, n.mean);
  c.set_output(2, n.inv_std);
}

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over axes.
void convert_mean_variance_norm(NodeContext& c) {
  require_float(c, 0);
  int64_t rank = c.input_type(0).ndim();
  std::vector<int64_t> axes = c.attr_ints("axes", std::vector<int64_t>{0, 2, 3});
  for (int64_t& a : axes) a = normalize_axis(c, a, rank);
  Expr x = c.input(0);
  DType t = c.input_dtype(0);
  AttrList reduce{{"axis", axes}, {"keepdims", true}};
  Expr centered = c.call("subtract", {x, c.call("mean", {x}, reduce)});
  Expr deviation = c.call("sqrt", {c.call("mean", {c.call("multiply", {centered, centered})}, reduce)});
  set_single_output(c, c.call("divide", {centered, c.call("add", {deviation, c.scalar(1e-9, t)})}));
}

// LRN: x / (bias + alpha / size * sum of squares over `size` neighbouring
// channels)^beta; the window sum is an average pool over the channels of
// an (N, 1, C, rest) view, padded with zeros, times the window size.
void convert_lrn(NodeContext& c) {
  require_float(c, 0);
  const std::vector<int64_t>& in = c.input_shape(0);
  if (in.size() < 2) c.fail("expects an (N, C, ...) input");
  int64_t size = c.attr_int("size");
  if (size <= 0) c.fail("size must be positive");
  double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.0f);
  DType t = c.input_dtype(0);
  Expr x = c.input(0);
  int64_t rest = 1;
  for (size_t i = 2; i < in.size(); ++i) rest *= in[i];
  Expr squares = c.call("reshape", {c.call("multiply", {x, x})}, {{"newshape", std::vector<int64_t>{in[0], 1, in[1], rest}}});
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Expr window = c.call("nn.avg_pool2d", {squares},
                       {{"pool_size", std::vector<int64_t>{size, 1}},
                        {"padding", std::vector<int64_t>{before, 0, after, 0}},
                        {"count_include_pad", true}});
  window = c.call("reshape", {window}, {{"newshape", in}});
  // avg * size * alpha / size = avg * alpha
  Expr base = c.call("add", {c.call("multiply", {window, c.scalar(alpha, t)}), c.scalar(bias, t)});
  set_single_output(c, c.call("divide", {x, c.call("power", {base, c.scalar(beta, t)})}));
}

void convert_hardmax(NodeContext& c) {
  require_float(c, 0);
  const std::vector<int64_t>& in = c.input_shape(0);
  int64_t axis = normalize_axis(c, c.attr_int("axis", -1), int64_t(in.size()));
  Expr index = arg_extreme(c, c.input(0), axis, true, false);
  std::vector<int64_t> iota_shape(in.size(), 1);
  iota_shape[size_t(axis)] = in[size_t(axis)];
  NDArray iota(DType::kInt64, iota_shape);
  std::iota(iota.as<int64_t>(), iota.as<int64_t>() + iota.numel(), int64_t(0));
  set_single_output(c, cast_to(c, c.call("equal", {c.constant(std::move(iota)), index}), c.input_dtype(0)));
}

// NegativeLogLikelihoodLoss of log-probabilities (N, C, d...) at the target
// classes (N, d...): -input[n, target, d...] * weight[target], zero where
// the target is ignore_index; "mean" divides by the weights' sum.
Expr nll_loss(NodeContext& c, const Expr& input, const Expr& target, const Expr& weight) {
  std::vector<int64_t> in = tensor_type_of(input).shape;
  const TensorTypeNode& target_type = tensor_type_of(target);
  DType t = tensor_type_of(input).dtype;
  if (!dtype_is_float(t)) c.fail("needs a floating-point input");
  if (in.size() < 2) c.fail("expects an (N, C, ...) input");
  std::vector<int64_t> index_shape = in;
  index_shape[1] = 1;
  std::vector<int64_t> expected_target = in;
  expected_target.erase(expected_target.begin() + 1);
  if (target_type.shape != expected_target || !dtype_is_int(target_type.dtype))
    c.fail("the target must be integers of shape " + shape_to_string(expected_target));
  std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    c.fail("reduction '" + reduction + "' is not one of none, sum, mean");
  Expr classes = cast_to(c, target, DType::kInt64);
  Expr kept;  // bool: not ignored
  if (c.has_attr("ignore_index")) {
    Expr ignored = c.call("equal", {classes, c.scalar(double(c.attr_int("ignore_index")), DType::kInt64)});
    kept = c.call("equal", {ignored, c.scalar(0, DType::kBool)});
    classes = c.call("where", {ignored, c.scalar(0, DType::kInt64), classes});
  }
  Expr picked = gather_elements(c, input, c.call("reshape", {classes}, {{"newshape", index_shape}}), 1);
  Expr loss = c.call("negative", {c.call("reshape", {picked}, {{"newshape", expected_target}})});
  Expr weights;  // per element, when not all 1
  if (weight) weights = c.call("take", {weight, classes}, {{"axis", int64_t(0)}, {"mode", std::string("clip")}});
  if (kept) weights = weight ? c.call("where", {kept, weights, c.scalar(0, t)}) : cast_to(c, kept, t);
  if (weights) loss = c.call("multiply", {loss, weights});
  if (reduction == "none") return loss;
  AttrList all{{"axis", AttrValue()}, {"keepdims", false}};
  Expr total = c.call("sum", {loss}, all);
  if (reduction == "sum") return total;
  return weights ? c.call("divide", {total, c.call("sum", {weights}, all)}) : c.call("mean", {loss}, all);
}

Expr log_softmax(NodeContext& c, const Expr& x, int64_t axis) {
  AttrList reduce{{"axis", std::vector<int64_t>{axis}}, {"keepdims", true}};
  Expr shifted = c.call("subtract", {x, c.call("max", {x}, reduce)});
  Expr log_sum = c.call("log", {c.call("sum", {c.call("exp", {shifted})}, reduce)});
  return c.call("subtract", {shifted, log_sum});
}

void convert_log_softmax(NodeContext& c) {
  int64_t axis = normalize_axis(c, c.attr_int("axis", -1), c.input_type(0).ndim());
  set_single_output(c, log_softmax(c, c.input(0), axis));
}

// Recurrent layers (RNN, GRU, LSTM), unrolled over their static sequence
// length: per direction, the input projection of every step at once, then
// the steps one after another, each a few dense products and activations.
class Recurrent {
 public:
  Recurrent(NodeContext& c, std::string op) : c_(c), op_(std::move(op)) {
    require_float(c, 0);
    gates_ = op_ == "LSTM" ? 4 : op_ == "GRU" ? 3 : 1;
    hidden_ = c.attr_int("hidden_size");
    std::string direction = c.attr_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      c.fail("direction '" + direction + "' is not one of forward, reverse, bidirectional");
    reverse_ = direction == "reverse";
    directions_ = direction == "bidirectional" ? 2 : 1;
    layout_ = c.attr_int("layout", 0) != 0;
    if (c.has_attr("activation_alpha") || c.has_attr("activation_beta"))
      c.fail("activation_alpha and activation_beta are not supported");
    if (c.has_attr("clip")) clip_ = c.attr_float("clip");
    if (op_ == "GRU") linear_before_reset_ = c.attr_int("linear_before_reset", 0) != 0;
    if (op_ == "LSTM" && c.attr_int("input_forget", 0) != 0) c.fail("input_forget=1 is not supported");
    read_activations();
    dtype_ = c.input_dtype(0);
    x_ = layout_ ? c.call("transpose", {c.input(0)}, {{"axes", std::vector<int64_t>{1, 0, 2}}}) : c.input(0);
    const std::vector<int64_t>& xs = tensor_type_of(x_).shape;
    if (xs.size() != 3) c.fail("X must be 3-D");
    steps_ = xs[0], batch_ = xs[1], features_ = xs[2];
    int64_t gh = gates_ * hidden_;
    expect_shape(1, {directions_, gh, features_}, "W");
    expect_shape(2, {directions_, gh, hidden_}, "R");
    if (c.has_input(3)) expect_shape(3, {directions_, 2 * gh}, "B");
    // Shorter sequences (sequence_lens) hold their state past their end and
    // output zeros there: a mask per step, forward directions only.
    if (c.has_input(4)) {
      const NDArray* lens = c.constant_input(4);
      bool full = lens != nullptr;
      for (int64_t i = 0; lens && i < lens->numel(); ++i) full = full && lens->get_as_double(i) == double(steps_);
      if (!full) {
        if (reverse_ || directions_ == 2) c.fail("sequence_lens with a reverse direction is not supported");
        if (c.input_shape(4) != std::vector<int64_t>{batch_}) c.fail("sequence_lens must hold one length per batch entry");
        lengths_ = reshape(cast_to(c, c.input(4), DType::kInt64), {batch_, 1});
      }
    }
  }

  void convert() {
    std::vector<std::vector<Expr>> outputs;  // [direction][time]
    std::vector<Expr> last_h, last_c;
    for (int64_t d = 0; d < directions_; ++d) {
      outputs.emplace_back(size_t(steps_));
      run_direction(d, outputs.back(), last_h, last_c);
    }
    if (c_.output_used(0)) {
      std::vector<Expr> times;
      for (int64_t t = 0; t < steps_; ++t) {
        std::vector<Expr> per_direction;
        for (int64_t d = 0; d < directions_; ++d)
          per_direction.push_back(reshape(outputs[size_t(d)][size_t(t)], {1, 1, batch_, hidden_}));
        times.push_back(concatenate(per_direction, 1));
      }
      Expr y = concatenate(times, 0);
      c_.set_output(0, layout_ ? c_.call("transpose", {y}, {{"axes", std::vector<int64_t>{2, 0, 1, 3}}}) : y);
    }
    c_.set_output(1, stack_directions(last_h));
    if (op_ == "LSTM") c_.set_output(2, stack_directions(last_c));
  }

 private:
  void read_activations() {
    std::vector<std::string> defaults = op_ == "LSTM" ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                        : op_ == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                       : std::vector<std::string>{"Tanh"};
    if (c_.has_attr("activations")) {
      for (const auto& a : c_.node().attribute())
        if (a.name() == "activations") activations_.assign(a.strings().begin(), a.strings().end());
      if (activations_.size() != defaults.size() * size_t(directions_))
        c_.fail("activations must name " + std::to_string(defaults.size() * size_t(directions_)) + " functions");
    } else {
      for (int64_t d = 0; d < directions_; ++d) activations_.insert(activations_.end(), defaults.begin(), defaults.end());
    }
    per_direction_ = defaults.size();
  }

  void expect_shape(size_t i, const std::vector<int64_t>& shape, const std::string& name) {
    if (c_.input_shape(i) != shape) c_.fail(name + " must be " + shape_to_string(shape) + ", got " + shape_to_string(c_.input_shape(i)));
  }

  Expr reshape(const Expr& x, std::vector<int64_t> shape) {
    if (tensor_type_of(x).shape == shape) return x;
    return c_.call("reshape", {x}, {{"newshape", std::move(shape)}});
  }
  Expr slice(const Expr& x, int64_t axis, int64_t begin, int64_t end) {
    return c_.call("strided_slice", {x}, {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                          {"axes", std::vector<int64_t>{axis}}});
  }
  Expr concatenate(const std::vector<Expr>& parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : c_.call("concatenate", {c_.tuple(parts)}, {{"axis", axis}});
  }
  Expr gate(const Expr& x, int64_t k) { return slice(x, 1, k * hidden_, (k + 1) * hidden_); }
  Expr add(const Expr& a, const Expr& b) { return b ? c_.call("add", {a, b}) : a; }
  Expr mul(const Expr& a, const Expr& b) { return c_.call("multiply", {a, b}); }
  // The activation (the direction's `k`-th) of a gate's pre-activation, clipped when asked.
  Expr activate(int64_t direction, size_t k, Expr x) {
    if (clip_) x = c_.call("clip", {x}, {{"a_min", -double(*clip_)}, {"a_max", double(*clip_)}});
    const std::string& name = activations_[size_t(direction) * per_direction_ + k];
    if (name == "Sigmoid") return c_.call("sigmoid", {x});
    if (name == "Tanh") return c_.call("tanh", {x});
    if (name == "Relu") return c_.call("nn.relu", {x});
    c_.fail("activation '" + name + "' is not supported (Sigmoid, Tanh, Relu)");
  }
  // Input i's slice for direction d, as `shape`; or null when absent.
  Expr of_direction(size_t i, int64_t d, std::vector<int64_t> shape, bool batch_major = false) {
    if (!c_.has_input(i)) return Expr();
    Expr v = c_.input(i);
    if (batch_major) v = c_.call("transpose", {v}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
    return reshape(slice(v, 0, d, d + 1), std::move(shape));
  }
  Expr stack_directions(const std::vector<Expr>& per_direction) {
    std::vector<Expr> parts;
    for (const Expr& h : per_direction) parts.push_back(reshape(h, {1, batch_, hidden_}));
    Expr y = concatenate(parts, 0);
    return layout_ ? c_.call("transpose", {y}, {{"axes", std::vector<int64_t>{1, 0, 2}}}) : y;
  }

  void run_direction(int64_t d, std::vector<Expr>& outputs, std::vector<Expr>& last_h, std::vector<Expr>& last_c) {
    int64_t gh = gates_ * hidden_;
    Expr w = of_direction(1, d, {gh, features_}), r = of_direction(2, d, {gh, hidden_});
    Expr bias = of_direction(3, d, {2 * gh});
    Expr w_bias = bias ? slice(bias, 0, 0, gh) : Expr(), r_bias = bias ? slice(bias, 0, gh, 2 * gh) : Expr();
    Expr projected = add(c_.call("nn.dense", {reshape(x_, {steps_ * batch_, features_}), w}), w_bias);
    projected = reshape(projected, {steps_, batch_, gh});
    Expr zeros = c_.constant(NDArray(dtype_, {batch_, hidden_}));
    Expr h = of_direction(5, d, {batch_, hidden_}, layout_);
    if (!h) h = zeros;
    Expr cell, peep_i, peep_o, peep_f;
    if (op_ == "LSTM") {
      cell = of_direction(6, d, {batch_, hidden_}, layout_);
      if (!cell) cell = zeros;
      if (Expr p = of_direction(7, d, {3 * hidden_})) {
        peep_i = slice(p, 0, 0, hidden_), peep_o = slice(p, 0, hidden_, 2 * hidden_);
        peep_f = slice(p, 0, 2 * hidden_, 3 * hidden_);
      }
    }
    bool backwards = reverse_ || d == 1;
    for (int64_t k = 0; k < steps_; ++k) {
      int64_t t = backwards ? steps_ - 1 - k : k;
      Expr xt = reshape(slice(projected, 0, t, t + 1), {batch_, gh});
      Expr previous_h = h, previous_cell = cell;
      Expr hr = add(c_.call("nn.dense", {h, r}), r_bias);
      if (op_ == "RNN") {
        h = activate(d, 0, c_.call("add", {xt, hr}));
      } else if (op_ == "GRU") {  // gates z, r, h
        Expr z = activate(d, 0, c_.call("add", {gate(xt, 0), gate(hr, 0)}));
        Expr reset = activate(d, 0, c_.call("add", {gate(xt, 1), gate(hr, 1)}));
        Expr candidate_in;
        if (linear_before_reset_) {
          candidate_in = mul(reset, gate(hr, 2));
        } else {
          Expr r_h = slice(r, 0, 2 * hidden_, 3 * hidden_);
          candidate_in = add(c_.call("nn.dense", {mul(reset, h), r_h}), r_bias ? gate(reshape(r_bias, {1, gh}), 2) : Expr());
        }
        Expr candidate = activate(d, 1, c_.call("add", {gate(xt, 2), candidate_in}));
        Expr keep = c_.call("subtract", {c_.scalar(1, dtype_), z});
        h = c_.call("add", {mul(keep, candidate), mul(z, h)});
      } else {  // gates i, o, f, c
        Expr sum = c_.call("add", {xt, hr});
        Expr in = activate(d, 0, add(gate(sum, 0), peep_i ? mul(peep_i, cell) : Expr()));
        Expr forget = activate(d, 0, add(gate(sum, 2), peep_f ? mul(peep_f, cell) : Expr()));
        Expr candidate = activate(d, 1, gate(sum, 3));
        cell = c_.call("add", {mul(forget, cell), mul(in, candidate)});
        Expr out = activate(d, 0, add(gate(sum, 1), peep_o ? mul(peep_o, cell) : Expr()));
        h = mul(out, activate(d, 2, cell));
      }
      if (lengths_) {  // steps past a sequence's length keep its state and output zeros
        Expr active = c_.call("less", {c_.scalar(double(t), DType::kInt64), lengths_});
        h = c_.call("where", {active, h, previous_h});
        if (cell) cell = c_.call("where", {active, cell, previous_cell});
        outputs[size_t(t)] = c_.call("where", {active, h, zeros});
      } else {
        outputs[size_t(t)] = h;
      }
    }
    last_h.push_back(h);
    last_c.push_back(cell);
  }

  NodeContext& c_;
  std::string op_;
  int64_t gates_ = 1, hidden_ = 0, directions_ = 1, steps_ = 0, batch_ = 0, features_ = 0;
  bool reverse_ = false, layout_ = false, linear_before_reset_ = false;
  std::optional<float> clip_;
  std::vector<std::string> activations_;
  size_t per_direction_ = 1;
  DType dtype_ = DType::kFloat32;
  Expr x_;
  Expr lengths_;  // (batch, 1) int64, when some sequences are shorter
};

}  // namespace

void register_nn_converters() {
  add_onnx_converter("Conv", convert_conv);
  add_onnx_converter("MatMul", [](NodeContext& c) { set_single_output(c, c.call("matmul", {c.input(0), c.input(1)})); });
  add_onnx_converter("Gemm", convert_gemm);
  add_onnx_converter("MaxPool", [](NodeContext& c) { convert_pool(c, "nn.max_pool2d"); });
  add_onnx_converter("AveragePool", [](NodeContext& c) { convert_pool(c, "nn.avg_pool2d"); });
  add_onnx_converter("GlobalAveragePool", [](NodeContext& c) { convert_global_pool(c, "mean"); });
  add_onnx_converter("GlobalMaxPool", [](NodeContext& c) { convert_global_pool(c, "max"); });
  add_onnx_converter("BatchNormalization", convert_batch_norm);
  add_onnx_converter("InstanceNormalization", convert_instance_norm);
  add_onnx_converter("LayerNormalization", convert_layer_norm);
  add_onnx_converter("Softmax", [](NodeContext& c) {
    int64_t axis = normalize_axis(c, c.attr_int("axis", -1), c.input_type(0).ndim());
    set_single_output(c, c.call("nn.softmax", {c.input(0)}, {{"axis", axis}}));
  });
  add_onnx_converter("LogSoftmax", convert_log_softmax);
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    std::string name = op;
    add_onnx_converter(name, [name](NodeContext& c) { Recurrent(c, name).convert(); });
  }
  add_onnx_converter("MeanVarianceNormalization", convert_mean_variance_norm);
  add_onnx_converter("LRN", convert_lrn);
  add_onnx_converter("Hardmax", convert_hardmax);
  add_onnx_converter("NegativeLogLikelihoodLoss", [](NodeContext& c) {
    set_single_output(c, nll_loss(c, c.input(0), c.input(1), c.has_input(2) ? c.input(2) : Expr()));
  });
  add_onnx_converter("SoftmaxCrossEntropyLoss", [](NodeContext& c) {
    if (c.input_type(0).ndim() < 2) c.fail("expects (N, C, ...) scores");
    Expr log_prob = log_softmax(c, c.input(0), 1);
    c.set_output(0, nll_loss(c, log_prob, c.input(1), c.has_input(2) ? c.input(2) : Expr()));
    c.set_output(1, log_prob);
  });
}

}  // namespace switchyard
