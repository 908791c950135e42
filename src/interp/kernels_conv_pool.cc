// Reference kernels of the NCHW spatial operators: nn.conv2d (OIHW weights,
// strides, padding, dilation, groups), nn.max_pool2d, nn.avg_pool2d and
// nn.global_avg_pool2d. Sums are taken in double.
//
// Padding is 1 value (all sides), 2 (top/bottom, left/right) or 4 (top,
// left, bottom, right), as in Relay. With ceil_mode the output size rounds up
// (TVM's rule: no window is dropped); the extra windows read only real
// elements and the attribute padding.
#include <array>
#include <cmath>
#include <limits>

#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"
#include "op/handles.h"
#include "op/window_attrs.h"

namespace switchyard {

namespace {

// The window attributes, read once (op/window_attrs.h); the registry
// checked their lengths and signs when the call was built.
WindowAttrs checked_window(const AttrsNode& attrs, const std::string& layout, const std::string& kernel_layout) {
  WindowAttrs w = window_attrs(attrs);
  if (w.data_layout != layout) kernel_fail("only the \"" + layout + "\" layout is supported, got \"" + w.data_layout + "\"");
  if (w.kernel_layout != kernel_layout)
    kernel_fail("only \"" + kernel_layout + "\" weights are supported, got \"" + w.kernel_layout + "\"");
  if (w.stride_h <= 0 || w.stride_w <= 0 || w.dilation_h <= 0 || w.dilation_w <= 0)
    kernel_fail("strides and dilation must be positive");
  return w;
}

// Output extent of a window sweep: floor (or ceil) of the positions that fit.
int64_t window_count(int64_t input, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t dilation,
                     int64_t stride, bool ceil_mode) {
  int64_t span = input + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (span < 0) kernel_fail("the window (extent " + std::to_string(dilation * (kernel - 1) + 1) +
                            ") is larger than the padded input (" + std::to_string(input + pad_begin + pad_end) + ")");
  return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

void expect_nchw(const NDArray& data) {
  if (data.ndim() != 4) kernel_fail("expects NCHW data, got " + array_type_string(data));
}

std::vector<NDArray> conv2d_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& data = tensor_arg(args, 0);
  const NDArray& weight = tensor_arg(args, 1);
  expect_numeric_dtype(data, "data");
  expect_equal_dtypes(data, weight, "data", "weight");
  expect_nchw(data);
  if (weight.ndim() != 4) kernel_fail("expects OIHW weight, got " + array_type_string(weight));
  const WindowAttrs w = checked_window(attrs, "NCHW", "OIHW");
  auto [stride_h, stride_w, dilation_h, dilation_w] = std::array{w.stride_h, w.stride_w, w.dilation_h, w.dilation_w};
  const Padding2D& pad = w.padding;
  int64_t groups = w.groups;
  int64_t batch = data.shape()[0], channels = data.shape()[1], height = data.shape()[2], width = data.shape()[3];
  int64_t out_channels = weight.shape()[0], kernel_h = weight.shape()[2], kernel_w = weight.shape()[3];
  if (groups <= 0 || channels % groups != 0 || out_channels % groups != 0 || weight.shape()[1] * groups != channels)
    kernel_fail("data " + data.shape_string() + " and weight " + weight.shape_string() +
                " do not fit groups=" + std::to_string(groups));
  int64_t out_h = window_count(height, pad.top, pad.bottom, kernel_h, dilation_h, stride_h, false);
  int64_t out_w = window_count(width, pad.left, pad.right, kernel_w, dilation_w, stride_w, false);
  int64_t group_in = channels / groups, group_out = out_channels / groups;
  NDArray out(data.dtype(), {batch, out_channels, out_h, out_w});
  int64_t out_index = 0;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out_channels; ++o)
      for (int64_t oh = 0; oh < out_h; ++oh)
        for (int64_t ow = 0; ow < out_w; ++ow) {
          int64_t first_channel = (o / group_out) * group_in;
          double sum = 0;
          for (int64_t c = 0; c < group_in; ++c)
            for (int64_t kh = 0; kh < kernel_h; ++kh)
              for (int64_t kw = 0; kw < kernel_w; ++kw) {
                int64_t ih = oh * stride_h - pad.top + kh * dilation_h;
                int64_t iw = ow * stride_w - pad.left + kw * dilation_w;
                if (ih < 0 || ih >= height || iw < 0 || iw >= width) continue;  // zero padding
                int64_t d = ((n * channels + first_channel + c) * height + ih) * width + iw;
                int64_t w = ((o * group_in + c) * kernel_h + kh) * kernel_w + kw;
                sum += load_double(data, d) * load_double(weight, w);
              }
          store_double(out, out_index++, sum);
        }
  return {out};
}

// The smallest value of a dtype: what a max pool window with no real element yields.
double lowest_value(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return -128;
    case DType::kInt16: return double(std::numeric_limits<int16_t>::min());
    case DType::kInt32: return double(std::numeric_limits<int32_t>::min());
    case DType::kInt64: return double(std::numeric_limits<int64_t>::min());
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64: case DType::kBool: return 0;
    default: return -std::numeric_limits<double>::infinity();
  }
}

