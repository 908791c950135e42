// Converters of ONNX's neural-network operators: convolution, matrix
// products, pools, normalisations, softmax, losses and recurrent layers.
#include <numeric>
#include <optional>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/spatial_windows.h"
#include "frontend/onnx/symbolic_shapes.h"

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

void convert_conv(NodeContext& c) {
  set_single_output(c, onnx_convolution(c, c.input(0), c.input(1), c.has_input(2) ? c.input(2) : Expr()));
}

// What a pool's version has beyond kernel_shape, strides, pads and auto_pad.
struct PoolVersion {
  bool storage_order = false;      // MaxPool from 8 (with the Indices output)
  bool ceil_mode = false;          // from 10
  bool dilations = false;          // MaxPool from 10, AveragePool from 19
  bool count_include_pad = false;  // AveragePool from 7
};

void convert_pool(NodeContext& c, const std::string& op, PoolVersion v) {
  if (c.input_type(0).ndim() < 3)
    c.fail("the input has shape " + dims_to_string(c.input_dims(0)) + ", not (N, C, spatial...)");
  if (c.input_type(0).ndim() > 4) c.input_shape(0);  // 3-D windows reshape the batch: static only
  WindowAxes w = read_window(c, static_dims(c, c.input(0), 2, "the input"), {}, false, v.dilations);
  bool ceil_mode = v.ceil_mode && c.attr_int("ceil_mode", 0) != 0;
  bool count_include_pad = false;
  if (op == "nn.max_pool2d") {
    if (v.storage_order && c.attr_int("storage_order", 0) != 0) c.fail("storage_order=1 is not supported");
    if (v.storage_order && c.output_used(1)) c.fail("the Indices output is not supported");
  } else {
    for (int64_t d : w.dilations)
      if (d != 1) c.fail("dilated average pooling is not supported");
    count_include_pad = v.count_include_pad && c.attr_int("count_include_pad", 0) != 0;
  }
  set_single_output(c, window_pool(c, op, c.input(0), w, ceil_mode, count_include_pad));
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

// Gemm-1 and 6 (`broadcast_attribute`) broadcast C only with broadcast=1.
void convert_gemm(NodeContext& c, bool broadcast_attribute) {
  if (c.input_type(0).ndim() != 2 || c.input_type(1).ndim() != 2) c.fail("A and B must be 2-D");
  bool broadcast = !broadcast_attribute || c.attr_int("broadcast", 0) != 0;
  DType t = c.input_dtype(0);
  Expr a = c.input(0), b = c.input(1);
  if (c.attr_int("transA", 0)) a = c.call("transpose", {a});
  if (!c.attr_int("transB", 0)) b = c.call("transpose", {b});  // nn.dense takes (N, K)
  double alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  Expr y = c.call("nn.dense", {a, b});
  if (c.has_input(2) && !broadcast && c.input_shape(2) != static_shape_of(y))
    c.fail("C's shape " + shape_to_string(c.input_shape(2)) + " is not the product's " +
           shape_to_string(static_shape_of(y)) + ", and Gemm-" + std::to_string(c.op_version()) +
           " broadcasts C only with broadcast=1");
  if (alpha != 1.0) y = c.call("multiply", {y, c.scalar(alpha, t)});
  if (c.has_input(2) && beta != 0.0) {
    Expr bias = c.input(2);
    if (beta != 1.0) bias = c.call("multiply", {bias, c.scalar(beta, t)});
    y = c.call("add", {y, bias});
  }
  set_single_output(c, y);
}

// What a BatchNormalization version has beyond epsilon and momentum.
struct BatchNormVersion {
  bool is_test = false;        // versions 1 and 6: is_test (1 only) and spatial (1 only)
  bool spatial = false;        // version 7 only: spatial=0 gives statistics per (C, D...) element
  bool training_mode = false;  // from 14
};

void convert_batch_norm(NodeContext& c, BatchNormVersion v) {
  if (v.training_mode && c.attr_int("training_mode", 0) != 0) c.fail("training_mode=1 is not supported (inference only)");
  if (v.is_test) {
    ignore_consumed_inputs(c);
    if (c.attr_int("is_test", 0) == 0)
      c.fail("is_test=0 (training: the batch's own statistics) is not supported (inference only: is_test=1)");
    // Version 6's statistics are (C,) whatever `spatial` says, which leaves spatial=0 without a meaning to convert.
    if (c.attr_int("spatial", 1) == 0) c.fail("spatial=0 is not supported (BatchNormalization-" +
                                              std::to_string(c.op_version()) + ": statistics per channel only)");
  }
  bool spatial = !v.spatial || c.attr_int("spatial", 1) != 0;
  c.attr_float("momentum", 0.9f);  // a training parameter: no effect in inference
  for (size_t i = 1; i < c.output_count(); ++i)
    if (c.output_used(i)) c.fail("the running-statistics outputs are not supported (inference only)");
  int rank = c.input_type(0).ndim();
  if (rank < 2) c.fail("expects an (N, C, ...) input");
  DType t = c.input_dtype(0);
  double epsilon = c.attr_float("epsilon", 1e-5f);
  std::vector<int64_t> per_element = spatial ? std::vector<int64_t>{} : static_dims(c, c.input(0), 1, "the input");
  for (size_t i = 1; i <= 4; ++i)
    if (!spatial && c.input_shape(i) != per_element)
      c.fail("with spatial=0, input " + std::to_string(i) + " must have shape " + shape_to_string(per_element) +
             ", got " + shape_to_string(c.input_shape(i)));
  // With spatial=0 the statistics already broadcast against (N, C, D...).
  auto broadcast = [&](const Expr& e) { return spatial ? channel_broadcast(c, e, rank) : e; };
  // y = x * s + (b - mean * s) with s = scale / sqrt(var + epsilon): with
  // constant statistics both factors fold to per-channel constants.
  Expr s = c.call("multiply", {c.input(1), c.call("rsqrt", {c.call("add", {c.input(4), c.scalar(epsilon, t)})})});
  Expr shift = c.call("subtract", {c.input(2), c.call("multiply", {c.input(3), s})});
  Expr y = c.call("multiply", {c.input(0), broadcast(s)});
  set_single_output(c, c.call("add", {y, broadcast(shift)}));
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
  if (rank == 0) c.fail("needs an input of rank 1 or more");
  int64_t width = static_dims(c, c.input(0), size_t(rank - 1), "the input").back();
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

// GroupNormalization: each group of C / num_groups channels normalized
// over its channels and the spatial axes; scale and bias are one per group
// in version 18, one per channel from 21, whose statistics are float32
// (stash_type 1, the only one ONNX defines).
void convert_group_norm(NodeContext& c, bool per_channel) {
  require_float(c, 0);
  const std::vector<int64_t>& in = c.input_shape(0);
  if (in.size() < 2) c.fail("expects an (N, C, ...) input");
  int64_t groups = c.attr_int("num_groups");
  double epsilon = c.attr_float("epsilon", 1e-5f);
  if (per_channel && c.attr_int("stash_type", 1) != 1) c.fail("only stash_type=1 (statistics in float32) is supported");
  int64_t channels = in[1];
  if (groups <= 0 || channels % groups != 0)
    c.fail("num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(channels) + " channels");
  int64_t per_scale = per_channel ? channels : groups;
  for (size_t i = 1; i <= 2; ++i)
    if (c.input_shape(i) != std::vector<int64_t>{per_scale})
      c.fail(std::string(i == 1 ? "scale" : "bias") + " must have shape (" + std::to_string(per_scale) + "), got " +
             shape_to_string(c.input_shape(i)));
  DType t = c.input_dtype(0);
  Expr grouped = reshape_to(c, c.input(0), {in[0], groups, product(in, 1, in.size()) / groups});
  if (per_channel) grouped = cast_to(c, grouped, DType::kFloat32);
  Expr y = cast_to(c, normalize_over(c, grouped, {2}, epsilon).value, t);
  if (!per_channel) {  // (N, G, rest) times (G, 1)
    y = c.call("multiply", {y, reshape_to(c, c.input(1), {groups, 1})});
    return set_single_output(c, reshape_to(c, c.call("add", {y, reshape_to(c, c.input(2), {groups, 1})}), in));
  }
  int rank = int(in.size());
  y = c.call("multiply", {reshape_to(c, y, in), channel_broadcast(c, c.input(1), rank)});
  set_single_output(c, c.call("add", {y, channel_broadcast(c, c.input(2), rank)}));
}

// AffineGrid (opset 20): the sampling grid of theta, (N, 2, 3) or
// (N, 3, 4), over `size`, (N, C, H, W) or (N, C, D, H, W): each position's
// normalized coordinates (x, y[, z], 1) times theta's transpose, the
// coordinates a constant. An axis of n spans [-1, 1] through its end
// pixels' centres with align_corners (an axis of 1 at -1, as ONNX's
// reference has it; PyTorch puts it at 0), through their outer edges
// without.
void convert_affine_grid(NodeContext& c) {
  require_float(c, 0);
  std::vector<int64_t> size = c.constant_ints(1, "size");
  bool align_corners = c.attr_int("align_corners", 0) != 0;
  if (size.size() != 4 && size.size() != 5) c.fail("size must be (N, C, H, W) or (N, C, D, H, W)");
  int64_t dims = int64_t(size.size()) - 2;
  std::vector<int64_t> theta_shape{size[0], dims, dims + 1};
  if (c.input_shape(0) != theta_shape)
    c.fail("theta must have shape " + shape_to_string(theta_shape) + ", got " + shape_to_string(c.input_shape(0)));
  std::vector<int64_t> spatial(size.begin() + 2, size.end());  // (D,) H, W
  for (int64_t n : spatial)
    if (n <= 0) c.fail("size leaves the grid empty (empty tensors are not supported)");
  auto coordinate = [align_corners](int64_t i, int64_t n) {
    if (n == 1) return align_corners ? -1.0 : 0.0;
    double end_centres = -1.0 + 2.0 * double(i) / double(n - 1);
    return align_corners ? end_centres : end_centres * double(n - 1) / double(n);
  };
  int64_t positions = product(spatial, 0, spatial.size());
  NDArray base(c.input_dtype(0), {positions, dims + 1});
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (int64_t k = 0; k < dims; ++k) {  // the last spatial axis (x) first
      int64_t n = spatial[size_t(dims - 1 - k)];
      base.set_from_double(p * (dims + 1) + k, coordinate(rest % n, n));
      rest /= n;
    }
    base.set_from_double(p * (dims + 1) + dims, 1.0);
  }
  Expr theta_t = c.call("transpose", {c.input(0)}, {{"axes", std::vector<int64_t>{0, 2, 1}}});
  Expr grid = c.call("matmul", {c.constant(std::move(base)), theta_t});  // (N, positions, dims)
  std::vector<int64_t> out{size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(dims);
  set_single_output(c, reshape_to(c, grid, out));
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

// 1 at the first largest element along `axis`, 0 elsewhere.
Expr hardmax(NodeContext& c, const Expr& x, int64_t axis) {
  require_float(c, 0);
  const std::vector<int64_t>& in = static_shape_of(x);
  Expr index = arg_extreme(c, x, axis, true, false);
  std::vector<int64_t> iota_shape(in.size(), 1);
  iota_shape[size_t(axis)] = in[size_t(axis)];
  NDArray iota(DType::kInt64, iota_shape);
  std::iota(iota.as<int64_t>(), iota.as<int64_t>() + iota.numel(), int64_t(0));
  return cast_to(c, c.call("equal", {c.constant(std::move(iota)), index}), tensor_type_of(x).dtype);
}

// NegativeLogLikelihoodLoss of log-probabilities (N, C, d...) at the target
// classes (N, d...): -input[n, target, d...] * weight[target], zero where
// the target is ignore_index; "mean" divides by the weights' sum.
Expr nll_loss(NodeContext& c, const Expr& input, const Expr& target, const Expr& weight) {
  std::vector<int64_t> in = static_shape_of(input);
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

// Softmax, LogSoftmax and Hardmax along one axis.
using AlongAxis = Expr (*)(NodeContext&, const Expr&, int64_t);
Expr softmax(NodeContext& c, const Expr& x, int64_t axis) { return c.call("nn.softmax", {x}, {{"axis", axis}}); }

// From version 13: along `axis` (default -1).
void convert_along_axis(NodeContext& c, AlongAxis op) {
  int64_t axis = normalize_axis(c, c.attr_int("axis", -1), c.input_type(0).ndim());
  set_single_output(c, op(c, c.input(0), axis));
}

// Before version 13 the input is seen as 2-D: the axes before `axis`
// (default 1) flattened into rows, the rest into one row's elements.
void convert_coerced_to_2d(NodeContext& c, AlongAxis op) {
  const std::vector<int64_t> in = c.input_shape(0);
  int64_t rank = int64_t(in.size());
  if (rank == 0) c.fail("needs an input of rank 1 or more");
  int64_t axis = normalize_axis(c, c.attr_int("axis", 1), rank);
  Expr x = reshape_to(c, c.input(0), {product(in, 0, size_t(axis)), product(in, size_t(axis), in.size())});
  set_single_output(c, reshape_to(c, op(c, x, 1), in));
}

}  // namespace

Expr onnx_convolution(NodeContext& c, const Expr& x, const Expr& w, const Expr& bias) {
  const std::vector<DimExpr>& x_dims = tensor_type_of(x).dims;
  const std::vector<int64_t> w_shape = static_dims(c, w, 0, "the weight");
  int rank = int(x_dims.size());
  if (rank < 3 || rank > 5)
    c.fail("the input has shape " + dims_to_string(x_dims) + "; only 1-D, 2-D and 3-D convolutions (N, C, spatial...) are supported");
  if (int(w_shape.size()) != rank)
    c.fail("the weight's rank " + std::to_string(w_shape.size()) + " is not the input's " + std::to_string(rank));
  // A 3-D convolution folds the batch into its planes: static only.
  std::vector<int64_t> x_spatial = static_dims(c, x, rank == 5 ? 0 : 2, "the input");
  if (rank == 5) x_spatial.erase(x_spatial.begin(), x_spatial.begin() + 2);
  WindowAxes window = read_window(c, x_spatial, spatial_dims(c, w_shape, "the weight"));
  Expr y = window_convolution(c, x, w, window, c.attr_int("group", 1));
  if (bias) y = c.call("nn.bias_add", {y, bias}, {{"axis", int64_t(1)}});
  return y;
}

void register_nn_converters() {
  add_onnx_converter("Conv", {1, 11}, {{1, convert_conv}});
  add_onnx_converter("MatMul", {1, 9, 13}, {{1, [](NodeContext& c) {
                       set_single_output(c, c.call("matmul", {c.input(0), c.input(1)}));
                     }}});
  // Gemm-7 broadcasts C to the product (before, the `broadcast` attribute
  // said whether); from 11 C is optional.
  add_onnx_converter("Gemm", {1, 6, 7, 9, 11, 13}, {{1, [](NodeContext& c) { convert_gemm(c, true); }},
                                                    {7, [](NodeContext& c) { convert_gemm(c, false); }}});
  auto pool = [](const char* op, PoolVersion v) { return [op, v](NodeContext& c) { convert_pool(c, op, v); }; };
  add_onnx_converter("MaxPool", {1, 8, 10, 11, 12},
                     {{1, pool("nn.max_pool2d", {})},
                      {8, pool("nn.max_pool2d", {.storage_order = true})},
                      {10, pool("nn.max_pool2d", {.storage_order = true, .ceil_mode = true, .dilations = true})}});
  // AveragePool-1 has no count_include_pad: padding is never counted.
  add_onnx_converter("AveragePool", {1, 7, 10, 11, 19},
                     {{1, pool("nn.avg_pool2d", {})},
                      {7, pool("nn.avg_pool2d", {.count_include_pad = true})},
                      {10, pool("nn.avg_pool2d", {.ceil_mode = true, .count_include_pad = true})},
                      {19, pool("nn.avg_pool2d", {.ceil_mode = true, .dilations = true, .count_include_pad = true})}});
  add_onnx_converter("GlobalAveragePool", {1}, {{1, [](NodeContext& c) { convert_global_pool(c, "mean"); }}});
  add_onnx_converter("GlobalMaxPool", {1}, {{1, [](NodeContext& c) { convert_global_pool(c, "max"); }}});
  add_onnx_converter("BatchNormalization", {1, 6, 7, 9, 14, 15},
                     {{1, [](NodeContext& c) { convert_batch_norm(c, {.is_test = true}); }},
                      {7, [](NodeContext& c) { convert_batch_norm(c, {.spatial = true}); }},
                      {9, [](NodeContext& c) { convert_batch_norm(c, {}); }},
                      {14, [](NodeContext& c) { convert_batch_norm(c, {.training_mode = true}); }}});
  add_onnx_converter("InstanceNormalization", {1, 6}, {{6, convert_instance_norm}});
  // ONNX Runtime registers its LayerNormalization, of the same meaning, in
  // the default domain before opset 17, and its transformer fusions write it.
  add_onnx_converter("LayerNormalization", {17}, {{1, convert_layer_norm}});
  add_onnx_converter("GroupNormalization", {18, 21}, {{18, [](NodeContext& c) { convert_group_norm(c, false); }},
                                                      {21, [](NodeContext& c) { convert_group_norm(c, true); }}});
  for (auto [name, op] : {std::pair<const char*, AlongAxis>{"Softmax", softmax}, {"LogSoftmax", log_softmax},
                          {"Hardmax", hardmax}}) {
    add_onnx_converter(name, {1, 11, 13}, {{1, [op](NodeContext& c) { convert_coerced_to_2d(c, op); }},
                                           {13, [op](NodeContext& c) { convert_along_axis(c, op); }}});
  }
  add_onnx_converter("AffineGrid", {20}, {{20, convert_affine_grid}});
  add_onnx_converter("MeanVarianceNormalization", {9, 13}, {{9, convert_mean_variance_norm}});
  add_onnx_converter("LRN", {1, 13}, {{1, convert_lrn}});
  add_onnx_converter("NegativeLogLikelihoodLoss", {12, 13}, {{12, [](NodeContext& c) {
                       set_single_output(c, nll_loss(c, c.input(0), c.input(1), c.has_input(2) ? c.input(2) : Expr()));
                     }}});
  add_onnx_converter("SoftmaxCrossEntropyLoss", {12, 13}, {{12, [](NodeContext& c) {
                       if (c.input_type(0).ndim() < 2) c.fail("expects (N, C, ...) scores");
                       Expr log_prob = log_softmax(c, c.input(0), 1);
                       c.set_output(0, nll_loss(c, log_prob, c.input(1), c.has_input(2) ? c.input(2) : Expr()));
                       c.set_output(1, log_prob);
                     }}});
}

}  // namespace switchyard
