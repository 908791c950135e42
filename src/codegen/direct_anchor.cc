// Anchors as plain loops built as kernel IR, for the dtypes oneDNN does not
// take (float16, bfloat16, integers) and the window shapes it computes
// differently: matrix products here, convolution and pooling in
// window_loops.cc. Float products and sums accumulate in double, integer
// products wrap in uint64, as the reference does (accumulator.h); each
// result element goes through the epilogue as it is stored.
#include <algorithm>
#include <tuple>

#include "codegen/accumulator.h"
#include "codegen/group_kernel.h"
#include "codegen/window_loops.h"
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

ki::Stmt direct_loop(const CpuKernel& k) {
  const OpNode* op = as<OpNode>(k.master->op);
  if (op == ops::dense() || op == ops::matmul() || op == ops::batch_matmul()) return product(k);
  if (op == ops::conv2d()) {
    const WindowAttrs w = window_attrs(*k.master);
    if (w.data_layout != "NCHW" || w.kernel_layout != "OIHW")
      throw Error(ErrorKind::kBackend, "the CPU kernel of " + op->name + " takes NCHW data and OIHW weights",
                  k.master->span());
    return convolution_loops(k);
  }
  if (op == ops::max_pool2d() || op == ops::avg_pool2d() || op == ops::global_avg_pool2d()) {
    if (window_attrs(*k.master).data_layout != "NCHW")
      throw Error(ErrorKind::kBackend, "the CPU kernel of " + op->name + " takes NCHW data", k.master->span());
    return pool_loops(k);
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
