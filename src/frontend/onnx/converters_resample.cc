// Converters of ONNX's resampling and padding operators: Pad,
// CenterCropPad, Resize, Upsample, Tile and ConvTranspose. None has an IR
// operator of its own; each becomes index arithmetic done at import
// (constant index and weight arrays for `take` and `multiply`) plus the
// IR's concatenate, broadcast_to, reshape, strided_slice and nn.conv2d, so
// every backend that runs those runs these.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/spatial_windows.h"
#include "frontend/onnx/symbolic_shapes.h"

namespace switchyard {

namespace {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

// ---- Pad -------------------------------------------------------------------

// Where output position j (counted from the start of the padded axis, whose
// source has `n` elements) reads from, for reflect, edge and wrap modes.
// Reflect repeats the mirror for pads wider than the axis, as numpy.pad does.
int64_t pad_source(const std::string& mode, int64_t j, int64_t n) {
  if (mode == "wrap") return ((j % n) + n) % n;
  if (mode == "edge" || n == 1) return std::min(std::max(j, int64_t(0)), n - 1);
  int64_t period = 2 * (n - 1);
  int64_t m = ((j % period) + period) % period;
  return m < n ? m : period - m;
}

// What a Pad version reads.
struct PadVersion {
  bool inputs = false;  // from 11: pads and constant_value are inputs, not attributes (pads, value)
  bool axes = false;    // from 18: an axes input, pads naming only those axes
  bool wrap = false;    // from 19: mode 'wrap'
};

// The constant fill: the value attribute before version 11, the optional
// constant_value input from 11; 0 without either.
Expr pad_fill(NodeContext& c, PadVersion v) {
  DType dtype = c.input_dtype(0);
  if (!v.inputs) return c.scalar(c.attr_float("value", 0.0f), dtype);
  if (!c.has_input(2)) return c.scalar(0, dtype);
  if (c.input_type(2).numel() != 1) c.fail("constant_value must hold one element");
  if (c.input_dtype(2) != dtype) c.fail("constant_value must have the data's element type");
  const NDArray* known = c.constant_input(2);
  return known ? c.constant(known->reshaped({})) : reshape_to(c, c.input(2), {});
}

// Pad's pads for every axis (begins, then ends): an attribute before
// version 11, an input from 11, and from 18 only for the axes input's axes.
std::vector<int64_t> pad_amounts(NodeContext& c, PadVersion v, size_t rank) {
  std::vector<int64_t> pads = v.inputs ? c.constant_ints(1, "pads") : c.attr_ints("pads");
  if (!v.axes || !c.has_input(3)) {
    if (pads.size() != 2 * rank)
      c.fail("pads has " + std::to_string(pads.size()) + " entries; a rank-" + std::to_string(rank) + " input needs " +
             std::to_string(2 * rank));
    return pads;
  }
  std::vector<int64_t> axes = c.constant_ints(3, "axes");
  if (pads.size() != 2 * axes.size())
    c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  std::vector<int64_t> all(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = size_t(normalize_axis(c, axes[i], int64_t(rank)));
    if (seen[a]) c.fail("axis " + std::to_string(axes[i]) + " is given twice");
    seen[a] = true;
    all[a] = pads[i], all[a + rank] = pads[i + axes.size()];
  }
  return all;
}

void convert_pad(NodeContext& c, PadVersion v) {
  std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !(v.wrap && mode == "wrap"))
    c.fail("mode '" + mode + "' is not one of constant, reflect, edge" + (v.wrap ? ", wrap" : ""));
  // A symbolic dimension (a batch) may be there when its axis is not padded.
  const std::vector<DimExpr> dims = c.input_dims(0);
  size_t rank = dims.size();
  std::vector<int64_t> pads = pad_amounts(c, v, rank);
  std::vector<int64_t> in(rank);
  for (size_t a = 0; a < rank; ++a) {
    if (!dims[a].is_constant() && (pads[a] != 0 || pads[a + rank] != 0))
      c.fail("pads symbolic dimension '" + dim_to_string(dims[a]) + "' (axis " + std::to_string(a) +
             "); Pad of a symbolic axis is not supported yet (fix it with --input-shape)");
    in[a] = dims[a].constant().value_or(1);  // never read for an unpadded axis
  }
  for (size_t a = 0; a < rank; ++a)
    if (in[a] + pads[a] + pads[a + rank] <= 0)
      c.fail("pads leave axis " + std::to_string(a) + " empty (empty tensors are not supported)");
  // Negative pads crop first (as ONNX Runtime does), so reflection mirrors
  // the cropped tensor.
  Expr x = c.input(0);
  std::vector<int64_t> begin, end, axes;
  for (size_t a = 0; a < rank; ++a) {
    int64_t cut_before = std::max(-pads[a], int64_t(0)), cut_after = std::max(-pads[a + rank], int64_t(0));
    if (cut_before == 0 && cut_after == 0) continue;
    if (cut_before + cut_after >= in[a])
      c.fail("negative pads remove all of axis " + std::to_string(a) + " before padding it");
    begin.push_back(cut_before), end.push_back(in[a] - cut_after), axes.push_back(int64_t(a));
  }
  if (!axes.empty()) x = c.call("strided_slice", {x}, {{"begin", begin}, {"end", end}, {"axes", axes}});
  if (mode == "constant") {
    Expr fill = pad_fill(c, v);
    for (size_t a = 0; a < rank; ++a)
      x = pad_axis(c, x, int64_t(a), std::max(pads[a], int64_t(0)), std::max(pads[a + rank], int64_t(0)), fill);
  } else {
    if (v.inputs && c.has_input(2)) c.fail("constant_value is given, but mode is '" + mode + "'");
    if (!v.inputs) c.attr_float("value", 0.0f);  // the attribute may be there, unused
    for (size_t a = 0; a < rank; ++a) {
      int64_t before = std::max(pads[a], int64_t(0)), after = std::max(pads[a + rank], int64_t(0));
      if (before == 0 && after == 0) continue;
      int64_t n = tensor_type_of(x).dims[a].coefficient();  // a padded axis is static
      std::vector<int64_t> source;
      for (int64_t j = -before; j < n + after; ++j) source.push_back(pad_source(mode, j, n));
      x = take_along(c, x, int64_t(a), source);
    }
  }
  set_single_output(c, x);
}

// CenterCropPad (opset 18): each of `axes` (default all) cropped or padded
// with zeros to the shape input's extent, centred as ONNX's function body
// centres it: a crop or pad puts floor(difference / 2) before.
void convert_center_crop_pad(NodeContext& c) {
  const std::vector<int64_t> in = c.input_shape(0);
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> axes(in.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (c.has_attr("axes")) axes = c.attr_ints("axes");
  std::vector<int64_t> shape = c.constant_ints(1, "shape");
  if (shape.size() != axes.size())
    c.fail("shape has " + std::to_string(shape.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  Expr x = c.input(0);
  Expr zero = c.scalar(0, c.input_dtype(0));
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalize_axis(c, axes[i], rank);
    int64_t extent = in[size_t(axis)], wanted = shape[i];
    if (wanted <= 0) c.fail("shape leaves axis " + std::to_string(axis) + " empty (empty tensors are not supported)");
    if (wanted > extent) {
      int64_t before = (wanted - extent) / 2;
      x = pad_axis(c, x, axis, before, wanted - extent - before, zero);
    } else if (wanted < extent) {
      int64_t start = (extent - wanted) / 2;
      x = c.call("strided_slice", {x}, {{"begin", std::vector<int64_t>{start}}, {"end", std::vector<int64_t>{start + wanted}},
                                        {"axes", std::vector<int64_t>{axis}}});
    }
  }
  set_single_output(c, x);
}

// ---- Resize ----------------------------------------------------------------

struct ResizeAttrs {
  std::string mode, coordinates, nearest;
  double cubic_a = -0.75;        // cubic_coeff_a
  bool exclude_outside = false;  // cubic: taps outside the input weigh 0, the others renormalised
};

// The source coordinate of output position `x` along an axis of `in`
// elements resized by `scale` to `out` (the formulas of Resize-19, a
// superset of the earlier versions'). align_corners divides by
// in * scale - 1, unrounded, as the ONNX reference does: with given scales
// that differs from out - 1; half_pixel_symmetric moves half_pixel by the
// same difference, centred.
double source_coordinate(const std::string& mode, int64_t x, int64_t in, int64_t out, double scale) {
  double unrounded = scale * double(in);
  if (mode == "align_corners") return out == 1 ? 0.0 : double(x) * double(in - 1) / (unrounded - 1);
  if (mode == "asymmetric") return double(x) / scale;
  if (mode == "tf_half_pixel_for_nn") return (double(x) + 0.5) / scale;
  if (mode == "pytorch_half_pixel" && out == 1) return 0.0;
  double half_pixel = (double(x) + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
  if (mode == "half_pixel_symmetric") return double(in) / 2 * (1 - double(out) / unrounded) + half_pixel;
  return half_pixel;
}

// The cubic convolution kernel's weights of the four taps before and after
// a source coordinate `ratio` past the second tap (ratio in (0, 1]), with
// coefficient `a` (ONNX's cubic_coeff_a; Keys's kernel at a = -0.5).
std::array<double, 4> cubic_weights(double ratio, double a) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };         // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
}

// Cubic resampling of axis `axis` to `out` elements: four taps around each
// source coordinate, read edge-clamped, the taps at base - 1 .. base + 2
// where base is the coordinate's floor (one less at an exact sample, whose
// weights are then 0, 0, 1, 0), as the ONNX reference picks them.
Expr resize_axis_cubic(NodeContext& c, const Expr& x, int64_t axis, int64_t out, double scale, const ResizeAttrs& r) {
  const TensorTypeNode& t = tensor_type_of(x);
  int64_t in = t.dims[size_t(axis)].coefficient();  // a resized axis is static (resize_extents)
  std::vector<int64_t> weight_shape(size_t(t.ndim() - axis), 1);
  weight_shape[0] = out;
  std::vector<std::vector<int64_t>> taps(4, std::vector<int64_t>(size_t(out)));
  std::vector<NDArray> weights;  // each its own storage: a copied NDArray shares its data
  for (size_t k = 0; k < 4; ++k) weights.emplace_back(t.dtype, weight_shape);
  std::vector<bool> used(4, false);
  for (int64_t j = 0; j < out; ++j) {
    double source = source_coordinate(r.coordinates, j, in, out, scale);
    double base = std::floor(source);
    if (base == source) base -= 1;
    std::array<double, 4> w = cubic_weights(source - base, r.cubic_a);
    double total = 0;
    for (size_t k = 0; k < 4; ++k) {
      int64_t index = int64_t(base) - 1 + int64_t(k);
      if (r.exclude_outside && (index < 0 || index >= in)) w[k] = 0;
      taps[k][size_t(j)] = std::min(std::max(index, int64_t(0)), in - 1);
      total += w[k];
    }
    for (size_t k = 0; k < 4; ++k) {
      double weight = r.exclude_outside ? w[k] / total : w[k];
      weights[k].set_from_double(j, weight);
      used[k] = used[k] || weight != 0;
    }
  }
  std::optional<Expr> sum;
  for (size_t k = 0; k < 4; ++k) {
    if (!used[k]) continue;
    Expr term = c.call("multiply", {take_along(c, x, axis, taps[k]), c.constant(std::move(weights[k]))});
    sum = sum ? c.call("add", {*sum, term}) : term;
  }
  return *sum;
}

// Resamples axis `axis` of x to `out` elements.
Expr resize_axis(NodeContext& c, const Expr& x, int64_t axis, int64_t out, double scale, const ResizeAttrs& r) {
  if (r.mode == "cubic") return resize_axis_cubic(c, x, axis, out, scale, r);
  const TensorTypeNode& t = tensor_type_of(x);
  int64_t in = t.dims[size_t(axis)].coefficient();  // a resized axis is static (resize_extents)
  auto clamp = [in](int64_t i) { return std::min(std::max(i, int64_t(0)), in - 1); };
  size_t count = static_cast<size_t>(out);
  std::vector<int64_t> low(count), high(count);
  std::vector<double> ratio(count);
  for (int64_t j = 0; j < out; ++j) {
    double source = source_coordinate(r.coordinates, j, in, out, scale);
    double base = std::floor(source);
    low[size_t(j)] = clamp(int64_t(base));
    high[size_t(j)] = clamp(int64_t(base) + 1);
    ratio[size_t(j)] = source - base;  // 0 at an exact sample: the low neighbour alone
  }
  if (r.mode == "nearest") {
    std::vector<int64_t> picked(count);
    for (size_t j = 0; j < count; ++j) {
      double f = ratio[j];
      bool up = f != 0 && (r.nearest == "ceil" || (r.nearest == "round_prefer_floor" && f > 0.5) ||
                           (r.nearest == "round_prefer_ceil" && f >= 0.5));
      picked[j] = up ? high[j] : low[j];
    }
    return take_along(c, x, axis, picked);
  }
  // Linear: out = take(x, low) * (1 - ratio) + take(x, high) * ratio, the
  // weights shaped (out, 1, ...) to broadcast along this axis.
  if (std::all_of(ratio.begin(), ratio.end(), [](double f) { return f == 0; })) return take_along(c, x, axis, low);
  std::vector<int64_t> weight_shape(size_t(t.ndim() - axis), 1);
  weight_shape[0] = out;
  NDArray w_low(t.dtype, weight_shape), w_high(t.dtype, weight_shape);
  for (int64_t j = 0; j < out; ++j) {
    w_low.set_from_double(j, 1 - ratio[size_t(j)]);
    w_high.set_from_double(j, ratio[size_t(j)]);
  }
  Expr a = c.call("multiply", {take_along(c, x, axis, low), c.constant(std::move(w_low))});
  Expr b = c.call("multiply", {take_along(c, x, axis, high), c.constant(std::move(w_high))});
  return c.call("add", {a, b});
}

// What a Resize version reads. Resize-10 and Upsample (`legacy`) take only
// scales and a mode, with asymmetric coordinates and, for nearest, the
// floor of the source coordinate when enlarging and its ceiling when
// shrinking (as ONNX Runtime does; the versions name no rounding).
struct ResizeVersion {
  bool legacy = false;
  bool upsample = false;              // Upsample: scales of at least 1 ...
  bool scales_attribute = false;      // ... in an attribute (version 7)
  bool tf_half_pixel_for_nn = false;  // version 11 only
  bool axes = false;                  // from 18: axes, keep_aspect_ratio_policy, antialias
  bool half_pixel_symmetric = false;  // from 19
};

// Reads and checks the modes a version has.
ResizeAttrs resize_attrs(NodeContext& c, ResizeVersion v) {
  ResizeAttrs r{c.attr_string("mode", "nearest"), "asymmetric", "floor"};
  if (r.mode != "nearest" && r.mode != "linear" && (v.legacy || r.mode != "cubic"))
    c.fail("mode '" + r.mode + "' is not one of nearest, linear" + (v.legacy ? "" : ", cubic"));
  if (r.mode != "nearest" && !dtype_is_float(c.input_dtype(0)))
    c.fail(r.mode + " mode needs a floating-point input");
  if (v.legacy) return r;
  r.coordinates = c.attr_string("coordinate_transformation_mode", "half_pixel");
  r.nearest = c.attr_string("nearest_mode", "round_prefer_floor");
  r.cubic_a = c.attr_float("cubic_coeff_a", -0.75f);
  c.attr_float("extrapolation_value", 0.0f);  // tf_crop_and_resize only, refused below
  std::vector<std::string> modes{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
  if (v.tf_half_pixel_for_nn) modes.push_back("tf_half_pixel_for_nn");
  if (v.half_pixel_symmetric) modes.push_back("half_pixel_symmetric");
  if (r.coordinates == "tf_crop_and_resize") c.fail("coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  if (std::find(modes.begin(), modes.end(), r.coordinates) == modes.end()) {
    std::string list;
    for (const std::string& m : modes) list += m + ", ";
    c.fail("coordinate_transformation_mode '" + r.coordinates + "' is not one of " + list + "tf_crop_and_resize");
  }
  if (r.nearest != "round_prefer_floor" && r.nearest != "round_prefer_ceil" && r.nearest != "floor" &&
      r.nearest != "ceil")
    c.fail("nearest_mode '" + r.nearest + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
  // exclude_outside reweights samples outside the input: with edge-clamped
  // linear neighbours that changes nothing, but a nearest pick outside
  // would get weight 0 (an undefined result), so refuse it there.
  r.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  if (r.exclude_outside && r.mode == "nearest") c.fail("exclude_outside=1 is not supported with mode 'nearest'");
  return r;
}

// The input's sizes for computing a Resize's extents: a symbolic dimension
// (a batch) stands in as 1, and must come out unresized (resize_extents).
std::vector<int64_t> resize_stand_in(NodeContext& c) {
  std::vector<int64_t> in;
  for (const DimExpr& d : c.input_dims(0)) in.push_back(d.constant().value_or(1));
  return in;
}

// The output extents and per-axis scales of a Resize (or Upsample): from
// the scales input (or `scales_attribute`), or from sizes; from version
// 18 only for the axes named by `axes`, sizes adjusted by
// keep_aspect_ratio_policy.
void resize_extents(NodeContext& c, ResizeVersion v, const std::vector<float>* scales_attribute,
                    std::vector<int64_t>& out, std::vector<double>& scales) {
  const std::vector<int64_t> in = resize_stand_in(c);
  const std::vector<DimExpr>& dims = c.input_dims(0);
  size_t rank = in.size();
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (v.axes && c.has_attr("axes")) {
    axes = c.attr_ints("axes");
    for (int64_t& a : axes) a = normalize_axis(c, a, int64_t(rank));
  }
  std::string policy = v.axes ? c.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    c.fail("keep_aspect_ratio_policy '" + policy + "' is not one of stretch, not_larger, not_smaller");
  size_t scales_input = v.legacy ? 1 : 2;
  bool has_scales = scales_attribute || (c.has_input(scales_input) && c.input_type(scales_input).numel() > 0);
  // An empty scales means "use sizes"; sizes may be a shape value (value_shape reads either).
  auto elements = [&](size_t i) { int64_t n = 1; for (int64_t d : c.value_shape(i)) n *= d; return n; };
  bool has_sizes = !v.legacy && c.has_input(3) && elements(3) > 0;
  if (has_scales == has_sizes) c.fail("exactly one of scales and sizes must be given");
  std::string count = std::string(v.axes && c.has_attr("axes") ? "one entry per axis in axes (" : "one entry per input dimension (") +
                      std::to_string(axes.size()) + ")";
  out = in;
  scales.assign(rank, 1.0);
  if (has_scales) {
    std::vector<double> given = scales_attribute ? std::vector<double>(scales_attribute->begin(), scales_attribute->end())
                                                 : c.constant_floats(scales_input, "scales");
    if (given.size() != axes.size()) c.fail("scales must have " + count);
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t a = size_t(axes[i]);
      if (!(given[i] > 0)) c.fail("scales must be positive");
      scales[a] = given[i];
      out[a] = int64_t(std::floor(given[i] * double(in[a])));
    }
  } else {
    // From a shape value when the model keeps the batch (F.interpolate(size=)):
    // a symbolic size must be the input's own dimension (its stand-in, 1).
    std::vector<int64_t> sizes;
    if (c.is_shape_value(3)) {
      std::vector<DimExpr> given = *c.shape_value_input(3);
      if (given.size() != axes.size()) c.fail("sizes must have " + count);
      for (size_t i = 0; i < axes.size(); ++i) {
        const DimExpr& kept = dims[size_t(axes[i])];
        if (!given[i].is_constant() && given[i] != kept)
          c.fail("sizes entry " + std::to_string(i) + " is " + dim_to_string(given[i]) + " but axis " +
                 std::to_string(axes[i]) + " is " + dim_to_string(kept) + "; a symbolic axis must keep its size");
        sizes.push_back(given[i].is_constant() ? given[i].coefficient() : in[size_t(axes[i])]);
      }
    } else {
      sizes = c.constant_ints(3, "sizes");
    }
    if (sizes.size() != axes.size()) c.fail("sizes must have " + count);
    std::vector<double> ratios;
    for (size_t i = 0; i < axes.size(); ++i) ratios.push_back(double(sizes[i]) / double(in[size_t(axes[i])]));
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t a = size_t(axes[i]);
      // The policies keep one scale for all the axes and round half up, as the ONNX reference does.
      double kept = policy == "not_larger" ? *std::min_element(ratios.begin(), ratios.end())
                                           : *std::max_element(ratios.begin(), ratios.end());
      scales[a] = policy == "stretch" ? ratios[i] : kept;
      out[a] = policy == "stretch" ? sizes[i] : int64_t(kept * double(in[a]) + 0.5);
    }
  }
  for (size_t a = 0; a < rank; ++a)
    if (out[a] <= 0) c.fail("the output's axis " + std::to_string(a) + " is empty (empty tensors are not supported)");
  for (size_t a = 0; a < rank; ++a)
    if (!dims[a].is_constant() && (out[a] != in[a] || scales[a] != 1.0))
      c.fail("resizes symbolic dimension '" + dim_to_string(dims[a]) + "' (axis " + std::to_string(a) +
             "); only static axes may be resized (fix it with --input-shape)");
}

void convert_resize(NodeContext& c, ResizeVersion v) {
  ResizeAttrs r = resize_attrs(c, v);
  if (!v.legacy) c.has_input(1);  // roi: read by tf_crop_and_resize only, which is refused
  std::vector<float> scales_attribute;
  if (v.scales_attribute) scales_attribute = c.attr_floats("scales");
  std::vector<int64_t> out;
  std::vector<double> scales;
  resize_extents(c, v, v.scales_attribute ? &scales_attribute : nullptr, out, scales);
  if (v.upsample)
    for (double scale : scales)
      if (scale < 1) c.fail("scales must be at least 1 (Upsample enlarges; Resize shrinks)");
  // antialias widens the linear filter when shrinking, which is not implemented.
  if (v.axes && c.attr_int("antialias", 0) != 0 && r.mode != "nearest")
    for (size_t a = 0; a < scales.size(); ++a)
      if (scales[a] < 1) c.fail("antialias=1 with mode '" + r.mode + "' when shrinking (axis " + std::to_string(a) +
                                 ") is not supported");
  // Separable: each resized axis in turn (every mode transforms the axes
  // independently, so the order does not matter).
  const std::vector<int64_t> in = resize_stand_in(c);
  Expr x = c.input(0);
  for (size_t a = 0; a < in.size(); ++a) {
    if (out[a] == in[a] && scales[a] == 1.0) continue;
    ResizeAttrs axis_attrs = r;
    if (v.legacy) axis_attrs.nearest = scales[a] < 1 ? "ceil" : "floor";
    x = resize_axis(c, x, int64_t(a), out[a], scales[a], axis_attrs);
  }
  set_single_output(c, x);
}

// ---- Tile ------------------------------------------------------------------

// Tile as broadcasting: (d0, d1) -> (1, d0, 1, d1) -> (r0, d0, r1, d1) ->
// (r0*d0, r1*d1); only axes repeated more than once get the extra axis.
void convert_tile(NodeContext& c) {
  const std::vector<int64_t> in = c.input_shape(0);
  std::vector<int64_t> repeats = c.constant_ints(1, "repeats");
  if (repeats.size() != in.size())
    c.fail("repeats has " + std::to_string(repeats.size()) + " entries for a rank-" + std::to_string(in.size()) +
           " input");
  std::vector<int64_t> spread, broadcast, out;
  for (size_t a = 0; a < in.size(); ++a) {
    if (repeats[a] < 0) c.fail("repeats must not be negative");
    if (repeats[a] == 0) c.fail("a repeat of 0 gives an empty tensor (empty tensors are not supported)");
    if (repeats[a] > 1) spread.push_back(1), broadcast.push_back(repeats[a]);
    spread.push_back(in[a]), broadcast.push_back(in[a]), out.push_back(in[a] * repeats[a]);
  }
  if (out == in) return set_single_output(c, c.input(0));
  Expr x = reshape_to(c, c.input(0), spread);
  x = c.call("broadcast_to", {x}, {{"shape", broadcast}});
  set_single_output(c, reshape_to(c, x, out));
}

// ---- ConvTranspose ---------------------------------------------------------

// x (N, C, spatial...) with stride-1 zeros between neighbours along each
// spatial axis: (N, C, (D1-1)*s1+1, ...). Each strided axis gets a new axis
// of 1 after it, zeros concatenated there to the stride, the pair merged,
// and the trailing zeros cut.
Expr insert_zeros(NodeContext& c, const Expr& x, const std::vector<int64_t>& strides) {
  if (std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; })) return x;
  const std::vector<int64_t> shape = static_shape_of(x);
  std::vector<int64_t> spread{shape[0], shape[1]}, widened{shape[0], shape[1]}, begin, end, axes;
  for (size_t i = 0; i < strides.size(); ++i) {
    int64_t extent = shape[2 + i];
    spread.insert(spread.end(), {extent, 1});
    widened.push_back(extent * strides[i]);
    begin.push_back(0);
    end.push_back((extent - 1) * strides[i] + 1);
    axes.push_back(int64_t(2 + i));
  }
  Expr zero = c.scalar(0, tensor_type_of(x).dtype);
  Expr y = reshape_to(c, x, spread);
  for (size_t i = 0; i < strides.size(); ++i) y = pad_axis(c, y, int64_t(3 + 2 * i), 0, strides[i] - 1, zero);
  y = reshape_to(c, y, widened);
  return c.call("strided_slice", {y}, {{"begin", begin}, {"end", end}, {"axes", axes}});
}

