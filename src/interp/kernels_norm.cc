// Reference kernels of the per-axis operators: nn.softmax (stable: the max is
// subtracted first), nn.layer_norm, nn.batch_norm (inference, as Relay:
// returns (out, moving_mean, moving_var)) and nn.bias_add. Statistics and
// sums are taken in double.
#include <cmath>

#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"
#include "op/handles.h"
#include "op/norm_attrs.h"

namespace switchyard {

namespace {

// An array seen as (outer, axis, inner) around one axis.
struct AxisView {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t at(int64_t o, int64_t a, int64_t i) const { return (o * length + a) * inner + i; }
};

AxisView axis_view(const NDArray& x, int64_t axis) {
  int64_t normalized = normalize_axis_for(axis, x.ndim());
  AxisView view;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    int64_t dim = x.shape()[size_t(d)];
    if (d < normalized) view.outer *= dim;
    else if (d == normalized) view.length = dim;
    else view.inner *= dim;
  }
  return view;
}

// A per-channel parameter: 1-D with `length` elements.
void expect_channel_vector(const NDArray& p, int64_t length, const std::string& role) {
  if (p.ndim() != 1 || p.shape()[0] != length)
    kernel_fail(role + " must have shape (" + std::to_string(length) + "), got " + array_type_string(p));
}

std::vector<NDArray> softmax_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  expect_float_dtype(x, "the input");
  AxisView v = axis_view(x, norm_attrs(attrs).axis);
  NDArray out(x.dtype(), x.shape());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double max = -INFINITY;
      for (int64_t a = 0; a < v.length; ++a) max = std::max(max, load_double(x, v.at(o, a, i)));
      double sum = 0;
      for (int64_t a = 0; a < v.length; ++a) sum += std::exp(load_double(x, v.at(o, a, i)) - max);
      for (int64_t a = 0; a < v.length; ++a)
        store_double(out, v.at(o, a, i), std::exp(load_double(x, v.at(o, a, i)) - max) / sum);
    }
  return {out};
}

// What nn.layer_norm and nn.batch_norm share: data, gamma and beta checked
// against the normalised axis, epsilon, and whether to scale and centre.
struct Normalisation {
  const NDArray& data;
  const NDArray& gamma;
  const NDArray& beta;
  AxisView v;
  double epsilon;
  bool center, scale;
  // gamma * y + beta, as far as scale and center ask.
  double affine(double y, int64_t channel) const {
    if (scale) y *= load_double(gamma, channel);
    if (center) y += load_double(beta, channel);
    return y;
  }
};

Normalisation normalisation_args(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& data = tensor_arg(args, 0);
  expect_float_dtype(data, "data");
  const NormAttrs norm = norm_attrs(attrs);
  Normalisation n{data, tensor_arg(args, 1), tensor_arg(args, 2), axis_view(data, norm.axis), norm.epsilon, norm.center,
                  norm.scale};
  if (n.scale) expect_channel_vector(n.gamma, n.v.length, "gamma");
  if (n.center) expect_channel_vector(n.beta, n.v.length, "beta");
  return n;
}

std::vector<NDArray> layer_norm_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const Normalisation n = normalisation_args(args, attrs);
  const NDArray& data = n.data;
  const AxisView& v = n.v;
  NDArray out(data.dtype(), data.shape());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double sum = 0;
      for (int64_t a = 0; a < v.length; ++a) sum += load_double(data, v.at(o, a, i));
      double mean = sum / double(v.length);
      double squares = 0;
      for (int64_t a = 0; a < v.length; ++a) {
        double d = load_double(data, v.at(o, a, i)) - mean;
        squares += d * d;
      }
      double inv_std = 1.0 / std::sqrt(squares / double(v.length) + n.epsilon);
      for (int64_t a = 0; a < v.length; ++a)
        store_double(out, v.at(o, a, i), n.affine((load_double(data, v.at(o, a, i)) - mean) * inv_std, a));
    }
  return {out};
}

std::vector<NDArray> batch_norm_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const Normalisation n = normalisation_args(args, attrs);
  const NDArray& data = n.data;
  const AxisView& v = n.v;
  const NDArray& moving_mean = tensor_arg(args, 3);
  const NDArray& moving_var = tensor_arg(args, 4);
  expect_channel_vector(moving_mean, v.length, "moving_mean");
  expect_channel_vector(moving_var, v.length, "moving_var");
  NDArray out(data.dtype(), data.shape());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t a = 0; a < v.length; ++a) {
      double inv_std = 1.0 / std::sqrt(load_double(moving_var, a) + n.epsilon);
      for (int64_t i = 0; i < v.inner; ++i) {
        double y = (load_double(data, v.at(o, a, i)) - load_double(moving_mean, a)) * inv_std;
        store_double(out, v.at(o, a, i), n.affine(y, a));
      }
    }
  return {out, moving_mean, moving_var};
}

// data + bias along `axis`: element-wise, so float math in float.
std::vector<NDArray> bias_add_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& data = tensor_arg(args, 0);
  const NDArray& bias = tensor_arg(args, 1);
  expect_numeric_dtype(data, "data");
  expect_equal_dtypes(data, bias, "data", "bias");
  AxisView v = axis_view(data, norm_attrs(attrs).axis);
  expect_channel_vector(bias, v.length, "bias");
  NDArray out(data.dtype(), data.shape());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t a = 0; a < v.length; ++a)
      for (int64_t i = 0; i < v.inner; ++i) {
        int64_t k = v.at(o, a, i);
        if (data.dtype() == DType::kFloat64) store_double(out, k, load_double(data, k) + load_double(bias, a));
        else if (dtype_is_float(data.dtype())) store_float(out, k, load_float(data, k) + load_float(bias, a));
        else store_int(out, k, wrap_add(load_int(data, k), load_int(bias, a)));
      }
  return {out};
}

}  // namespace

void register_norm_kernels() {
  register_interp_kernel(ops::softmax(), {softmax_kernel});
  register_interp_kernel(ops::layer_norm(), {layer_norm_kernel});
  register_interp_kernel(ops::batch_norm(), {batch_norm_kernel, /*returns_tuple=*/true});
  register_interp_kernel(ops::bias_add(), {bias_add_kernel});
}

}  // namespace switchyard
