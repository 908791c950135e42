// Windows of 1 to 3 spatial axes as 2-D window operators (see
// spatial_windows.h).
#include "frontend/onnx/spatial_windows.h"

#include <utility>
#include <vector>

#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

// The window over the last two spatial axes (a height of 1 before a single
// one) in the IR's 2-D attributes.
struct PlaneWindow {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> padding;  // (top, left, bottom, right), as nn.conv2d
};

PlaneWindow plane_window(const WindowAxes& w) {
  if (w.rank() == 1)
    return {{1, w.kernel[0]}, {1, w.strides[0]}, {1, w.dilations[0]}, {0, w.pads_begin[0], 0, w.pads_end[0]}};
  size_t h = w.rank() - 2, x = w.rank() - 1;
  return {{w.kernel[h], w.kernel[x]},
          {w.strides[h], w.strides[x]},
          {w.dilations[h], w.dilations[x]},
          {w.pads_begin[h], w.pads_begin[x], w.pads_end[h], w.pads_end[x]}};
}

const std::vector<int64_t>& shape_of(const Expr& x) { return static_shape_of(x); }

// x with axes 1 and 2 swapped: a reshape when either has one element.
Expr swap_axes_1_2(NodeContext& c, const Expr& x) {
  std::vector<int64_t> shape = shape_of(x);
  std::swap(shape[1], shape[2]);
  if (shape[1] == 1 || shape[2] == 1) return reshape_to(c, x, shape);
  std::vector<int64_t> axes(shape.size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = int64_t(i);
  std::swap(axes[1], axes[2]);
  return c.call("transpose", {x}, {{"axes", axes}});
}

// The depth of a 3-D window's output (ONNX's floor rule).
int64_t output_depth(NodeContext& c, int64_t depth, const WindowAxes& w) {
  int64_t extent = w.dilations[0] * (w.kernel[0] - 1) + 1, padded = depth + w.pads_begin[0] + w.pads_end[0];
  if (extent > padded)
    c.fail("the window's depth extent " + std::to_string(extent) + " is larger than the padded input's depth " +
           std::to_string(padded));
  return (padded - extent) / w.strides[0] + 1;
}

Expr conv2d(NodeContext& c, const Expr& x, const Expr& w, const PlaneWindow& p, int64_t groups) {
  return c.call("nn.conv2d", {x, w},
                {{"strides", p.strides}, {"padding", p.padding}, {"dilation", p.dilations}, {"groups", groups}});
}

// y[n, o, od] = sum over kd of conv2d(x[n, :, od * sd + kd * dd - pad], w[:, :, kd]):
// the KD taps of each output depth gathered next to the channels, (N * OD,
// C * KD, H, W), against the weight (O, C/groups * KD, KH, KW), whose
// channel order (c, kd) is the gathered input's within each group.
Expr convolution_3d(NodeContext& c, const Expr& x, const Expr& w, const WindowAxes& window, int64_t groups) {
  const std::vector<int64_t>& in = shape_of(x);
  const std::vector<int64_t>& weight = shape_of(w);
  int64_t batch = in[0], channels = in[1], height = in[3], width = in[4], depth_kernel = window.kernel[0];
  if (groups <= 0 || channels % groups != 0 || weight[0] % groups != 0 || weight[1] * groups != channels)
    c.fail("the input " + shape_to_string(in) + " and weight " + shape_to_string(weight) + " do not fit group=" +
           std::to_string(groups) + " (the weight is (M, C/group, kD, kH, kW))");
  int64_t depth = output_depth(c, in[2], window);
  Expr padded = pad_axis(c, x, 2, window.pads_begin[0], window.pads_end[0], c.scalar(0, tensor_type_of(x).dtype));
  std::vector<int64_t> taps;
  for (int64_t d = 0; d < depth; ++d)
    for (int64_t k = 0; k < depth_kernel; ++k) taps.push_back(d * window.strides[0] + k * window.dilations[0]);
  Expr gathered = reshape_to(c, take_along(c, padded, 2, taps), {batch, channels, depth, depth_kernel, height, width});
  Expr planes = reshape_to(c, swap_axes_1_2(c, gathered), {batch * depth, channels * depth_kernel, height, width});
  Expr kernel = reshape_to(c, w, {weight[0], weight[1] * depth_kernel, weight[3], weight[4]});
  Expr y = conv2d(c, planes, kernel, plane_window(window), groups);
  const std::vector<int64_t>& out = shape_of(y);
  return swap_axes_1_2(c, reshape_to(c, y, {batch, depth, weight[0], out[2], out[3]}));
}

Expr pool2d(NodeContext& c, const std::string& op, const Expr& x, const PlaneWindow& p, bool ceil_mode,
            bool count_include_pad) {
  AttrList attrs{{"pool_size", p.kernel}, {"strides", p.strides}, {"padding", p.padding},
                 {"dilation", p.dilations}, {"ceil_mode", ceil_mode}};
  if (op == "nn.avg_pool2d") attrs.push_back({"count_include_pad", count_include_pad});
  return c.call(op, {x}, attrs);
}

// A 3-D pool as two: each depth plane's (N, C * D, H, W) over the height and
// width, then the depth of (N * C, 1, D, OH * OW) by a (KD, 1) window. Max is
// separable; so is the average, whose window (and padding, and ceil_mode's
// extra positions) is a product of per-axis ranges, so its element count is
// a product too.
Expr pool_3d(NodeContext& c, const std::string& op, const Expr& x, const WindowAxes& window, bool ceil_mode,
             bool count_include_pad) {
  const std::vector<int64_t>& in = shape_of(x);
  int64_t batch = in[0], channels = in[1], depth = in[2];
  Expr planes = reshape_to(c, x, {batch, channels * depth, in[3], in[4]});
  Expr y = pool2d(c, op, planes, plane_window(window), ceil_mode, count_include_pad);
  int64_t height = shape_of(y)[2], width = shape_of(y)[3];
  PlaneWindow along_depth{{window.kernel[0], 1},
                          {window.strides[0], 1},
                          {window.dilations[0], 1},
                          {window.pads_begin[0], 0, window.pads_end[0], 0}};
  y = pool2d(c, op, reshape_to(c, y, {batch * channels, 1, depth, height * width}), along_depth, ceil_mode,
             count_include_pad);
  return reshape_to(c, y, {batch, channels, shape_of(y)[2], height, width});
}

}  // namespace