// The ConvTranspose weight (C, M/g, k...) as the equivalent convolution's
// (M, C/g, k...): in and out channels swapped within each group, and the
// kernel flipped along every spatial axis.
Expr conv_weight(NodeContext& c, const Expr& weight, int64_t groups) {
  std::vector<int64_t> s = static_shape_of(weight);
  int64_t ci = s[0], co = s[1];
  std::vector<int64_t> grouped{groups, ci / groups, co}, axes{0, 2, 1}, swapped{groups * co, ci / groups};
  for (size_t i = 2; i < s.size(); ++i) {
    grouped.push_back(s[i]);
    axes.push_back(int64_t(i + 1));
    swapped.push_back(s[i]);
  }
  Expr w = reshape_to(c, weight, grouped);
  w = c.call("transpose", {w}, {{"axes", axes}});
  w = reshape_to(c, w, swapped);
  for (size_t axis = 2; axis < s.size(); ++axis) {
    std::vector<int64_t> reversed(static_cast<size_t>(s[axis]));  // not a declaration: clang parses size_t(s[...]) as one
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    w = take_along(c, w, int64_t(axis), reversed);
  }
  return w;
}

// Transposed convolution as a convolution: y[o] = sum_k x[i] * w[k] over
// o = i*s - pad_begin + k*d is the stride-1 correlation, with dilation d, of
// the zero-inserted input padded by d*(K-1) - pad on each side (plus
// output_padding at the end) with the flipped kernel. A negative padding is
// a crop of the result.
void convert_conv_transpose(NodeContext& c) {
  int rank = c.input_type(0).ndim();
  if (rank < 3 || rank > 5)
    c.fail("the input has shape " + shape_to_string(c.input_shape(0)) +
           "; only 1-D, 2-D and 3-D transposed convolutions (N, C, spatial...) are supported");
  if (c.input_type(1).ndim() != rank) c.fail("the weight must have the input's rank");
  std::vector<int64_t> spatial(c.input_shape(0).begin() + 2, c.input_shape(0).end());
  std::vector<int64_t> kernel(c.input_shape(1).begin() + 2, c.input_shape(1).end());
  size_t n = spatial.size();
  WindowAxes w = read_window(c, spatial, kernel, /*transposed=*/true);
  int64_t groups = c.attr_int("group", 1);
  std::vector<int64_t> output_padding = c.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> output_shape = c.attr_ints("output_shape", std::vector<int64_t>{});
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (output_padding.size() != n) c.fail("output_padding must have one entry per spatial axis");
  for (int64_t v : output_padding)
    if (v < 0) c.fail("output_padding must not be negative");
  int64_t channels = c.input_shape(0)[1];
  if (groups <= 0 || channels % groups != 0)
    c.fail("group " + std::to_string(groups) + " does not divide the " + std::to_string(channels) + " input channels");
  if (c.input_shape(1)[0] != channels)
    c.fail("the weight has " + std::to_string(c.input_shape(1)[0]) + " input channels, the input " +
           std::to_string(channels));
  std::vector<int64_t> head = w.pads_begin, tail = w.pads_end;
  if (!output_shape.empty()) {
    // The output shape fixes the total padding; the pads attribute is ignored.
    if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (output_shape.size() != n) c.fail("output_shape must have one entry per spatial axis");
    for (size_t i = 0; i < n; ++i) {
      int64_t total = w.strides[i] * (spatial[i] - 1) + output_padding[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 -
                      output_shape[i];
      // A negative total lengthens the output at the end, as output_padding does.
      int64_t small = std::max<int64_t>(total, 0) / 2, large = total - small;
      head[i] = auto_pad == "SAME_UPPER" ? small : (total < 0 ? 0 : large);
      tail[i] = total - head[i];
    }
  }
  auto positive = [](int64_t v) { return std::max<int64_t>(v, 0); };
  // The equivalent convolution: stride 1, the padding's positive parts.
  WindowAxes convolution{w.kernel, std::vector<int64_t>(n, 1), w.dilations, {}, {}};
  std::vector<int64_t> before(n), after(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t reach = w.dilations[i] * (w.kernel[i] - 1);
    before[i] = reach - head[i];
    after[i] = reach - tail[i] + output_padding[i];
    convolution.pads_begin.push_back(positive(before[i]));
    convolution.pads_end.push_back(positive(after[i]));
  }
  Expr x = insert_zeros(c, c.input(0), w.strides);
  Expr y = window_convolution(c, x, conv_weight(c, c.input(1), groups), convolution, groups);
  const std::vector<int64_t> full = static_shape_of(y);
  std::vector<int64_t> begin, end, axes;
  bool cropped = false;
  for (size_t i = 0; i < n; ++i) {
    begin.push_back(positive(-before[i]));
    end.push_back(full[2 + i] - positive(-after[i]));
    axes.push_back(int64_t(2 + i));
    if (end.back() <= begin.back()) c.fail("the pads leave an empty output (empty tensors are not supported)");
    cropped = cropped || begin.back() != 0 || end.back() != full[2 + i];
  }
  if (cropped) y = c.call("strided_slice", {y}, {{"begin", begin}, {"end", end}, {"axes", axes}});
  if (c.has_input(2)) y = c.call("nn.bias_add", {y, c.input(2)}, {{"axis", int64_t(1)}});
  set_single_output(c, y);
}

}  // namespace

