// Reference kernels of the reductions sum, mean, max and prod, Relay's
// attributes: axis (None = every axis, or a list; an empty list reduces
// nothing), keepdims, and exclude (reduce the axes *not* listed). Float sums
// and products are taken in double, integer ones in wrapping int64; an
// integer mean truncates.
#include <cmath>

#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"
#include "op/handles.h"
#include "op/reduce_attrs.h"

namespace switchyard {

namespace {

struct Reduction {
  std::vector<int64_t> kept_shape;          // the input shape with reduced axes set to 1
  std::vector<int64_t> out_shape;           // kept_shape, or without those axes unless keepdims
  std::vector<int64_t> out_of_input;        // for each input element, its output element
  int64_t count = 0;                        // input elements per output element
};

Reduction plan_reduction(const NDArray& x, const AttrsNode& attrs) {
  int64_t rank = x.ndim();
  std::vector<bool> reduced(size_t(rank), false);
  const ReduceAttrs reduce = reduce_attrs(attrs);
  if (const std::optional<std::vector<int64_t>>& axes = reduce.axis) {
    for (int64_t axis : *axes) {
      int64_t a = normalize_axis_for(axis, rank);
      if (reduced[size_t(a)]) kernel_fail("axis " + std::to_string(axis) + " is listed twice");
      reduced[size_t(a)] = true;
    }
    if (reduce.exclude)
      for (size_t a = 0; a < reduced.size(); ++a) reduced[a] = !reduced[a];
  } else {
    reduced.assign(size_t(rank), true);
  }
  Reduction r;
  bool keepdims = reduce.keepdims;
  r.count = 1;
  for (size_t d = 0; d < size_t(rank); ++d) {
    int64_t dim = x.shape()[d];
    r.kept_shape.push_back(reduced[d] ? 1 : dim);
    if (reduced[d]) r.count *= dim;
    if (!reduced[d] || keepdims) r.out_shape.push_back(reduced[d] ? 1 : dim);
  }
  r.out_of_input = broadcast_offsets(x.shape(), r.kept_shape);
  return r;
}

// Each output element's fold of its group from `start`: in double for a
// float input (`floats`), in wrapping int64 for an integer one (`ints`).
struct Folded {
  std::vector<double> floats;
  std::vector<int64_t> ints;
};

template <typename CombineFloats, typename CombineInts>
Folded fold_groups(const NDArray& x, const Reduction& r, int64_t outputs, int64_t start, CombineFloats floats,
                   CombineInts ints) {
  Folded folded;
  if (dtype_is_float(x.dtype())) {
    folded.floats.assign(size_t(outputs), double(start));
    for (size_t i = 0; i < r.out_of_input.size(); ++i) {
      double& value = folded.floats[size_t(r.out_of_input[i])];
      value = floats(value, load_double(x, int64_t(i)));
    }
  } else {
    folded.ints.assign(size_t(outputs), start);
    for (size_t i = 0; i < r.out_of_input.size(); ++i) {
      int64_t& value = folded.ints[size_t(r.out_of_input[i])];
      value = ints(value, load_int(x, int64_t(i)));
    }
  }
  return folded;
}

std::vector<NDArray> sum_or_mean(const std::vector<Value>& args, const AttrsNode& attrs, bool mean) {
  const NDArray& x = tensor_arg(args, 0);
  expect_numeric_dtype(x, "the input");
  Reduction r = plan_reduction(x, attrs);
  NDArray out(x.dtype(), r.out_shape);
  int64_t outputs = out.numel();
  if (!dtype_is_float(x.dtype()) && mean && r.count == 0)
    throw Error(ErrorKind::kRuntime, "integer mean over zero elements");
  Folded sums = fold_groups(x, r, outputs, 0, [](double a, double b) { return a + b; }, wrap_add);
  for (int64_t o = 0; o < outputs; ++o) {
    if (dtype_is_float(x.dtype())) {
      store_double(out, o, mean ? sums.floats[size_t(o)] / double(r.count) : sums.floats[size_t(o)]);
      continue;
    }
    int64_t s = sums.ints[size_t(o)];
    if (mean) s = x.dtype() == DType::kUInt64 ? int64_t(uint64_t(s) / uint64_t(r.count)) : s / r.count;
    store_int(out, o, s);
  }
  return {out};
}

// The product of each group (1 over no elements).
std::vector<NDArray> prod_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  expect_numeric_dtype(x, "the input");
  Reduction r = plan_reduction(x, attrs);
  NDArray out(x.dtype(), r.out_shape);
  int64_t outputs = out.numel();
  Folded products = fold_groups(x, r, outputs, 1, [](double a, double b) { return a * b; }, wrap_mul);
  for (int64_t o = 0; o < outputs; ++o) {
    if (dtype_is_float(x.dtype())) store_double(out, o, products.floats[size_t(o)]);
    else store_int(out, o, products.ints[size_t(o)]);
  }
  return {out};
}

// The largest element of each group, copied exactly (any dtype, bool included).
std::vector<NDArray> max_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  Reduction r = plan_reduction(x, attrs);
  NDArray out(x.dtype(), r.out_shape);
  if (r.count == 0 && out.numel() > 0) throw Error(ErrorKind::kRuntime, "max over zero elements has no value");
  std::vector<int64_t> best(size_t(out.numel()), -1);
  bool is_float = dtype_is_float(x.dtype());
  for (size_t i = 0; i < r.out_of_input.size(); ++i) {
    int64_t& b = best[size_t(r.out_of_input[i])];
    int64_t k = int64_t(i);
    if (b < 0) {
      b = k;
    } else if (is_float) {
      // NaN wins and stays, as in NumPy.
      double current = load_double(x, b), candidate = load_double(x, k);
      if (!std::isnan(current) && (candidate > current || std::isnan(candidate))) b = k;
    } else if (int_greater(x, k, b)) {
      b = k;
    }
  }
  for (size_t o = 0; o < best.size(); ++o) copy_element(x, best[o], out, int64_t(o));
  return {out};
}

}  // namespace

void register_reduce_kernels() {
  register_interp_kernel(ops::sum(), {[](const std::vector<Value>& args, const AttrsNode& attrs) {
                           return sum_or_mean(args, attrs, false);
                         }});
  register_interp_kernel(ops::mean(), {[](const std::vector<Value>& args, const AttrsNode& attrs) {
                           return sum_or_mean(args, attrs, true);
                         }});
  register_interp_kernel(ops::max(), {max_kernel});
  register_interp_kernel(ops::prod(), {prod_kernel});
}

}  // namespace switchyard
