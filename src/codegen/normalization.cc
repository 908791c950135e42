// Normalisation kernels along one axis, as kernel IR: nn.softmax (the row's
// maximum is subtracted before exponentiating, each exponential computed
// once; its sum is a vectorised float sum over blocks, float_sum, which
// cannot overflow: each term is at most 1), nn.layer_norm (mean, then
// variance: two passes) and nn.batch_norm (inference: the moving
// statistics, per channel), both in double as the reference computes them.
// Softmax and layer_norm apply their element-wise epilogue as they store.
// Their values are kept in float32 (float16 and bfloat16 round from it) or,
// for float64, in double.
#include <algorithm>
#include <limits>

#include "codegen/accumulator.h"
#include "codegen/group_kernel.h"
#include "op/handles.h"
#include "op/norm_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "support/error.h"

namespace switchyard {

namespace ki = kernel_ir;
using ki::BinaryOp;

AxisView axis_view(const std::vector<int64_t>& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis) v.outer *= shape[size_t(d)];
    else if (d == axis) v.length = shape[size_t(d)];
    else v.inner *= shape[size_t(d)];
  }
  return v;
}

ki::Expr row_start(const AxisView& v) {
  ki::Expr row = ki::var("row");
  ki::Expr inner = ki::index(v.inner);
  return v.inner == 1 ? ki::mul(row, v.length)
                      : ki::add(ki::mul(ki::binary(BinaryOp::kDiv, row, inner), v.length * v.inner),
                                ki::binary(BinaryOp::kMod, row, inner));
}

ki::Stmt over_rows(const AxisView& v, std::vector<ki::Stmt> body) {
  body.insert(body.begin(), ki::let("base", DType::kInt64, row_start(v)));
  return ki::for_loop("row", ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial, std::move(body));
}

int64_t row_grain(int64_t length) { return std::max<int64_t>(1, kElementGrain / std::max<int64_t>(length, 1)); }