void register_resample_converters() {
  add_onnx_converter("Pad", {1, 2, 11, 13, 18, 19, 21},
                     {{2, [](NodeContext& c) { convert_pad(c, {}); }},
                      {11, [](NodeContext& c) { convert_pad(c, {.inputs = true}); }},
                      {18, [](NodeContext& c) { convert_pad(c, {.inputs = true, .axes = true}); }},
                      {19, [](NodeContext& c) { convert_pad(c, {.inputs = true, .axes = true, .wrap = true}); }}});
  add_onnx_converter("Resize", {10, 11, 13, 18, 19},
                     {{10, [](NodeContext& c) { convert_resize(c, {.legacy = true}); }},
                      {11, [](NodeContext& c) { convert_resize(c, {.tf_half_pixel_for_nn = true}); }},
                      {13, [](NodeContext& c) { convert_resize(c, {}); }},
                      {18, [](NodeContext& c) { convert_resize(c, {.axes = true}); }},
                      {19, [](NodeContext& c) { convert_resize(c, {.axes = true, .half_pixel_symmetric = true}); }}});
  // Upsample is Resize-10 with scales of at least 1: an attribute in
  // version 7, an input in 9. ONNX deprecated it in opset 10.
  add_onnx_converter("Upsample", {1, 7, 9, 10},
                     {{7, [](NodeContext& c) { convert_resize(c, {.legacy = true, .upsample = true, .scales_attribute = true}); }},
                      {9, [](NodeContext& c) { convert_resize(c, {.legacy = true, .upsample = true}); }},
                      refused_from(10, "is deprecated: ONNX replaced it by Resize in opset 10 (export the model with Resize, "
                                       "or at an opset below 10)")});
  add_onnx_converter("CenterCropPad", {18}, {{18, convert_center_crop_pad}});
  add_onnx_converter("Tile", {1, 6, 13}, {{6, convert_tile}});
  add_onnx_converter("ConvTranspose", {1, 11}, {{1, convert_conv_transpose}});
}

}  // namespace switchyard
