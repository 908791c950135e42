// Anchors as plain loops, for the dtypes oneDNN does not take (float16,
// bfloat16, integers) and the window shapes it computes differently: matrix
// products, convolution and pooling. Float products and sums accumulate in
// double, integer products wrap in uint64, as the reference does; each
// result element goes through the epilogue as it is stored.
#include <algorithm>
#include <tuple>

#include "backend/cpu_kernel.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "support/error.h"

namespace switchyard {

namespace {

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
  const std::string& op = as<OpNode>(call.op)->name;
  Dims a = shape_of(call.args[0]), b = shape_of(call.args[1]);
  Product p;
  if (op == "nn.dense") {
    p.k = a.back();
    p.n = b[0];
    p.m = count_of(a) / std::max<int64_t>(p.k, 1);
    if (p.k == 0) p.m = count_of(Dims(a.begin(), a.end() - 1));
    p.a_row = p.k, p.a_column = 1, p.b_row = 1, p.b_column = p.k;
  } else if (op == "matmul") {
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
    bool ta = call.attrs->get_bool("transpose_a"), tb = call.attrs->get_bool("transpose_b");
    p.m = ta ? a[2] : a[1], p.k = ta ? a[1] : a[2], p.n = tb ? b[1] : b[2];
    p.a_batch = {a[0]}, p.b_batch = {b[0]}, p.out_batch = {std::max(a[0], b[0])};
    p.a_row = ta ? 1 : p.k, p.a_column = ta ? p.m : 1;
    p.b_row = tb ? 1 : p.n, p.b_column = tb ? p.k : 1;
  }
  p.batches = count_of(p.out_batch);
  return p;
}

// The offset of batch `batch`'s matrix in an operand with `batch_shape`.
std::string batch_offset(const Product& p, const Dims& batch_shape, int64_t matrix) {
  if (count_of(batch_shape) <= 1) return "0";
  ElementIndex at = broadcast_index(ElementIndex::at_offset("batch"), p.out_batch, batch_shape, nullptr);
  return times(offset_of(at, batch_shape), matrix);
}

bool is_float(DType dtype) { return dtype_is_float(dtype); }

std::string accumulator(DType dtype) { return is_float(dtype) ? "double" : "uint64_t"; }

// The accumulated value in the compute type.
std::string finish(DType dtype, const std::string& acc, std::set<CpuHelper>* helpers) {
  if (is_float(dtype)) return round_to_dtype(dtype, "float(" + acc + ")", helpers);
  return compute_type(dtype) + "(int64_t(" + acc + "))";
}

void product(CpuKernel& k) {
  const CallNode& call = *k.master;
  const std::string op = as<OpNode>(call.op)->name;
  Product p = describe_product(call);
  DType dtype = dtype_of(call.args[0]);
  std::string a = k.operand(0), b = k.operand(1);
  auto term = [&](const std::string& buffer, const std::string& offset) {
    std::string v = load_element(dtype, buffer + "[" + offset + "]", &k.helpers);
    return is_float(dtype) ? "double(" + v + ")" : "uint64_t(" + v + ")";
  };
  k.parallel_loop("product", op + at_span(call.span()) + ", one output row at a time", p.batches * p.m,
                  std::max<int64_t>(1, kElementGrain / std::max<int64_t>(p.n * std::max<int64_t>(p.k, 1), 1)),
                  [&](CodeWriter& body) {
                    body.open("for (int64_t row = begin; row < end; ++row)");
                    if (p.batches > 1) {
                      body.line("const int64_t batch = row / " + std::to_string(p.m) + ";");
                      body.line("const int64_t m = row % " + std::to_string(p.m) + ";");
                    } else {
                      body.line("const int64_t m = row;");
                    }
                    body.line("const int64_t a_base = " + batch_offset(p, p.a_batch, p.m * p.k) + " + " +
                              times("m", p.a_row) + ";");
                    body.line("const int64_t b_base = " + batch_offset(p, p.b_batch, p.k * p.n) + ";");
                    body.open("for (int64_t n = 0; n < " + std::to_string(p.n) + "; ++n)");
                    body.line(accumulator(dtype) + " acc = 0;");
                    body.line("for (int64_t kk = 0; kk < " + std::to_string(p.k) + "; ++kk) acc += " +
                              term(a, "a_base + " + times("kk", p.a_column)) + " * " +
                              term(b, "b_base + " + times("kk", p.b_row) + " + " + times("n", p.b_column)) + ";");
                    body.line("const " + compute_type(dtype) + " result = " + finish(dtype, "acc", &k.helpers) + ";");
                    k.store_result(body, "result", ElementIndex::at_offset("row * " + std::to_string(p.n) + " + n"));
                    body.close();
                    body.close();
                  });
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
  std::tie(w.stride_h, w.stride_w) = attr_pair(call, "strides");
  std::tie(w.dilation_h, w.dilation_w) = attr_pair(call, "dilation");
  w.pad = expand_padding(call.attrs->get_ints("padding"));
  if (has_kernel_weights) {
    const Dims& weight = shape_of(call.args[1]);
    w.kernel_h = weight[2], w.kernel_w = weight[3];
  } else {
    std::tie(w.kernel_h, w.kernel_w) = expand_pair(call.attrs->get_ints("pool_size"));
  }
  return w;
}

// Opens the loops over output positions (oh, ow).
void open_window(CodeWriter& body, const Window& w) {
  body.open("for (int64_t oh = 0; oh < " + std::to_string(w.out_h) + "; ++oh)");
  body.open("for (int64_t ow = 0; ow < " + std::to_string(w.out_w) + "; ++ow)");
}

// Opens the loops over the window's taps (kh, kw), naming the input row and
// column (ih, iw) they read.
void open_taps(CodeWriter& body, const Window& w) {
  body.open("for (int64_t kh = 0; kh < " + std::to_string(w.kernel_h) + "; ++kh)");
  body.open("for (int64_t kw = 0; kw < " + std::to_string(w.kernel_w) + "; ++kw)");
  body.line("const int64_t ih = " + plus(times("oh", w.stride_h) + " + " + times("kh", w.dilation_h), -w.pad.top) +
            ";");
  body.line("const int64_t iw = " + plus(times("ow", w.stride_w) + " + " + times("kw", w.dilation_w), -w.pad.left) +
            ";");
}

std::string in_bounds(const Window& w) {
  return "ih >= 0 && ih < " + std::to_string(w.height) + " && iw >= 0 && iw < " + std::to_string(w.width);
}

void convolution(CpuKernel& k) {
  const CallNode& call = *k.master;
  Window w = describe_window(call, true);
  DType dtype = dtype_of(call.args[0]);
  const Dims& weight = shape_of(call.args[1]);
  int64_t groups = call.attrs->get_int("groups"), out_channels = weight[0];
  int64_t group_in = w.channels / groups, group_out = out_channels / groups;
  std::string x = k.operand(0), f = k.operand(1);
  k.parallel_loop("convolution", "nn.conv2d" + at_span(call.span()) + ", one output plane at a time",
                  w.batch * out_channels, 1, [&](CodeWriter& body) {
                    body.open("for (int64_t plane = begin; plane < end; ++plane)");
                    body.line("const int64_t n = plane / " + std::to_string(out_channels) + ";");
                    body.line("const int64_t o = plane % " + std::to_string(out_channels) + ";");
                    body.line("const int64_t first_channel = o / " + std::to_string(group_out) + " * " +
                              std::to_string(group_in) + ";");
                    open_window(body, w);
                    body.line(accumulator(dtype) + " acc = 0;");
                    body.open("for (int64_t c = 0; c < " + std::to_string(group_in) + "; ++c)");
                    open_taps(body, w);
                    body.line("if (!(" + in_bounds(w) + ")) continue;  // zero padding");
                    std::string xv = load_element(dtype, x + "[((n * " + std::to_string(w.channels) +
                                                             " + first_channel + c) * " + std::to_string(w.height) +
                                                             " + ih) * " + std::to_string(w.width) + " + iw]",
                                                  &k.helpers);
                    std::string fv = load_element(dtype, f + "[((o * " + std::to_string(group_in) + " + c) * " +
                                                             std::to_string(w.kernel_h) + " + kh) * " +
                                                             std::to_string(w.kernel_w) + " + kw]",
                                                  &k.helpers);
                    std::string cast = accumulator(dtype);
                    body.line("acc += " + cast + "(" + xv + ") * " + cast + "(" + fv + ");");
                    body.close();
                    body.close();
                    body.close();
                    body.line("const " + compute_type(dtype) + " result = " + finish(dtype, "acc", &k.helpers) + ";");
                    k.store_result(body, "result",
                                   ElementIndex::at_offset("(plane * " + std::to_string(w.out_h) + " + oh) * " +
                                                           std::to_string(w.out_w) + " + ow"));
                    body.close();
                    body.close();
                    body.close();
                  });
}

void pool(CpuKernel& k) {
  const CallNode& call = *k.master;
  const std::string op = as<OpNode>(call.op)->name;
  DType dtype = dtype_of(call.args[0]);
  bool global = op == "nn.global_avg_pool2d", is_max = op == "nn.max_pool2d";
  Window w;
  if (global) {
    const Dims& in = shape_of(call.args[0]);
    w = Window{in[0], in[1], in[2], in[3], 1, 1};
    w.kernel_h = in[2], w.kernel_w = in[3];
  } else {
    w = describe_window(call, false);
  }
  bool include_pad = op == "nn.avg_pool2d" && call.attrs->get_bool("count_include_pad");
  std::string x = k.operand(0);
  std::string type = compute_type(dtype);
  k.parallel_loop("pool", op + at_span(call.span()) + ", one plane at a time", w.batch * w.channels, 1,
                  [&](CodeWriter& body) {
                    body.open("for (int64_t plane = begin; plane < end; ++plane)");
                    open_window(body, w);
                    if (is_max) body.line(type + " best = " + lowest_literal(dtype) + ";");
                    else body.line("double sum = 0.0;");
                    if (!is_max) body.line(include_pad ? "int64_t real = 0, padded = 0;" : "int64_t real = 0;");
                    open_taps(body, w);
                    if (include_pad)
                      body.line("if (ih < " + std::to_string(w.height + w.pad.bottom) + " && iw < " +
                                std::to_string(w.width + w.pad.right) + ") ++padded;");
                    body.line("if (!(" + in_bounds(w) + ")) continue;");
                    std::string v = load_element(dtype, x + "[(plane * " + std::to_string(w.height) + " + ih) * " +
                                                            std::to_string(w.width) + " + iw]",
                                                 &k.helpers);
                    if (is_max) {
                      body.line("const " + type + " value = " + v + ";");
                      // NaN wins and stays (the interpreter's and the max reduction's rule).
                      body.line(is_float(dtype) ? "best = (best != best || value <= best) ? best : value;"
                                                : "best = value > best ? value : best;");
                    } else {
                      body.line("sum += double(" + v + ");");
                      body.line("++real;");
                    }
                    body.close();
                    body.close();
                    std::string result = "best";
                    if (!is_max) {
                      std::string divisor = include_pad ? "padded" : "real";
                      std::string mean = divisor + " == 0 ? " + (global ? std::string("NAN") : "0.0") +
                                         " : sum / double(" + divisor + ")";
                      if (is_float(dtype)) {
                        result = round_to_dtype(dtype, "float(" + mean + ")", &k.helpers);
                      } else {
                        k.helpers.insert(CpuHelper::kFloatToInt);
                        result = type + "(sy_float_to_int64(" + mean + "))";
                      }
                    }
                    body.line("const " + type + " result = " + result + ";");
                    k.store_result(body, "result",
                                   ElementIndex::at_offset("(plane * " + std::to_string(w.out_h) + " + oh) * " +
                                                           std::to_string(w.out_w) + " + ow"));
                    body.close();
                    body.close();
                    body.close();
                  });
}

}  // namespace

void generate_direct_kernel(CpuKernel& k) {
  const std::string& op = as<OpNode>(k.master->op)->name;
  if (op == "nn.dense" || op == "matmul" || op == "nn.batch_matmul") return product(k);
  if (op == "nn.conv2d") {
    if (k.master->attrs->get_string("data_layout") != "NCHW" || k.master->attrs->get_string("kernel_layout") != "OIHW")
      throw Error(ErrorKind::kBackend, "the CPU kernel of nn.conv2d takes NCHW data and OIHW weights",
                  k.master->span());
    return convolution(k);
  }
  if (op == "nn.max_pool2d" || op == "nn.avg_pool2d" || op == "nn.global_avg_pool2d") {
    if (k.master->attrs->get_string("layout") != "NCHW")
      throw Error(ErrorKind::kBackend, "the CPU kernel of " + op + " takes NCHW data", k.master->span());
    return pool(k);
  }
  throw Error(ErrorKind::kBackend, "no CPU kernel for operator '" + op + "'", k.master->span());
}

}  // namespace switchyard
