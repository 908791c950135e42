// Reduction kernels (sum, mean, max, prod) as kernel IR, with their
// element-wise prologue inlined into the innermost loop and their epilogue
// applied on store. Float sums and products accumulate in double, integer
// ones wrap in uint64 (the accumulator precision); max keeps NumPy's NaN
// rule (a NaN wins and stays).
//
// When the innermost input axis is reduced, each output element runs its
// own reduction whose inner loop is contiguous. When trailing axes are kept,
// a tile of contiguous output elements accumulates side by side in a local
// array, so the input is still read along memory.
#include <algorithm>

#include "codegen/accumulator.h"
#include "codegen/group_kernel.h"
#include "op/handles.h"
#include "op/registry.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

namespace ki = kernel_ir;

constexpr int64_t kTile = 256;  // contiguous outputs reduced together

struct ReductionPlan {
  const OpNode* op = nullptr;  // sum, mean, max or prod
  std::string name;            // its name, for messages and variable names
  Expr input;
  std::vector<int64_t> shape;  // the input's
  std::vector<bool> reduced;
  int64_t count = 1;           // input elements per output element
  size_t inner_begin = 0;      // the first of the kept axes after the last reduced one
  int64_t inner = 1;           // elements of those axes (contiguous in input and output)
  DType dtype = DType::kFloat32;
};

ReductionPlan plan(const CallNode& call) {
  ReductionPlan p;
  p.op = as<OpNode>(call.op);
  p.name = p.op->name;
  p.input = call.args[0];
  p.shape = shape_of(p.input);
  p.dtype = dtype_of(p.input);
  p.reduced.assign(p.shape.size(), false);
  std::vector<int64_t> axes = reduce_axes(int64_t(p.shape.size()), *call.attrs, p.name);
  for (int64_t a : axes) {
    p.reduced[size_t(a)] = true;
    p.count *= p.shape[size_t(a)];
  }
  p.inner_begin = axes.empty() ? 0 : size_t(axes.back()) + 1;
  for (size_t d = p.inner_begin; d < p.shape.size(); ++d) p.inner *= p.shape[d];
  return p;
}

// Sums, means and products accumulate in the accumulator precision.
bool is_sum(const ReductionPlan& p) { return p.op != ops::max(); }
bool is_product(const ReductionPlan& p) { return p.op == ops::prod(); }

ki::Precision accumulator_precision(const ReductionPlan& p) {
  return is_sum(p) ? ki::Precision::kAccumulator : ki::Precision::kCompute;
}

// The accumulator `name` (an element of it at `at`, for a tile).
ki::Expr accumulator(const ReductionPlan& p, const std::string& name, const ki::Expr& at = nullptr) {
  ki::Expr acc = at ? ki::element(name, p.dtype, at) : ki::var(name, p.dtype);
  return accumulator_precision(p) == ki::Precision::kAccumulator ? ki::in_accumulator(acc) : acc;
}

ki::Expr initial_value(const ReductionPlan& p) {
  if (is_product(p)) return product_start(p.dtype);
  return is_sum(p) ? sum_start(p.dtype) : lowest_value(p.dtype);
}

// The accumulator after taking in `value` (a float one adds in double).
ki::Expr accumulate(const ReductionPlan& p, const ki::Expr& acc, const ki::Expr& value) {
  if (!is_sum(p)) return max_step(acc, value);
  ki::BinaryOp step = is_product(p) ? ki::BinaryOp::kMul : ki::BinaryOp::kAdd;
  return ki::binary(step, acc, dtype_is_float(p.dtype) ? value : widened(p.dtype, value));
}

// The reduced value in the input's compute type.
ki::Expr finish(const ReductionPlan& p, const ki::Expr& acc) {
  if (!is_sum(p)) return acc;
  if (p.op != ops::mean()) return finished_sum(p.dtype, acc);
  if (dtype_is_float(p.dtype)) {
    ki::Expr count = ki::in_accumulator(ki::float_value(p.dtype, double(p.count)));
    return ki::cast(p.dtype, ki::binary(ki::BinaryOp::kDiv, acc, count));
  }
  if (p.count == 0) return ki::int_value(p.dtype, 0);
  // As the reference: the wrapped sum divides as int64, uint64's as its bits.
  DType sum_type = p.dtype == DType::kUInt64 ? DType::kUInt64 : DType::kInt64;
  return ki::cast(p.dtype, ki::binary(ki::BinaryOp::kDiv, ki::cast(sum_type, acc), ki::index(p.count)));
}