enum class PoolKind { kMax, kAvg };

std::vector<NDArray> pool2d_kernel(const std::vector<Value>& args, const AttrsNode& attrs, PoolKind kind) {
  const NDArray& data = tensor_arg(args, 0);
  expect_nchw(data);
  if (kind == PoolKind::kAvg) expect_numeric_dtype(data, "data");
  const WindowAttrs w = checked_window(attrs, "NCHW", "");
  if (w.pool_h <= 0 || w.pool_w <= 0) kernel_fail("pool_size must be positive");
  auto [pool_h, pool_w, stride_h, stride_w] = std::array{w.pool_h, w.pool_w, w.stride_h, w.stride_w};
  auto [dilation_h, dilation_w] = std::array{w.dilation_h, w.dilation_w};
  const Padding2D& pad = w.padding;
  bool ceil_mode = w.ceil_mode;
  bool count_include_pad = kind == PoolKind::kAvg && w.count_include_pad;
  int64_t batch = data.shape()[0], channels = data.shape()[1], height = data.shape()[2], width = data.shape()[3];
  int64_t out_h = window_count(height, pad.top, pad.bottom, pool_h, dilation_h, stride_h, ceil_mode);
  int64_t out_w = window_count(width, pad.left, pad.right, pool_w, dilation_w, stride_w, ceil_mode);
  NDArray out(data.dtype(), {batch, channels, out_h, out_w});
  int64_t out_index = 0;
  for (int64_t plane = 0; plane < batch * channels; ++plane)
    for (int64_t oh = 0; oh < out_h; ++oh)
      for (int64_t ow = 0; ow < out_w; ++ow, ++out_index) {
        double sum = 0;
        int64_t real_count = 0, padded_count = 0, best = -1;
        for (int64_t kh = 0; kh < pool_h; ++kh)
          for (int64_t kw = 0; kw < pool_w; ++kw) {
            int64_t ih = oh * stride_h - pad.top + kh * dilation_h;
            int64_t iw = ow * stride_w - pad.left + kw * dilation_w;
            // Positions in the attribute padding count for count_include_pad;
            // those beyond it (added by ceil_mode) never do.
            if (ih < height + pad.bottom && iw < width + pad.right) ++padded_count;
            if (ih < 0 || ih >= height || iw < 0 || iw >= width) continue;
            int64_t d = (plane * height + ih) * width + iw;
            ++real_count;
            double value = load_double(data, d);
            sum += value;
            // NaN wins and stays, as in the max reduction and NumPy.
            double held = best < 0 ? 0.0 : load_double(data, best);
            if (best < 0 || (!std::isnan(held) && (value > held || std::isnan(value)))) best = d;
          }
        if (kind == PoolKind::kMax) {
          if (best >= 0) copy_element(data, best, out, out_index);
          else store_double(out, out_index, lowest_value(data.dtype()));
        } else {
          int64_t divisor = count_include_pad ? padded_count : real_count;
          store_double(out, out_index, divisor == 0 ? 0.0 : sum / double(divisor));
        }
      }
  return {out};
}

std::vector<NDArray> global_avg_pool2d_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& data = tensor_arg(args, 0);
  expect_nchw(data);
  expect_numeric_dtype(data, "data");
  int64_t planes = data.shape()[0] * data.shape()[1], area = data.shape()[2] * data.shape()[3];
  NDArray out(data.dtype(), {data.shape()[0], data.shape()[1], 1, 1});
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < area; ++i) sum += load_double(data, p * area + i);
    store_double(out, p, area == 0 ? std::nan("") : sum / double(area));
  }
  return {out};
}

}  // namespace

void register_conv_pool_kernels() {
  register_interp_kernel(ops::conv2d(), {conv2d_kernel});
  register_interp_kernel(ops::max_pool2d(), {[](const std::vector<Value>& args, const AttrsNode& attrs) {
                           return pool2d_kernel(args, attrs, PoolKind::kMax);
                         }});
  register_interp_kernel(ops::avg_pool2d(), {[](const std::vector<Value>& args, const AttrsNode& attrs) {
                           return pool2d_kernel(args, attrs, PoolKind::kAvg);
                         }});
  register_interp_kernel(ops::global_avg_pool2d(), {global_avg_pool2d_kernel});
}

}  // namespace switchyard