namespace {

// The dtype the loops of a `dtype` input keep their values in: float32
// (float16 and bfloat16 round from it), or float64's own.
DType working_dtype(DType dtype) { return dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

ki::Expr f32(double value, DType working = DType::kFloat32) { return ki::float_value(working, value); }
ki::Expr f32_var(const std::string& name, DType working = DType::kFloat32) { return ki::var(name, working); }

// The element-wise operator `op` on `working` values, computed in their
// compute type or in double.
ki::Expr float_call(const std::string& op, std::vector<ki::Expr> args,
                    ki::Precision precision = ki::Precision::kCompute, DType working = DType::kFloat32) {
  std::vector<DType> dtypes(args.size(), working);
  return ki::call({as<OpNode>(op_get(op)), Attrs(), dtypes, working, Span()}, std::move(args), precision);
}

// A working value rounded to what `dtype` holds.
ki::Expr rounded(DType dtype, const ki::Expr& value) {
  return dtype == working_dtype(dtype) ? value : ki::cast(dtype, value);
}

// "base + a * inner": the element at position `a` along the axis of row `base`.
ki::Expr along(const AxisView& v, const ki::Expr& a) { return ki::add(ki::var("base"), ki::mul(a, v.inner)); }

// Appends `target += term(a)` over a = 0 .. length-1 in float, as a simd
// sum reduction (one partial sum per vector lane) over blocks of kSumBlock
// elements whose totals are added up after each block: every float sum adds
// at most kSumBlock / lanes + length / kSumBlock terms, so long rows stay
// accurate (rows up to kSumBlock are one block). `before` opens each
// element's body ahead of the term, e.g. to name and store a value.
constexpr int64_t kSumBlock = 1024;

void float_sum(std::vector<ki::Stmt>& body, const std::string& target, int64_t length, std::vector<ki::Stmt> before,
               const ki::Expr& term, DType working) {
  body.push_back(ki::declare(target, f32(0.0, working)));
  auto sum_loop = [&](const std::string& sum, ki::Expr begin, ki::Expr end) {
    std::vector<ki::Stmt> element = before;
    element.push_back(ki::assign(sum, ki::binary(BinaryOp::kAdd, f32_var(sum, working), term)));
    return ki::simd_reduction("a", std::move(begin), std::move(end), ki::Reduction::kSum, sum, std::move(element));
  };
  if (length <= kSumBlock) return body.push_back(sum_loop(target, ki::index(0), ki::index(length)));
  std::string sum = target + "_block";
  ki::Expr block = ki::var("block");
  std::vector<ki::Stmt> blocks = {
      ki::let("block", DType::kInt64, ki::mul(ki::var("block_index"), kSumBlock)),
      ki::let("block_end", DType::kInt64,
              ki::binary(BinaryOp::kMin, ki::add(block, kSumBlock), ki::index(length))),
      ki::declare(sum, f32(0.0, working)),
      sum_loop(sum, block, ki::var("block_end")),
      ki::assign(target, ki::binary(BinaryOp::kAdd, f32_var(target, working), f32_var(sum, working))),
  };
  body.push_back(ki::for_loop("block_index", ki::index(0), ki::index((length + kSumBlock - 1) / kSumBlock),
                              ki::LoopKind::kSerial, std::move(blocks)));
}

// Three passes over each row: its maximum; e^(x - max), computed once, stored
// into the output and summed in float; the scaling by 1 / sum (with the
// epilogue). The stored exponentials are read back at the element that
// holds them, so a float32 output may hold them (it never aliases the input).
// Another output dtype would round them, so there the exponential is
// computed again in the last pass.
ki::Stmt softmax(const CpuKernel& k, const AxisView& v, DType dtype) {
  DType working = working_dtype(dtype);
  ki::Expr a = ki::var("a");
  ki::Expr x = ki::load(k.operand(0), dtype, along(v, a));
  ki::Expr row_max = f32_var("row_max", working);
  ki::Expr exponential = float_call("exp", {ki::binary(BinaryOp::kSub, x, row_max)}, ki::Precision::kCompute, working);
  bool keep_exp = k.output_dtype() == working;
  // Where the result's element `a` goes, so the last pass reads its own exponential.
  ki::Expr slot = offset_of(IndexAt::at_offset(along(v, a)), k.outputs.at(0)->shape);
  std::vector<ki::Stmt> row;
  // NaN is skipped here, as by the interpreter's std::max, and comes out of
  // the exponential below.
  row.push_back(ki::declare("row_max", f32(-std::numeric_limits<double>::infinity(), working)));
  row.push_back(ki::simd_reduction("a", ki::index(0), ki::index(v.length), ki::Reduction::kMax, "row_max",
                                   {ki::assign("row_max", ki::select(ki::binary(BinaryOp::kGreater, x, row_max), x,
                                                                     row_max))}));
  std::vector<ki::Stmt> before = {ki::let("e", working, exponential)};
  if (keep_exp) before.push_back(ki::store(k.output(0), slot, f32_var("e", working)));
  float_sum(row, "sum", v.length, std::move(before), f32_var("e", working), working);
  row.push_back(ki::let("scale", working, ki::binary(BinaryOp::kDiv, f32(1.0, working), f32_var("sum", working))));
  ki::Expr e = keep_exp ? ki::load(k.output(0), working, slot) : exponential;
  std::vector<ki::Stmt> scaled = {
      ki::let("softmax", working, rounded(dtype, ki::binary(BinaryOp::kMul, e, f32_var("scale", working))))};
  int counter = 0;
  k.lower_store_result(scaled, counter, f32_var("softmax", working), IndexAt::at_offset(along(v, a)));
  row.push_back(ki::for_loop("a", ki::index(0), ki::index(v.length), ki::LoopKind::kSimd, std::move(scaled)));
  return ki::parallel("softmax", v.outer * v.inner, row_grain(v.length), {over_rows(v, std::move(row))},
                      ops::softmax()->name + at_span(k.master->span()) + ", one row at a time");
}

// A float value held in double, and a double variable.
ki::Expr in_double(const ki::Expr& value) { return widened(DType::kFloat32, value); }
ki::Expr double_var(const std::string& name) { return ki::in_accumulator(f32_var(name)); }
ki::Expr double_value(double value) { return ki::in_accumulator(f32(value)); }

// 1 / sqrt(variance + epsilon), in double.
ki::Expr inverse_deviation(const ki::Expr& variance, double epsilon) {
  ki::Expr deviation =
      float_call("sqrt", {ki::binary(BinaryOp::kAdd, variance, double_value(epsilon))}, ki::Precision::kAccumulator);
  return ki::binary(BinaryOp::kDiv, double_value(1.0), deviation);
}

// Appends `target` = the sum of `term` over a = 0 .. length-1, in double
// (a simd sum reduction, one partial sum per lane).
void double_sum(std::vector<ki::Stmt>& body, const std::string& target, int64_t length, const ki::Expr& term) {
  body.push_back(ki::declare(target, sum_start(DType::kFloat32)));
  body.push_back(ki::simd_reduction("a", ki::index(0), ki::index(length), ki::Reduction::kSum, target,
                                    {ki::assign(target, ki::binary(BinaryOp::kAdd, double_var(target), term))}));
}

// The mean, then the mean square deviation from it (two passes, so no
// cancellation), then the normalised row with the epilogue: all in double,
// as the reference computes them, so neither a sum nor a square of huge
// values overflows (a float variance of +-3e38 is inf, which normalised
// the row to 0).
ki::Stmt layer_norm(const CpuKernel& k, const AxisView& v, DType dtype) {
  const NormAttrs attrs = norm_attrs(*k.master->attrs);
  ki::Expr a = ki::var("a");
  ki::Expr x = in_double(ki::load(k.operand(0), dtype, along(v, a)));
  ki::Expr length = double_value(double(v.length));
  ki::Expr deviation = ki::binary(BinaryOp::kSub, x, double_var("mean"));
  ki::Expr value = ki::binary(BinaryOp::kMul, deviation, double_var("inv_std"));
  if (attrs.scale)
    value = ki::binary(BinaryOp::kMul, value, in_double(ki::load(k.operand(1), dtype, a)));
  if (attrs.center)
    value = ki::binary(BinaryOp::kAdd, value, in_double(ki::load(k.operand(2), dtype, a)));
  std::vector<ki::Stmt> row;
  double_sum(row, "sum", v.length, x);
  row.push_back(ki::declare("mean", ki::binary(BinaryOp::kDiv, double_var("sum"), length)));
  double_sum(row, "squares", v.length, ki::binary(BinaryOp::kMul, deviation, deviation));
  ki::Expr variance = ki::binary(BinaryOp::kDiv, double_var("squares"), length);
  row.push_back(ki::declare("inv_std", inverse_deviation(variance, attrs.epsilon)));
  DType working = working_dtype(dtype);
  std::vector<ki::Stmt> normalised = {ki::let("layer_norm", working, ki::cast(dtype, value))};
  int counter = 0;
  k.lower_store_result(normalised, counter, f32_var("layer_norm", working), IndexAt::at_offset(along(v, a)));
  row.push_back(ki::for_loop("a", ki::index(0), ki::index(v.length), ki::LoopKind::kSimd, std::move(normalised)));
  return ki::parallel("layer_norm", v.outer * v.inner, row_grain(v.length), {over_rows(v, std::move(row))},
                      ops::layer_norm()->name + at_span(k.master->span()) + ", one row at a time");
}

// Output 0 is normalized per channel, in double as the reference computes
// it (x - mean of +-3e38 overflows a float); outputs 1 and 2 are copies of
// the moving mean and variance (Relay's inference form).
std::vector<ki::Stmt> batch_norm(const CpuKernel& k, const AxisView& v, DType dtype) {
  const NormAttrs attrs = norm_attrs(*k.master->attrs);
  auto channel = [&](size_t input) { return in_double(ki::load(k.operand(input), dtype, ki::var("c"))); };
  ki::Expr plane = ki::var("plane"), i = ki::var("i");
  ki::Expr x = in_double(ki::load(k.operand(0), dtype, ki::add(ki::var("base"), i)));
  ki::Expr normalised =
      ki::binary(BinaryOp::kMul, ki::binary(BinaryOp::kSub, x, double_var("mean")), double_var("inv_std"));
  if (attrs.scale) normalised = ki::binary(BinaryOp::kMul, normalised, double_var("gamma"));
  if (attrs.center) normalised = ki::binary(BinaryOp::kAdd, normalised, double_var("beta"));
  std::vector<ki::Stmt> body = {
      ki::let("c", DType::kInt64, ki::binary(BinaryOp::kMod, plane, ki::index(v.length))),
      ki::declare("mean", channel(3)),
      ki::declare("inv_std", inverse_deviation(channel(4), attrs.epsilon)),
  };
  if (attrs.scale) body.push_back(ki::declare("gamma", channel(1)));
  if (attrs.center) body.push_back(ki::declare("beta", channel(2)));
  body.push_back(ki::let("base", DType::kInt64, ki::mul(plane, v.inner)));
  body.push_back(ki::for_loop("i", ki::index(0), ki::index(v.inner), ki::LoopKind::kSimd,
                              {ki::store(k.output(0), ki::add(ki::var("base"), i), ki::cast(dtype, normalised))}));
  ki::Stmt planes = ki::for_loop("plane", ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial, std::move(body));
  return {ki::parallel("batch_norm", v.outer * v.length, row_grain(v.inner), {std::move(planes)},
                       ops::batch_norm()->name + at_span(k.master->span()) + ", one channel plane at a time"),
          ki::copy(k.output(1), k.operand(3), v.length, "The moving statistics pass through unchanged."),
          ki::copy(k.output(2), k.operand(4), v.length)};
}

}  // namespace

ki::Kernel lower_normalization_kernel(const CpuKernel& k) {
  ki::Kernel kernel = k.kernel_ir_buffers();
  if (k.result_is_empty()) return kernel;
  const OpNode* op = as<OpNode>(k.master->op);
  const Expr& data = k.master->args[0];
  DType dtype = dtype_of(data);
  if (!dtype_is_float(dtype))
    throw Error(ErrorKind::kBackend, "'" + op->name + "' needs a floating-point input, got " + dtype_name(dtype),
                k.master->span());
  const std::vector<int64_t>& shape = shape_of(data);
  AxisView v = axis_view(shape, normalize_axis(norm_attrs(*k.master->attrs).axis, int64_t(shape.size()), op->name));
  if (op == ops::softmax()) kernel.body = {softmax(k, v, dtype)};
  else if (op == ops::layer_norm()) kernel.body = {layer_norm(k, v, dtype)};
  else kernel.body = batch_norm(k, v, dtype);
  return kernel;
}

}  // namespace switchyard