// The reduced axes of extent > 1, each a loop, naming their coordinates
// in `coords` ("r2" for axis 2).
std::vector<size_t> reduced_loop_axes(const ReductionPlan& p, std::vector<ki::Expr>* coords) {
  std::vector<size_t> axes;
  for (size_t d = 0; d < p.shape.size(); ++d)
    if (p.reduced[d] && p.shape[d] != 1) {
      axes.push_back(d);
      (*coords)[d] = ki::var("r" + std::to_string(d));
    }
  return axes;
}

// `body` inside the loops over `axes`; the innermost one combines its
// lanes' partial accumulators by `innermost` (kNone: a serial loop).
std::vector<ki::Stmt> inside_loops(const ReductionPlan& p, const std::vector<size_t>& axes, ki::Reduction innermost,
                                   std::vector<ki::Stmt> body) {
  for (size_t i = axes.size(); i-- > 0;) {
    std::string r = "r" + std::to_string(axes[i]);
    ki::Expr extent = ki::index(p.shape[axes[i]]);
    ki::Stmt loop = i + 1 == axes.size() && innermost != ki::Reduction::kNone
                        ? ki::simd_reduction(r, ki::index(0), extent, innermost, "acc", std::move(body))
                        : ki::for_loop(r, ki::index(0), extent, ki::LoopKind::kSerial, std::move(body));
    body = {std::move(loop)};
  }
  return body;
}

// The coordinates of the kept axes in `axes` (input dimensions) from the
// flat position `position` over them, as lets (a coordinate that is always
// 0 needs none).
std::vector<ki::Stmt> kept_coordinates(const ReductionPlan& p, const std::vector<size_t>& axes,
                                       const ki::Expr& position, std::vector<ki::Expr>* coords) {
  std::vector<int64_t> extents;
  for (size_t d : axes) extents.push_back(p.shape[d]);
  std::vector<ki::Expr> values = coordinates_of(IndexAt::at_offset(position), extents, nullptr);
  std::vector<ki::Stmt> lets;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (ki::is_index(values[i], 0)) continue;
    std::string name = "k" + std::to_string(axes[i]);
    lets.push_back(ki::let(name, DType::kInt64, values[i]));
    (*coords)[axes[i]] = ki::var(name);
  }
  return lets;
}

// How the innermost reduced loop's lanes combine: a float max keeps NaN by
// a test OpenMP's max reduction does not make, so it stays serial; the
// kernel IR has no product of lanes, so a product is serial too.
ki::Reduction lane_reduction(const ReductionPlan& p) {
  if (is_product(p)) return ki::Reduction::kNone;
  if (is_sum(p)) return ki::Reduction::kSum;
  return dtype_is_float(p.dtype) ? ki::Reduction::kNone : ki::Reduction::kMax;
}

int64_t grain_for(int64_t elements_per_iteration) {
  return std::max<int64_t>(1, kElementGrain / std::max<int64_t>(elements_per_iteration, 1));
}

// The innermost axis is reduced: one accumulator per output element.
ki::Stmt per_output_reduction(const CpuKernel& k, const ReductionPlan& p) {
  std::vector<size_t> kept;
  for (size_t d = 0; d < p.shape.size(); ++d)
    if (!p.reduced[d]) kept.push_back(d);
  int64_t outputs = 1;
  for (size_t d : kept) outputs *= p.shape[d];
  int counter = 0;
  ki::Expr o = ki::var("o");
  std::vector<ki::Expr> coords(p.shape.size(), ki::index(0));
  std::vector<ki::Stmt> body = kept_coordinates(p, kept, o, &coords);
  body.push_back(ki::declare("acc", initial_value(p)));
  std::vector<size_t> loops = reduced_loop_axes(p, &coords);
  std::vector<ki::Stmt> step;
  ElementLowering prologue = k.lowering(step, counter);
  ki::Expr acc = accumulator(p, "acc");
  step.push_back(ki::assign("acc", accumulate(p, acc, prologue.lower(p.input, IndexAt::at_coords(coords)))));
  for (ki::Stmt& s : inside_loops(p, loops, lane_reduction(p), std::move(step))) body.push_back(std::move(s));
  std::string result = prologue.fresh(p.name);
  body.push_back(ki::let(result, p.dtype, finish(p, acc)));
  k.lower_store_result(body, counter, ki::var(result, p.dtype), IndexAt::at_offset(o));
  return ki::parallel("reduce", outputs, grain_for(p.count),
                      {ki::for_loop("o", ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial, std::move(body))},
                      p.name + " over the reduced axes, one output element at a time");
}

