// Anchors as plain loops built as kernel IR, for the dtypes oneDNN does not
// take (float16, bfloat16, integers) and the window shapes it computes
// differently: matrix products, convolution and pooling. Float products and
// sums accumulate in double, integer products wrap in uint64, as the
// reference does (accumulator.h); a window's taps in its padding are
// skipped by a bounds test; each result element goes through the epilogue
// as it is stored.
#include <algorithm>
#include <limits>
#include <tuple>

#include "codegen/accumulator.h"
#include "codegen/group_kernel.h"
#include "op/handles.h"
#include "op/linear_attrs.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "op/window_attrs.h"
#include "support/error.h"

namespace switchyard {

namespace {

namespace ki = kernel_ir;
using ki::BinaryOp;
using Dims = std::vector<int64_t>;

int64_t count_of(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// out[batch, m, n] = sum over k of a[a_batch + m * a_row + k * a_column] *
// b[b_batch + k * b_row + n * b_column].
struct Product {
  int64_t batches = 1, m = 1, n = 1, k = 1;
  Dims out_batch, a_batch, b_batch;  // batch shapes (broadcast)
  int64_t a_row = 0, a_column = 0, b_row = 0, b_column = 0;
};

Product describe_product(const CallNode& call) {
  const OpNode* op = as<OpNode>(call.op);
  Dims a = shape_of(call.args[0]), b = shape_of(call.args[1]);
  Product p;
  if (op == ops::dense()) {
    p.k = a.back();
    p.n = b[0];
    p.m = count_of(a) / std::max<int64_t>(p.k, 1);
    if (p.k == 0) p.m = count_of(Dims(a.begin(), a.end() - 1));
    p.a_row = p.k, p.a_column = 1, p.b_row = 1, p.b_column = p.k;
  } else if (op == ops::matmul()) {
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    p.m = a[a.size() - 2], p.k = a.back(), p.n = b.back();
    p.a_batch = Dims(a.begin(), a.end() - 2);
    p.b_batch = Dims(b.begin(), b.end() - 2);
    size_t rank = std::max(p.a_batch.size(), p.b_batch.size());
    p.a_batch.insert(p.a_batch.begin(), rank - p.a_batch.size(), 1);
    p.b_batch.insert(p.b_batch.begin(), rank - p.b_batch.size(), 1);
    for (size_t d = 0; d < rank; ++d) p.out_batch.push_back(std::max(p.a_batch[d], p.b_batch[d]));
    p.a_row = p.k, p.a_column = 1, p.b_row = p.n, p.b_column = 1;
  } else {  // nn.batch_matmul
    const LinearAttrs linear = linear_attrs(*call.attrs);
    bool ta = linear.transpose_a, tb = linear.transpose_b;
    p.m = ta ? a[2] : a[1], p.k = ta ? a[1] : a[2], p.n = tb ? b[1] : b[2];
    p.a_batch = {a[0]}, p.b_batch = {b[0]}, p.out_batch = {std::max(a[0], b[0])};
    p.a_row = ta ? 1 : p.k, p.a_column = ta ? p.m : 1;
    p.b_row = tb ? 1 : p.n, p.b_column = tb ? p.k : 1;
  }
  p.batches = count_of(p.out_batch);
  return p;
}

// The offset of batch `batch`'s matrix in an operand with `batch_shape`.
ki::Expr batch_offset(const Product& p, const Dims& batch_shape, int64_t matrix) {
  if (count_of(batch_shape) <= 1) return ki::index(0);
  IndexAt at = broadcast_index(IndexAt::at_offset(ki::var("batch")), p.out_batch, batch_shape, nullptr);
  return ki::mul(offset_of(at, batch_shape), matrix);
}

ki::Stmt let_index(std::string name, ki::Expr value) { return ki::let(std::move(name), DType::kInt64, std::move(value)); }

ki::Expr divided(const ki::Expr& e, int64_t k) { return k == 1 ? e : ki::binary(BinaryOp::kDiv, e, ki::index(k)); }

// The serial loop `var` over [0, extent).
ki::Stmt loop(std::string var, int64_t extent, std::vector<ki::Stmt> body) {
  return ki::for_loop(std::move(var), ki::index(0), ki::index(extent), ki::LoopKind::kSerial, std::move(body));
}

// The parallel loop `function` over [0, count), whose iterations `var` run `body`.
ki::Stmt parallel_over(std::string function, std::string comment, int64_t count, int64_t grain, std::string var,
                       std::vector<ki::Stmt> body) {
  return ki::parallel(std::move(function), count, grain,
                      {ki::for_loop(std::move(var), ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial,
                                    std::move(body))},
                      std::move(comment));
}

// `acc += a * b` in the accumulator type.
ki::Stmt multiply_add(DType dtype, const ki::Expr& acc, const ki::Expr& a, const ki::Expr& b) {
  return ki::assign(acc->name, ki::binary(BinaryOp::kAdd, acc,
                                          ki::binary(BinaryOp::kMul, widened(dtype, a), widened(dtype, b))));
}

// The sum `acc` finished as `result`, then stored at `at` through the epilogue.
void store_sum(const CpuKernel& k, std::vector<ki::Stmt>& body, DType dtype, const ki::Expr& acc, const IndexAt& at) {
  body.push_back(ki::let("result", dtype, finished_sum(dtype, acc)));
  int counter = 0;
  k.lower_store_result(body, counter, ki::var("result", dtype), at);
}

ki::Stmt product(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const OpNode* op = as<OpNode>(call.op);
  Product p = describe_product(call);
  DType dtype = dtype_of(call.args[0]);
  ki::Expr row = ki::var("row"), m = ki::var("m"), n = ki::var("n"), kk = ki::var("kk");
  ki::Expr acc = ki::in_accumulator(ki::var("acc", dtype));
  std::vector<ki::Stmt> body;
  if (p.batches > 1) {
    body.push_back(let_index("batch", ki::binary(BinaryOp::kDiv, row, ki::index(p.m))));
    body.push_back(let_index("m", ki::binary(BinaryOp::kMod, row, ki::index(p.m))));
  } else {
    body.push_back(let_index("m", row));
  }
  body.push_back(let_index("a_base", ki::add(batch_offset(p, p.a_batch, p.m * p.k), ki::mul(m, p.a_row))));
  body.push_back(let_index("b_base", batch_offset(p, p.b_batch, p.k * p.n)));
  ki::Expr a = ki::load(k.operand(0), dtype, ki::add(ki::var("a_base"), ki::mul(kk, p.a_column)));
  ki::Expr b = ki::load(k.operand(1), dtype,
                        ki::add(ki::add(ki::var("b_base"), ki::mul(kk, p.b_row)), ki::mul(n, p.b_column)));
  std::vector<ki::Stmt> element = {ki::declare("acc", sum_start(dtype)),
                                   loop("kk", p.k, {multiply_add(dtype, acc, a, b)})};
  store_sum(k, element, dtype, acc, IndexAt::at_offset(ki::add(ki::mul(row, p.n), n)));
  body.push_back(loop("n", p.n, std::move(element)));
  return parallel_over("product", op->name + at_span(call.span()) + ", one output row at a time", p.batches * p.m,
                       std::max<int64_t>(1, kElementGrain / std::max<int64_t>(p.n * std::max<int64_t>(p.k, 1), 1)),
                       "row", std::move(body));
}

struct Window {
  int64_t batch = 1, channels = 1, height = 1, width = 1;  // input
  int64_t out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  Padding2D pad;
};

Window describe_window(const CallNode& call, bool has_kernel_weights) {
  const Dims& in = shape_of(call.args[0]);
  const Dims& out = shape_of(Expr(&call));
  Window w{in[0], in[1], in[2], in[3], out[2], out[3]};
  WindowAttrs attrs = window_attrs(call);
  w.stride_h = attrs.stride_h, w.stride_w = attrs.stride_w;
  w.dilation_h = attrs.dilation_h, w.dilation_w = attrs.dilation_w;
  w.pad = attrs.padding;
  if (has_kernel_weights) {
    const Dims& weight = shape_of(call.args[1]);
    w.kernel_h = weight[2], w.kernel_w = weight[3];
  } else {
    w.kernel_h = attrs.pool_h, w.kernel_w = attrs.pool_w;
  }
  return w;
}

// The loops over output positions (oh, ow) around `body`.
ki::Stmt over_outputs(const Window& w, std::vector<ki::Stmt> body) {
  return loop("oh", w.out_h, {loop("ow", w.out_w, std::move(body))});
}

// The loops over the window's taps (kh, kw) around the lets of the input
// row and column they read (ih, iw) and `body`.
ki::Stmt over_taps(const Window& w, std::vector<ki::Stmt> body) {
  ki::Expr ih = ki::add(ki::add(ki::mul(ki::var("oh"), w.stride_h), ki::mul(ki::var("kh"), w.dilation_h)), -w.pad.top);
  ki::Expr iw = ki::add(ki::add(ki::mul(ki::var("ow"), w.stride_w), ki::mul(ki::var("kw"), w.dilation_w)), -w.pad.left);
  body.insert(body.begin(), {let_index("ih", ih), let_index("iw", iw)});
  return loop("kh", w.kernel_h, {loop("kw", w.kernel_w, std::move(body))});
}

// Whether the tap (ih, iw) lies in the input, not its padding.
ki::Expr in_bounds(const Window& w) {
  ki::Expr ih = ki::var("ih"), iw = ki::var("iw");
  auto within = [](const ki::Expr& i, int64_t extent) {
    return ki::binary(BinaryOp::kAnd, ki::binary(BinaryOp::kLessEqual, ki::index(0), i),
                      ki::binary(BinaryOp::kLess, i, ki::index(extent)));
  };
  return ki::binary(BinaryOp::kAnd, within(ih, w.height), within(iw, w.width));
}

// Element (plane, ih, iw) of an NCHW tensor whose planes are h x w.
ki::Expr plane_element(const ki::Expr& plane, int64_t h, const ki::Expr& row, int64_t w, const ki::Expr& column) {
  return ki::add(ki::mul(ki::add(ki::mul(plane, h), row), w), column);
}

ki::Stmt convolution(const CpuKernel& k) {
  const CallNode& call = *k.master;
  Window w = describe_window(call, true);
  DType dtype = dtype_of(call.args[0]);
  const Dims& weight = shape_of(call.args[1]);
  int64_t groups = window_attrs(call).groups, out_channels = weight[0];
  int64_t group_in = w.channels / groups, group_out = out_channels / groups;
  ki::Expr plane = ki::var("plane"), n = ki::var("n"), o = ki::var("o"), c = ki::var("c");
  ki::Expr acc = ki::in_accumulator(ki::var("acc", dtype));
  ki::Expr channel = ki::add(ki::add(ki::mul(n, w.channels), ki::var("first_channel")), c);
  ki::Expr x = ki::load(k.operand(0), dtype, plane_element(channel, w.height, ki::var("ih"), w.width, ki::var("iw")));
  ki::Expr f = ki::load(k.operand(1), dtype,
                        plane_element(ki::add(ki::mul(o, group_in), c), w.kernel_h, ki::var("kh"), w.kernel_w,
                                      ki::var("kw")));
  // Zero padding adds nothing: a tap outside the input is skipped.
  ki::Stmt tap = ki::if_then_else(in_bounds(w), {multiply_add(dtype, acc, x, f)});
  std::vector<ki::Stmt> output = {ki::declare("acc", sum_start(dtype)), loop("c", group_in, {over_taps(w, {tap})})};
  store_sum(k, output, dtype, acc, IndexAt::at_offset(plane_element(plane, w.out_h, ki::var("oh"), w.out_w, ki::var("ow"))));
  std::vector<ki::Stmt> body = {
      let_index("n", ki::binary(BinaryOp::kDiv, plane, ki::index(out_channels))),
      let_index("o", ki::binary(BinaryOp::kMod, plane, ki::index(out_channels))),
      let_index("first_channel", ki::mul(divided(o, group_out), group_in)),
      over_outputs(w, std::move(output)),
  };
  return parallel_over("convolution", ops::conv2d()->name + at_span(call.span()) + ", one output plane at a time",
                       w.batch * out_channels, 1, "plane", std::move(body));
}

// The mean of `sum` over `count` taps in double; `empty` when there are none.
ki::Expr window_mean(const ki::Expr& count, double empty) {
  ki::Expr sum = ki::in_accumulator(ki::var("sum", DType::kFloat32));
  return ki::select(ki::binary(BinaryOp::kNotEqual, count, ki::index(0)),
                    ki::binary(BinaryOp::kDiv, sum, ki::in_accumulator(ki::cast(DType::kFloat32, count))),
                    ki::in_accumulator(ki::float_value(DType::kFloat32, empty)));
}

ki::Stmt pool(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const OpNode* op = as<OpNode>(call.op);
  DType dtype = dtype_of(call.args[0]);
  bool global = op == ops::global_avg_pool2d(), is_max = op == ops::max_pool2d();
  Window w;
  if (global) {
    const Dims& in = shape_of(call.args[0]);
    w = Window{in[0], in[1], in[2], in[3], 1, 1};
    w.kernel_h = in[2], w.kernel_w = in[3];
  } else {
    w = describe_window(call, false);
  }
  bool include_pad = op == ops::avg_pool2d() && window_attrs(call).count_include_pad;
  ki::Expr plane = ki::var("plane");
  ki::Expr value = ki::load(k.operand(0), dtype, plane_element(plane, w.height, ki::var("ih"), w.width, ki::var("iw")));
  ki::Expr best = ki::var("best", dtype), real = ki::var("real"), padded = ki::var("padded");
  std::vector<ki::Stmt> output, tap;
  if (is_max) {
    output.push_back(ki::declare("best", lowest_value(dtype)));
    tap.push_back(ki::let("value", dtype, value));
    tap.push_back(ki::assign("best", max_step(best, ki::var("value", dtype))));  // NaN wins, as in max
  } else {
    output.push_back(ki::declare("sum", sum_start(DType::kFloat32)));
    output.push_back(ki::declare("real", ki::index(0)));
    if (include_pad) output.push_back(ki::declare("padded", ki::index(0)));
    ki::Expr sum = ki::in_accumulator(ki::var("sum", DType::kFloat32));
    tap.push_back(ki::assign("sum", ki::binary(BinaryOp::kAdd, sum, widened(DType::kFloat32, value))));
    tap.push_back(ki::assign("real", ki::add(real, 1)));
  }
  std::vector<ki::Stmt> taps;
  if (include_pad) {  // a tap counts when it lies in the padded input
    ki::Expr in_padded = ki::binary(BinaryOp::kAnd,
                                    ki::binary(BinaryOp::kLess, ki::var("ih"), ki::index(w.height + w.pad.bottom)),
                                    ki::binary(BinaryOp::kLess, ki::var("iw"), ki::index(w.width + w.pad.right)));
    taps.push_back(ki::if_then_else(in_padded, {ki::assign("padded", ki::add(padded, 1))}));
  }
  taps.push_back(ki::if_then_else(in_bounds(w), std::move(tap)));
  output.push_back(over_taps(w, std::move(taps)));
  ki::Expr result = best;
  if (!is_max) {
    // An empty window (only a global pool of an empty plane) is NaN or 0.
    double empty = global ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    output.push_back(ki::let("result", dtype, ki::cast(dtype, window_mean(include_pad ? padded : real, empty))));
    result = ki::var("result", dtype);
  }
  int counter = 0;
  k.lower_store_result(output, counter, result,
                       IndexAt::at_offset(plane_element(plane, w.out_h, ki::var("oh"), w.out_w, ki::var("ow"))));
  return parallel_over("pool", op->name + at_span(call.span()) + ", one plane at a time", w.batch * w.channels, 1, "plane",
                       {over_outputs(w, std::move(output))});
}

ki::Stmt direct_loop(const CpuKernel& k) {
  const OpNode* op = as<OpNode>(k.master->op);
  if (op == ops::dense() || op == ops::matmul() || op == ops::batch_matmul()) return product(k);
  if (op == ops::conv2d()) {
    const WindowAttrs w = window_attrs(*k.master);
    if (w.data_layout != "NCHW" || w.kernel_layout != "OIHW")
      throw Error(ErrorKind::kBackend, "the CPU kernel of " + op->name + " takes NCHW data and OIHW weights",
                  k.master->span());
    return convolution(k);
  }
  if (op == ops::max_pool2d() || op == ops::avg_pool2d() || op == ops::global_avg_pool2d()) {
    if (window_attrs(*k.master).data_layout != "NCHW")
      throw Error(ErrorKind::kBackend, "the CPU kernel of " + op->name + " takes NCHW data", k.master->span());
    return pool(k);
  }
  throw Error(ErrorKind::kBackend, "no CPU kernel for operator '" + op->name + "'", k.master->span());
}

}  // namespace

ki::Kernel lower_direct_kernel(const CpuKernel& k) {
  ki::Kernel kernel = k.kernel_ir_buffers();
  kernel.body = {direct_loop(k)};
  return kernel;
}

}  // namespace switchyard
