// Reference kernels of the element-wise and broadcasting operators: binary
// arithmetic and comparisons, unary math, clip, cast and where.
//
// Floating-point math is done in float (float16 and bfloat16 through float,
// rounded back on store); integer math in int64 wrapping to the dtype's width
// as NumPy does; integer division truncates toward zero (C and TVM's Div) and
// division by zero is an error.
#include <cmath>
#include <limits>

#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"

namespace switchyard {

namespace {

using FloatBinary = float (*)(float, float);
using IntBinary = int64_t (*)(int64_t, int64_t);

// Applies `on_float` or `on_int` to each broadcast pair of elements. The
// result dtype is `out_dtype` (a's dtype for arithmetic, bool for comparisons).
template <typename OnFloat, typename OnInt>
NDArray broadcast_binary(const NDArray& a, const NDArray& b, DType out_dtype, OnFloat on_float, OnInt on_int) {
  expect_equal_dtypes(a, b, "argument 0", "argument 1");
  std::vector<int64_t> shape = broadcast_shape(a.shape(), b.shape());
  std::vector<int64_t> a_at = broadcast_offsets(shape, a.shape());
  std::vector<int64_t> b_at = broadcast_offsets(shape, b.shape());
  NDArray out(out_dtype, shape);
  bool is_float = dtype_is_float(a.dtype());
  for (size_t i = 0; i < a_at.size(); ++i) {
    int64_t k = int64_t(i);
    if (is_float) {
      auto r = on_float(load_float(a, a_at[i]), load_float(b, b_at[i]));
      if constexpr (std::is_same_v<decltype(r), bool>) store_int(out, k, r);
      else store_float(out, k, r);
    } else {
      auto r = on_int(load_int(a, a_at[i]), load_int(b, b_at[i]));
      store_int(out, k, int64_t(r));
    }
  }
  return out;
}

void register_arithmetic(const std::string& name, FloatBinary on_float, IntBinary on_int) {
  register_interp_kernel(name, {[on_float, on_int](const std::vector<Value>& args, const AttrsNode&) {
                                  const NDArray& a = tensor_arg(args, 0);
                                  const NDArray& b = tensor_arg(args, 1);
                                  expect_numeric_dtype(a, "argument 0");
                                  return std::vector<NDArray>{broadcast_binary(a, b, a.dtype(), on_float, on_int)};
                                }});
}

// Comparisons (and maximum/minimum) also accept bool, compared as 0 and 1.
template <typename OnFloat, typename OnInt>
void register_comparison(const std::string& name, std::optional<DType> out_dtype, OnFloat on_float, OnInt on_int) {
  register_interp_kernel(name, {[=](const std::vector<Value>& args, const AttrsNode&) {
                                  const NDArray& a = tensor_arg(args, 0);
                                  const NDArray& b = tensor_arg(args, 1);
                                  return std::vector<NDArray>{
                                      broadcast_binary(a, b, out_dtype.value_or(a.dtype()), on_float, on_int)};
                                }});
}

int64_t int_divide(int64_t a, int64_t b) {
  if (b == 0) throw Error(ErrorKind::kRuntime, "integer division by zero");
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 overflows; wrap as the narrower types do
  return a / b;
}

int64_t int_power(int64_t base, int64_t exponent) {
  if (exponent < 0) throw Error(ErrorKind::kRuntime, "integer power with a negative exponent");
  int64_t result = 1;
  while (exponent > 0) {  // square and multiply, wrapping
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

// NaN propagates through maximum and minimum, as in NumPy.
float float_maximum(float a, float b) { return std::isnan(a) || a > b ? a : b; }
float float_minimum(float a, float b) { return std::isnan(a) || a < b ? a : b; }

void register_binary_kernels() {
  register_arithmetic("add", [](float a, float b) { return a + b; }, wrap_add);
  register_arithmetic("subtract", [](float a, float b) { return a - b; }, wrap_sub);
  register_arithmetic("multiply", [](float a, float b) { return a * b; }, wrap_mul);
  register_arithmetic("divide", [](float a, float b) { return a / b; }, int_divide);
  register_arithmetic("power", [](float a, float b) { return std::pow(a, b); }, int_power);
  register_comparison("maximum", std::nullopt, float_maximum, [](int64_t a, int64_t b) { return std::max(a, b); });
  register_comparison("minimum", std::nullopt, float_minimum, [](int64_t a, int64_t b) { return std::min(a, b); });
  register_comparison("equal", DType::kBool, [](float a, float b) { return a == b; },
                      [](int64_t a, int64_t b) { return a == b; });
  register_comparison("less", DType::kBool, [](float a, float b) { return a < b; },
                      [](int64_t a, int64_t b) { return a < b; });
  register_comparison("greater", DType::kBool, [](float a, float b) { return a > b; },
                      [](int64_t a, int64_t b) { return a > b; });
}

using FloatUnary = float (*)(float);
using IntUnary = int64_t (*)(int64_t);

// `on_int` null: the operator needs a floating-point input.
void register_unary(const std::string& name, FloatUnary on_float, IntUnary on_int) {
  register_interp_kernel(name, {[on_float, on_int](const std::vector<Value>& args, const AttrsNode&) {
                                  const NDArray& x = tensor_arg(args, 0);
                                  if (!on_int) expect_float_dtype(x, "the input");
                                  expect_numeric_dtype(x, "the input");
                                  NDArray out(x.dtype(), x.shape());
                                  for (int64_t i = 0; i < x.numel(); ++i) {
                                    if (dtype_is_float(x.dtype())) store_float(out, i, on_float(load_float(x, i)));
                                    else store_int(out, i, on_int(load_int(x, i)));
                                  }
                                  return std::vector<NDArray>{out};
                                }});
}

void register_unary_kernels() {
  register_unary("negative", [](float x) { return -x; }, [](int64_t x) { return wrap_sub(0, x); });
  register_unary("abs", [](float x) { return std::fabs(x); }, [](int64_t x) { return x < 0 ? wrap_sub(0, x) : x; });
  register_unary("nn.relu", [](float x) { return x > 0 ? x : (std::isnan(x) ? x : 0.0f); },
                 [](int64_t x) { return x > 0 ? x : int64_t(0); });
  register_unary("exp", [](float x) { return std::exp(x); }, nullptr);
  register_unary("log", [](float x) { return std::log(x); }, nullptr);
  register_unary("sqrt", [](float x) { return std::sqrt(x); }, nullptr);
  register_unary("rsqrt", [](float x) { return 1.0f / std::sqrt(x); }, nullptr);
  register_unary("erf", [](float x) { return std::erf(x); }, nullptr);
  register_unary("tanh", [](float x) { return std::tanh(x); }, nullptr);
  register_unary("sigmoid", [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, nullptr);
}

// clip(x, a_min, a_max): bounds are converted to x's dtype first (integers
// truncate them, as TVM casts them), then x is clamped.
std::vector<NDArray> clip_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  expect_numeric_dtype(x, "the input");
  double a_min = float_attr(attrs, "a_min"), a_max = float_attr(attrs, "a_max");
  NDArray out(x.dtype(), x.shape());
  if (dtype_is_float(x.dtype())) {
    float lo = float(a_min), hi = float(a_max);
    for (int64_t i = 0; i < x.numel(); ++i) store_float(out, i, std::min(std::max(load_float(x, i), lo), hi));
  } else {
    int64_t lo = double_to_int64(a_min), hi = double_to_int64(a_max);
    for (int64_t i = 0; i < x.numel(); ++i) store_int(out, i, std::min(std::max(load_int(x, i), lo), hi));
  }
  return {out};
}

// cast: float to float rounds; float to integer truncates toward zero,
// saturates to int64 and wraps to the width (store_double); integer to
// integer wraps; anything to bool is "!= 0".
std::vector<NDArray> cast_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  std::string name = string_attr(attrs, "dtype");
  std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) kernel_fail("unknown dtype \"" + name + "\"");
  NDArray out(*dtype, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (!dtype_is_float(x.dtype())) store_int(out, i, load_int(x, i));
    else if (*dtype == DType::kBool) store_int(out, i, load_float(x, i) != 0.0f);
    else if (dtype_is_float(*dtype)) store_float(out, i, load_float(x, i));
    else store_double(out, i, load_float(x, i));
  }
  return {out};
}

// where(cond, x, y): x's element where cond is nonzero, else y's.
std::vector<NDArray> where_kernel(const std::vector<Value>& args, const AttrsNode&) {
  const NDArray& cond = tensor_arg(args, 0);
  const NDArray& x = tensor_arg(args, 1);
  const NDArray& y = tensor_arg(args, 2);
  expect_equal_dtypes(x, y, "x", "y");
  std::vector<int64_t> shape = broadcast_shape(broadcast_shape(cond.shape(), x.shape()), y.shape());
  std::vector<int64_t> cond_at = broadcast_offsets(shape, cond.shape());
  std::vector<int64_t> x_at = broadcast_offsets(shape, x.shape());
  std::vector<int64_t> y_at = broadcast_offsets(shape, y.shape());
  NDArray out(x.dtype(), shape);
  for (size_t i = 0; i < cond_at.size(); ++i) {
    if (load_double(cond, cond_at[i]) != 0.0) copy_element(x, x_at[i], out, int64_t(i));
    else copy_element(y, y_at[i], out, int64_t(i));
  }
  return {out};
}

}  // namespace

void register_elementwise_kernels() {
  register_binary_kernels();
  register_unary_kernels();
  register_interp_kernel("clip", {clip_kernel});
  register_interp_kernel("cast", {cast_kernel});
  register_interp_kernel("where", {where_kernel});
}

}  // namespace switchyard