Expr window_convolution(NodeContext& c, const Expr& x, const Expr& w, const WindowAxes& window, int64_t groups) {
  if (window.rank() == 3) return convolution_3d(c, x, w, window, groups);
  if (window.rank() == 2) return conv2d(c, x, w, plane_window(window), groups);
  auto unit_height = [&](const Expr& e) { return c.call("expand_dims", {e}, {{"axis", int64_t(2)}}); };
  Expr y = conv2d(c, unit_height(x), unit_height(w), plane_window(window), groups);
  return c.call("squeeze", {y}, {{"axis", std::vector<int64_t>{2}}});
}

Expr window_pool(NodeContext& c, const std::string& op, const Expr& x, const WindowAxes& window, bool ceil_mode,
                 bool count_include_pad) {
  if (window.rank() == 3) return pool_3d(c, op, x, window, ceil_mode, count_include_pad);
  if (window.rank() == 2) return pool2d(c, op, x, plane_window(window), ceil_mode, count_include_pad);
  Expr y = pool2d(c, op, c.call("expand_dims", {x}, {{"axis", int64_t(2)}}), plane_window(window), ceil_mode,
                  count_include_pad);
  return c.call("squeeze", {y}, {{"axis", std::vector<int64_t>{2}}});
}

}  // namespace switchyard