// Trailing kept axes: a tile of contiguous outputs accumulates together.
ki::Stmt tiled_reduction(const CpuKernel& k, const ReductionPlan& p) {
  using ki::BinaryOp;
  std::vector<size_t> outer_kept;
  for (size_t d = 0; d < p.inner_begin; ++d)
    if (!p.reduced[d]) outer_kept.push_back(d);
  int64_t outer_count = 1;
  for (size_t d : outer_kept) outer_count *= p.shape[d];
  int64_t tile = std::min(p.inner, kTile);
  int64_t tiles = (p.inner + tile - 1) / tile;
  bool ragged = p.inner % tile != 0;
  int counter = 0;
  ki::Expr item = ki::var("item"), outer = ki::var("outer"), first = ki::var("first"), j = ki::var("j");
  std::vector<ki::Stmt> body = {
      ki::let("outer", DType::kInt64, tiles == 1 ? item : ki::binary(BinaryOp::kDiv, item, ki::index(tiles))),
      ki::let("first", DType::kInt64,
              tiles == 1 ? ki::index(0) : ki::mul(ki::binary(BinaryOp::kMod, item, ki::index(tiles)), tile))};
  ki::Expr width = ki::index(tile);
  if (ragged) {
    body.push_back(ki::let("width", DType::kInt64,
                           ki::binary(BinaryOp::kMin, width, ki::binary(BinaryOp::kSub, ki::index(p.inner), first))));
    width = ki::var("width");
  }
  std::vector<ki::Expr> coords(p.shape.size(), ki::index(0));
  for (ki::Stmt& s : kept_coordinates(p, outer_kept, outer, &coords)) body.push_back(std::move(s));
  body.push_back(ki::declare_array("acc", p.dtype, accumulator_precision(p), tile));
  body.push_back(ki::for_loop("j", ki::index(0), width, ki::LoopKind::kSerial,
                              {ki::assign_element("acc", j, initial_value(p))}));
  std::vector<size_t> loops = reduced_loop_axes(p, &coords);
  // The inner axes are contiguous in the input: its offset is the outer
  // part's plus first + j.
  std::vector<ki::Expr> head = coords;
  std::vector<int64_t> inner_shape(p.shape.begin() + int64_t(p.inner_begin), p.shape.end());
  ki::Expr position = ki::add(first, j);
  std::vector<ki::Expr> inner_coords = coordinates_of(IndexAt::at_offset(position), inner_shape, nullptr);
  for (size_t d = p.inner_begin; d < p.shape.size(); ++d) {
    head[d] = ki::index(0);
    coords[d] = inner_coords[d - p.inner_begin];
  }
  ki::Expr offset = ki::add(offset_of(IndexAt::at_coords(head), p.shape), position);
  std::vector<ki::Stmt> step;
  ElementLowering prologue = k.lowering(step, counter);
  ki::Expr acc = accumulator(p, "acc", j);
  ki::Expr value = prologue.lower(p.input, IndexAt::at(offset, coords));
  step.push_back(ki::assign_element("acc", j, accumulate(p, acc, value)));
  std::vector<ki::Stmt> lanes = {ki::for_loop("j", ki::index(0), width, ki::LoopKind::kSimd, std::move(step))};
  for (ki::Stmt& s : inside_loops(p, loops, ki::Reduction::kNone, std::move(lanes))) body.push_back(std::move(s));
  std::string result = prologue.fresh(p.name);
  std::vector<ki::Stmt> store = {ki::let(result, p.dtype, finish(p, acc))};
  k.lower_store_result(store, counter, ki::var(result, p.dtype),
                       IndexAt::at_offset(ki::add(ki::add(ki::mul(outer, p.inner), first), j)));
  body.push_back(ki::for_loop("j", ki::index(0), width, ki::LoopKind::kSerial, std::move(store)));
  return ki::parallel("reduce", outer_count * tiles, grain_for(p.count * tile),
                      {ki::for_loop("item", ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial, std::move(body))},
                      p.name + " over the reduced axes, " + std::to_string(tile) + " contiguous outputs at a time");
}

}  // namespace

ki::Kernel lower_reduction_kernel(const CpuKernel& k) {
  ki::Kernel kernel = k.kernel_ir_buffers();
  if (k.result_is_empty()) return kernel;
  ReductionPlan p = plan(*k.master);
  kernel.body.push_back(p.inner == 1 ? per_output_reduction(k, p) : tiled_reduction(k, p));
  return kernel;
}

}  // namespace switchyard
