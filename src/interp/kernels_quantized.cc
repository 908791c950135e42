// Reference kernels of the int8 anchors, qnn.conv2d and qnn.dense, as
// oneDNN's int8 primitives compute them (docs/operators.md, "int8"): the
// exact accumulator of (data - input_zero_point) and weight (nn.conv2d's
// and nn.dense's kernels over int32, a convolution padded with real zeros);
// plus the float32 bias, times the float32 scale of the output channel,
// relu, plus the output zero point, each step in float32; then rounded half
// to even and saturated to out_dtype.
#include <algorithm>
#include <cmath>

#include "interp/kernel_groups.h"
#include "interp/kernel_util.h"
#include "op/quantized_attrs.h"

namespace switchyard {

namespace {

NDArray as_int32(const NDArray& a, int64_t minus) {
  NDArray out(DType::kInt32, a.shape());
  for (int64_t i = 0; i < a.numel(); ++i) out.set_from_double(i, a.get_as_double(i) - double(minus));
  return out;
}

// The requantized result of the int32 accumulator `sums`, whose output
// channel is dimension `channel_axis`.
NDArray requantize(const NDArray& sums, const NDArray& bias, const AttrsNode& attrs, size_t channel_axis) {
  const QuantizedAttrs q = quantized_attrs(attrs);
  const std::vector<float>& scales = q.output_scales;
  DType out_dtype = q.out_dtype;
  bool relu = q.relu;
  float zero_point = float(q.output_zero_point);
  float low = out_dtype == DType::kInt8 ? -128.f : 0.f, high = out_dtype == DType::kInt8 ? 127.f : 255.f;
  const std::vector<int64_t>& shape = sums.shape();
  int64_t channels = shape[channel_axis], inner = 1;
  for (size_t d = channel_axis + 1; d < shape.size(); ++d) inner *= shape[d];
  NDArray out(out_dtype, shape);
  for (int64_t i = 0; i < sums.numel(); ++i) {
    int64_t c = (i / inner) % channels;
    float scale = scales.size() == 1 ? scales[0] : scales[size_t(c)];
    float value = (float(sums.get_as_double(i)) + float(bias.get_as_double(c))) * scale;
    if (relu) value = std::max(value, 0.f);
    out.set_from_double(i, std::clamp(std::nearbyint(value + zero_point), low, high));
  }
  return out;
}

// `float_op`'s kernel over the shifted int32 operands, then requantized.
std::vector<NDArray> quantized_kernel(const std::vector<Value>& args, const AttrsNode& attrs, const char* float_op,
                                      const Attrs& float_attrs, bool convolution) {
  const NDArray& data = tensor_arg(args, 0);
  const NDArray& weight = tensor_arg(args, 1);
  const NDArray& bias = tensor_arg(args, 2);
  const VirtualDevice* any = VirtualDevice::unconstrained();
  std::vector<Value> operands{Value::make_tensor(as_int32(data, quantized_attrs(attrs).input_zero_point), any),
                              Value::make_tensor(as_int32(weight, 0), any)};
  NDArray sums = find_interp_kernel(float_op)->kernel(operands, *float_attrs).at(0);
  return {requantize(sums, bias, attrs, convolution ? 1 : sums.ndim() - 1)};
}

}  // namespace

void register_quantized_kernels() {
  register_interp_kernel(ops::quantized_conv2d(), {[](const std::vector<Value>& args, const AttrsNode& attrs) {
    // nn.conv2d's kernel reads the layouts the int8 operator implies.
    Attrs conv = attrs_with(make_attrs(attrs.entries()), "kernel_layout", std::string("OIHW"));
    return quantized_kernel(args, attrs, "nn.conv2d", conv, true);
  }});
  register_interp_kernel(ops::quantized_dense(), {[](const std::vector<Value>& args, const AttrsNode& attrs) {
    return quantized_kernel(args, attrs, "nn.dense", make_attrs({}), false);
  }});
}

}  // namespace switchyard
