// Reference kernels of the operators along one axis: cumsum (float sums in
// double, each result rounded once; integer sums wrapping) and
// topk_indices (a stable sort of each row's positions: ties keep the lower
// position first; NaN counts as larger than any number, as NumPy sorts it).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"
#include "op/handles.h"
#include "op/scan_attrs.h"

namespace switchyard {

namespace {

// An array seen as (outer, axis, inner) around one axis.
struct AxisView {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t at(int64_t o, int64_t a, int64_t i) const { return (o * length + a) * inner + i; }
};

AxisView axis_view(const std::vector<int64_t>& shape, int64_t axis) {
  AxisView view;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis) view.outer *= shape[size_t(d)];
    else if (d == axis) view.length = shape[size_t(d)];
    else view.inner *= shape[size_t(d)];
  }
  return view;
}

std::vector<NDArray> cumsum_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  expect_numeric_dtype(x, "the input");
  const CumsumAttrs cumsum = cumsum_attrs(attrs);
  AxisView v = axis_view(x.shape(), normalize_axis_for(cumsum.axis, x.ndim()));
  bool exclusive = cumsum.exclusive, reverse = cumsum.reverse;
  bool floating = dtype_is_float(x.dtype());
  NDArray out(x.dtype(), x.shape());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double sum = 0;
      int64_t wrapped = 0;
      for (int64_t step = 0; step < v.length; ++step) {
        int64_t at = v.at(o, reverse ? v.length - 1 - step : step, i);
        if (exclusive) floating ? store_double(out, at, sum) : store_int(out, at, wrapped);
        if (floating) sum += load_double(x, at);
        else wrapped = wrap_add(wrapped, load_int(x, at));
        if (!exclusive) floating ? store_double(out, at, sum) : store_int(out, at, wrapped);
      }
    }
  return {out};
}

std::vector<NDArray> topk_indices_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  expect_numeric_dtype(x, "the input");
  const TopkAttrs topk = topk_attrs(attrs);
  int64_t axis = normalize_axis_for(topk.axis, x.ndim());
  AxisView v = axis_view(x.shape(), axis);
  int64_t k = topk.k;
  if (k < 1 || k > v.length)
    kernel_fail("k = " + std::to_string(k) + " is outside [1, " + std::to_string(v.length) + "]");
  bool largest = topk.largest;
  std::vector<int64_t> shape = x.shape();
  shape[size_t(axis)] = k;
  NDArray out(DType::kInt64, shape);
  AxisView w = axis_view(shape, axis);
  std::vector<int64_t> order(size_t(v.length));
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      // a ranks before b: larger (or smaller), NaN as the largest value.
      auto before = [&](int64_t a, int64_t b) {
        int64_t pa = v.at(o, a, i), pb = v.at(o, b, i);
        if (!dtype_is_float(x.dtype())) return largest ? int_greater(x, pa, pb) : int_greater(x, pb, pa);
        double va = load_double(x, pa), vb = load_double(x, pb);
        if (std::isnan(va) || std::isnan(vb)) return largest ? !std::isnan(vb) : !std::isnan(va);
        return largest ? va > vb : va < vb;
      };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::stable_sort(order.begin(), order.end(), before);
      for (int64_t p = 0; p < k; ++p) out.as<int64_t>()[w.at(o, p, i)] = order[size_t(p)];
    }
  return {out};
}

}  // namespace

void register_scan_kernels() {
  register_interp_kernel(ops::cumsum(), {cumsum_kernel});
  register_interp_kernel(ops::topk_indices(), {topk_indices_kernel});
}

}  // namespace switchyard
