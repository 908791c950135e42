// Kernels along one axis that carry state from element to element, as
// kernel IR: cumsum (a running sum per row, in the accumulator type as the
// reference sums: double for floats, wrapping for integers) and
// topk_indices (k passes over each row, each choosing the best element
// that ranks after the previous choice, so no scratch memory: ties by
// position, NaN as the largest value, as the reference sorts).
#include "codegen/accumulator.h"
#include "codegen/group_kernel.h"
#include "op/handles.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/scan_attrs.h"

namespace switchyard {

namespace {

namespace ki = kernel_ir;
using ki::BinaryOp;

// The element at position `a` along the axis of the row starting at `base`.
ki::Expr along(const AxisView& v, const ki::Expr& base, const ki::Expr& a) { return ki::add(base, ki::mul(a, v.inner)); }

ki::Stmt cumsum(const CpuKernel& k, const AxisView& v, DType dtype) {
  const CumsumAttrs attrs = cumsum_attrs(*k.master->attrs);
  bool exclusive = attrs.exclusive, reverse = attrs.reverse;
  ki::Expr step = ki::var("step");
  ki::Expr a = reverse ? ki::binary(BinaryOp::kSub, ki::index(v.length - 1), step) : step;
  ki::Expr at = along(v, ki::var("base"), ki::var("a"));
  ki::Expr x = ki::load(k.operand(0), dtype, at);
  ki::Expr sum = ki::in_accumulator(ki::var("sum", dtype));
  std::vector<ki::Stmt> element = {ki::let("a", DType::kInt64, a)};
  int counter = 0;
  if (exclusive) k.lower_store_result(element, counter, finished_sum(dtype, sum), IndexAt::at_offset(at));
  element.push_back(ki::assign("sum", ki::binary(BinaryOp::kAdd, sum, dtype_is_float(dtype) ? x : widened(dtype, x))));
  if (!exclusive) k.lower_store_result(element, counter, finished_sum(dtype, sum), IndexAt::at_offset(at));
  std::vector<ki::Stmt> row = {
      ki::declare("sum", sum_start(dtype)),
      ki::for_loop("step", ki::index(0), ki::index(v.length), ki::LoopKind::kSerial, std::move(element))};
  return ki::parallel("cumsum", v.outer * v.inner, row_grain(v.length), {over_rows(v, std::move(row))},
                      ops::cumsum()->name + at_span(k.master->span()) + ", one row at a time");
}

// Whether value a ranks strictly before value b: larger (or smaller), a
// NaN larger than any number.
ki::Expr ranks_before(const ki::Expr& a, const ki::Expr& b, bool largest) {
  ki::Expr plain = ki::binary(largest ? BinaryOp::kGreater : BinaryOp::kLess, a, b);
  if (!dtype_is_float(a->dtype)) return plain;
  auto is_nan = [](const ki::Expr& v) { return ki::binary(BinaryOp::kNotEqual, v, v); };
  auto is_number = [](const ki::Expr& v) { return ki::binary(BinaryOp::kLessEqual, v, v); };
  ki::Expr nan_first = largest ? ki::binary(BinaryOp::kAnd, is_nan(a), is_number(b))
                               : ki::binary(BinaryOp::kAnd, is_nan(b), is_number(a));
  return ki::binary(BinaryOp::kOr, plain, nan_first);
}

// Whether values a and b rank the same: equal, or both NaN.
ki::Expr ties(const ki::Expr& a, const ki::Expr& b) {
  ki::Expr equal = ki::binary(BinaryOp::kAnd, ki::binary(BinaryOp::kLessEqual, a, b), ki::binary(BinaryOp::kLessEqual, b, a));
  if (!dtype_is_float(a->dtype)) return equal;
  auto is_nan = [](const ki::Expr& v) { return ki::binary(BinaryOp::kNotEqual, v, v); };
  return ki::binary(BinaryOp::kOr, equal, ki::binary(BinaryOp::kAnd, is_nan(a), is_nan(b)));
}

ki::Stmt topk_indices(const CpuKernel& k, const AxisView& v, DType dtype) {
  const TopkAttrs attrs = topk_attrs(*k.master->attrs);
  bool largest = attrs.largest;
  int64_t count = attrs.k;
  AxisView out{v.outer, count, v.inner};
  ki::Expr a = ki::var("a"), value = ki::var("value", dtype);
  ki::Expr previous = ki::var("previous", dtype), previous_at = ki::var("previous_at");
  ki::Expr best = ki::var("best", dtype), best_at = ki::var("best_at");
  auto less_than_zero = [](const ki::Expr& e) { return ki::binary(BinaryOp::kLess, e, ki::index(0)); };
  // After the previous choice: the first pass, a value ranking after it, or
  // a tie at a later position.
  ki::Expr after = ki::binary(
      BinaryOp::kOr, less_than_zero(previous_at),
      ki::binary(BinaryOp::kOr, ranks_before(previous, value, largest),
                 ki::binary(BinaryOp::kAnd, ties(value, previous), ki::binary(BinaryOp::kGreater, a, previous_at))));
  ki::Expr wins = ki::binary(BinaryOp::kAnd, after,
                             ki::binary(BinaryOp::kOr, less_than_zero(best_at), ranks_before(value, best, largest)));
  std::vector<ki::Stmt> scan = {
      ki::let("value", dtype, ki::load(k.operand(0), dtype, along(v, ki::var("base"), a))),
      ki::if_then_else(wins, {ki::assign("best", value), ki::assign("best_at", a)})};
  std::vector<ki::Stmt> choose = {
      ki::declare("best", previous), ki::declare("best_at", ki::index(-1)),
      ki::for_loop("a", ki::index(0), ki::index(v.length), ki::LoopKind::kSerial, std::move(scan)),
      ki::assign("previous", best), ki::assign("previous_at", best_at)};
  int counter = 0;
  k.lower_store_result(choose, counter, best_at, IndexAt::at_offset(along(out, ki::var("out_base"), ki::var("p"))));
  std::vector<ki::Stmt> row = {
      ki::let("out_base", DType::kInt64, row_start(out)),
      ki::declare("previous", ki::load(k.operand(0), dtype, ki::var("base"))), ki::declare("previous_at", ki::index(-1)),
      ki::for_loop("p", ki::index(0), ki::index(count), ki::LoopKind::kSerial, std::move(choose))};
  return ki::parallel("topk_indices", v.outer * v.inner, row_grain(v.length * count), {over_rows(v, std::move(row))},
                      ops::topk_indices()->name + at_span(k.master->span()) + ", k passes over each row");
}

}  // namespace

ki::Kernel lower_scan_kernel(const CpuKernel& k) {
  ki::Kernel kernel = k.kernel_ir_buffers();
  const OpNode* op = as<OpNode>(k.master->op);
  const Expr& data = k.master->args[0];
  const std::vector<int64_t>& shape = shape_of(data);
  int64_t axis = op == ops::cumsum() ? cumsum_attrs(*k.master->attrs).axis : topk_attrs(*k.master->attrs).axis;
  AxisView v = axis_view(shape, normalize_axis(axis, int64_t(shape.size()), op->name));
  kernel.body = {op == ops::cumsum() ? cumsum(k, v, dtype_of(data)) : topk_indices(k, v, dtype_of(data))};
  return kernel;
}

}  // namespace switchyard
