// Convolution and pooling (NCHW data, OIHW weights) as generated loops, for
// the dtypes and configurations no library takes. One parallel iteration
// computes a tile of one output row (of a block of output channels, for a
// convolution): the tile's accumulators are a local array over its
// columns, and each tap adds the input row it reads to them in a simd loop
// over the columns whose input lies inside the image (contiguous at stride
// 1), so padding narrows the loop's range instead of testing each element.
// Each output element takes its taps in the reference's order (input
// channel, kh, kw). Pools and non-float32 convolutions accumulate as
// direct_anchor.cc's loops do (accumulator.h): their sums are the
// interpreter's. float32 convolutions sum in float with fused
// multiply-adds, as oneDNN does (docs/operators.md, "Edge cases").
#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "codegen/accumulator.h"
#include "codegen/group_kernel.h"
#include "codegen/window_loops.h"
#include "op/handles.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "op/window_attrs.h"

namespace switchyard {

namespace {

namespace ki = kernel_ir;
using ki::BinaryOp;
using Dims = std::vector<int64_t>;

// The most columns one iteration accumulates: its arrays stay in L1.
constexpr int64_t kColumnTile = 128;

struct Window {
  int64_t batch = 1, channels = 1, height = 1, width = 1;  // input
  int64_t out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  Padding2D pad;
  int64_t tile = 1, tiles = 1;  // columns per tile, tiles per output row
  // Between a block's accumulator rows: the tile rounded up to 8 columns,
  // so every row's vectors share the first's alignment (a 28-column stride
  // left every other row's 8-float vectors split across lines).
  int64_t row_stride = 1;
};

Window describe_window(const CallNode& call) {
  const OpNode* op = as<OpNode>(call.op);
  const Dims& in = shape_of(call.args[0]);
  const Dims& out = shape_of(Expr(&call));
  Window w{in[0], in[1], in[2], in[3], out[2], out[3]};
  if (op == ops::global_avg_pool2d()) {
    w.kernel_h = in[2], w.kernel_w = in[3];
  } else {
    WindowAttrs attrs = window_attrs(call);
    w.stride_h = attrs.stride_h, w.stride_w = attrs.stride_w;
    w.dilation_h = attrs.dilation_h, w.dilation_w = attrs.dilation_w;
    w.pad = attrs.padding;
    if (op == ops::conv2d()) {
      const Dims& weight = shape_of(call.args[1]);
      w.kernel_h = weight[2], w.kernel_w = weight[3];
    } else {
      w.kernel_h = attrs.pool_h, w.kernel_w = attrs.pool_w;
    }
  }
  w.tile = std::clamp<int64_t>(w.out_w, 1, kColumnTile);
  w.tiles = (w.out_w + w.tile - 1) / w.tile;
  w.row_stride = (w.tile + 7) / 8 * 8;
  return w;
}

ki::Stmt let_index(std::string name, ki::Expr value) { return ki::let(std::move(name), DType::kInt64, std::move(value)); }
ki::Expr quotient(const ki::Expr& a, int64_t k) { return k == 1 ? a : ki::binary(BinaryOp::kDiv, a, ki::index(k)); }
ki::Expr remainder(const ki::Expr& a, int64_t k) { return ki::binary(BinaryOp::kMod, a, ki::index(k)); }
ki::Expr smaller(const ki::Expr& a, const ki::Expr& b) { return ki::binary(BinaryOp::kMin, a, b); }
ki::Expr larger(const ki::Expr& a, const ki::Expr& b) { return ki::select(ki::binary(BinaryOp::kLess, a, b), b, a); }
ki::Expr minus(const ki::Expr& a, const ki::Expr& b) { return ki::binary(BinaryOp::kSub, a, b); }

ki::Stmt loop(std::string var, ki::Expr begin, ki::Expr end, std::vector<ki::Stmt> body,
              ki::LoopKind kind = ki::LoopKind::kSerial) {
  return ki::for_loop(std::move(var), std::move(begin), std::move(end), kind, std::move(body));
}
ki::Stmt loop(std::string var, int64_t extent, std::vector<ki::Stmt> body) {
  return loop(std::move(var), ki::index(0), ki::index(extent), std::move(body));
}

// Where tap column kw reads, relative to ow * stride_w: folded when kw is a constant.
ki::Expr column_shift(const Window& w, const ki::Expr& kw) {
  if (kw->kind == ki::ExprKind::kIndex) return ki::index(kw->int_value * w.dilation_w - w.pad.left);
  return ki::add(ki::mul(kw, w.dilation_w), -w.pad.left);
}

// The first output column ow whose tap, at input column ow * stride +
// shift, lies at or after input column `limit`: ceil((limit - shift) /
// stride), never below 0.
ki::Expr first_column_at(const ki::Expr& shift, int64_t limit, int64_t stride) {
  if (shift->kind == ki::ExprKind::kIndex)
    return ki::index((std::max<int64_t>(limit - shift->int_value, 0) + stride - 1) / stride);
  ki::Expr distance = larger(minus(ki::index(limit), shift), ki::index(0));
  return quotient(ki::add(distance, stride - 1), stride);
}

// Whether input row ih lies in the image.
ki::Expr row_inside(const Window& w) {
  return ki::binary(BinaryOp::kAnd, ki::binary(BinaryOp::kLessEqual, ki::index(0), ki::var("ih")),
                    ki::binary(BinaryOp::kLess, ki::var("ih"), ki::index(w.height)));
}

ki::Stmt let_input_row(const Window& w) {
  return let_index("ih", ki::add(ki::add(ki::mul(ki::var("oh"), w.stride_h), ki::mul(ki::var("kh"), w.dilation_h)),
                                 -w.pad.top));
}

// Names the iteration's coordinates from `item` = ((outer * out_h + oh) *
// tiles + tile): `outer` (a plane or a channel block), oh, first (its first
// column) and columns (how many).
std::vector<ki::Stmt> row_coordinates(const Window& w, const ki::Expr& item) {
  ki::Expr row = quotient(item, w.tiles);
  std::vector<ki::Stmt> body = {let_index("outer", quotient(row, w.out_h)), let_index("oh", remainder(row, w.out_h))};
  ki::Expr first = w.tiles == 1 ? ki::index(0) : ki::mul(remainder(item, w.tiles), w.tile);
  body.push_back(let_index("first", first));
  ki::Expr rest = minus(ki::index(w.out_w), ki::var("first"));
  body.push_back(let_index("columns", w.out_w % w.tile == 0 ? ki::index(w.tile) : smaller(ki::index(w.tile), rest)));
  return body;
}

// The input element a tap reads in plane `plane`'s row ih at output column
// ow, its column shifted by `shift`.
ki::Expr tap_offset(const Window& w, const ki::Expr& plane, const ki::Expr& shift) {
  ki::Expr row = ki::add(ki::mul(plane, w.height), ki::var("ih"));
  return ki::add(ki::add(ki::mul(row, w.width), ki::mul(ki::var("ow"), w.stride_w)), shift);
}

// The columns of [from, to) where tap column kw reads the image.
std::pair<ki::Expr, ki::Expr> tap_columns(const Window& w, const ki::Expr& kw, const ki::Expr& from, const ki::Expr& to) {
  ki::Expr shift = column_shift(w, kw);
  return {larger(from, first_column_at(shift, 0, w.stride_w)), smaller(to, first_column_at(shift, w.width, w.stride_w))};
}

// Lets of the columns of the tile whose every kw tap lies in the image:
// [middle_begin, middle_end), empty where there are none.
std::vector<ki::Stmt> middle_columns(const Window& w) {
  ki::Expr first = ki::var("first"), last = ki::add(first, ki::var("columns"));
  ki::Expr inner_begin = first_column_at(ki::index(-w.pad.left), 0, w.stride_w);
  ki::Expr inner_end = first_column_at(ki::index((w.kernel_w - 1) * w.dilation_w - w.pad.left), w.width, w.stride_w);
  return {let_index("middle_begin", smaller(larger(first, inner_begin), last)),
          let_index("middle_end", larger(ki::var("middle_begin"), smaller(last, inner_end)))};
}

// Taps one statement takes in at most: a window wider than this goes tap by tap.
constexpr int64_t kWidestCombined = 16;

// How a pool takes in a column's input values, in tap order: the
// statements updating its accumulators at column ow.
using TakeIn = std::function<std::vector<ki::Stmt>(const std::vector<ki::Expr>& values)>;

// A pool's taps of plane `plane`: per window row inside the image, the
// columns left and right of the middle tap by tap, the middle ones (at
// stride 1) every kw tap in one statement (columns are independent: each
// takes its taps in order).
ki::Stmt pool_taps(const Window& w, const ki::Expr& plane, DType dtype, const std::string& input, const TakeIn& take_in) {
  auto columns = [&](const std::vector<ki::Expr>& kws, const ki::Expr& begin, const ki::Expr& end) {
    std::vector<ki::Stmt> column;
    std::vector<ki::Expr> values;
    for (size_t i = 0; i < kws.size(); ++i) {
      ki::Expr shift = column_shift(w, kws[i]);
      std::string name = "value" + std::to_string(i);
      column.push_back(ki::let(name, dtype, ki::load(input, dtype, tap_offset(w, plane, shift))));
      values.push_back(ki::var(name, dtype));
    }
    for (ki::Stmt& s : take_in(values)) column.push_back(std::move(s));
    return loop("ow", begin, end, std::move(column), ki::LoopKind::kSimd);
  };
  auto tap_by_tap = [&](const ki::Expr& from, const ki::Expr& to) {
    auto [begin, end] = tap_columns(w, ki::var("kw"), from, to);
    return loop("kw", w.kernel_w, {let_index("column_begin", begin), let_index("column_end", end),
                                   columns({ki::var("kw")}, ki::var("column_begin"), ki::var("column_end"))});
  };
  ki::Expr first = ki::var("first"), last = ki::add(first, ki::var("columns"));
  std::vector<ki::Stmt> row;
  // Strided, the taps' loads overlap between columns, which GCC 12 does not
  // vectorise in one loop: tap by tap it does.
  if (w.kernel_w > kWidestCombined || w.stride_w != 1) {
    row.push_back(tap_by_tap(first, last));
  } else {
    row.push_back(tap_by_tap(first, ki::var("middle_begin")));
    row.push_back(tap_by_tap(ki::var("middle_end"), last));
    std::vector<ki::Expr> kws;
    for (int64_t kw = 0; kw < w.kernel_w; ++kw) kws.push_back(ki::index(kw));
    row.push_back(columns(kws, ki::var("middle_begin"), ki::var("middle_end")));
  }
  return loop("kh", w.kernel_h, {let_input_row(w), ki::if_then_else(row_inside(w), std::move(row))});
}

// Output element (plane, oh, ow).
IndexAt output_at(const Window& w, const ki::Expr& plane) {
  return IndexAt::at_offset(ki::add(ki::mul(ki::add(ki::mul(plane, w.out_h), ki::var("oh")), w.out_w), ki::var("ow")));
}

// The tile's column j of array `name` (row `block` of it, for channel blocks).
ki::Expr column_element(const std::string& name, DType dtype, const Window& w, int64_t block = 0) {
  return ki::element(name, dtype, ki::add(minus(ki::var("ow"), ki::var("first")), block * w.row_stride));
}

ki::Stmt set_column(const std::string& name, const Window& w, const ki::Expr& value, int64_t block = 0) {
  return ki::assign_element(name, ki::add(minus(ki::var("ow"), ki::var("first")), block * w.row_stride), value);
}

// The loop over the tile's columns.
ki::Stmt over_columns(std::vector<ki::Stmt> body, ki::LoopKind kind = ki::LoopKind::kSerial) {
  return loop("ow", ki::var("first"), ki::add(ki::var("first"), ki::var("columns")), std::move(body), kind);
}

ki::Stmt parallel_rows(const std::string& comment, int64_t items, int64_t work_per_item, std::vector<ki::Stmt> body) {
  int64_t grain = std::max<int64_t>(1, kElementGrain / std::max<int64_t>(work_per_item, 1));
  return ki::parallel("window", items, grain,
                      {loop("item", ki::var("begin"), ki::var("end"), std::move(body))}, comment);
}

// Output channels one iteration computes: the most of 8, 4, 2 that divide
// a group's, so a block shares its group's input channels and each input
// element read serves the whole block.
int64_t channel_block(int64_t group_out) {
  for (int64_t block : {8, 4, 2})
    if (group_out % block == 0) return block;
  return 1;
}

// The most weights one combined statement reads (one register each, with
// AVX-512's 32).
constexpr int64_t kMostLiveWeights = 32;

// A convolution being lowered: its kernel, geometry, dtype, input channels
// per group and output channels per iteration.
struct Convolution {
  const CpuKernel& k;
  Window w;
  DType dtype;
  int64_t group_in = 1, block = 1;
};

// One tap: input channel `channel` (of the block's group) at window row kh
// and column `kw` (index expressions); its weight for the block's channel b
// is the let `weights`_b.
struct Tap {
  ki::Expr channel, kw;
  std::string weights;
};

// The lets of a tap's weight for each channel of the block.
std::vector<ki::Stmt> weight_lets(const Convolution& v, const Tap& tap) {
  const Window& w = v.w;
  std::vector<ki::Stmt> lets;
  for (int64_t b = 0; b < v.block; ++b) {
    ki::Expr channel = ki::add(ki::mul(ki::add(ki::var("o"), b), v.group_in), tap.channel);
    ki::Expr filter = ki::add(ki::mul(ki::add(ki::mul(channel, w.kernel_h), ki::var("kh")), w.kernel_w), tap.kw);
    lets.push_back(ki::let(tap.weights + "_" + std::to_string(b), v.dtype, ki::load(v.k.operand(1), v.dtype, filter)));
  }
  return lets;
}

// float32 convolutions sum in float with fused multiply-adds, as oneDNN
// does (docs/operators.md, "Edge cases": sums inside convolutions round
// their own way); other dtypes sum as the reference does (accumulator.h).
bool sums_in_float(DType dtype) { return dtype == DType::kFloat32; }

// The precision a convolution's accumulator array is declared in.
ki::Precision accumulator_precision(DType dtype) {
  return sums_in_float(dtype) ? ki::Precision::kCompute : ki::Precision::kAccumulator;
}

// `value` (an accumulator's element, or its start) held as the sum is.
ki::Expr accumulator(DType dtype, const ki::Expr& value) {
  return sums_in_float(dtype) ? value : ki::in_accumulator(value);
}

// sum + x * weight: one rounding in float32, or the reference's widened
// multiply and add.
ki::Expr multiply_add(DType dtype, const ki::Expr& x, const ki::Expr& weight, const ki::Expr& sum) {
  if (sums_in_float(dtype)) return ki::fused_multiply_add(x, weight, sum);
  return ki::binary(BinaryOp::kAdd, sum, ki::binary(BinaryOp::kMul, widened(dtype, x), widened(dtype, weight)));
}

// At column ow: each tap's input value, then one statement per channel of
// the block adding the taps in order to its accumulator. The sums round as
// one tap at a time would, but each accumulator is read and written once
// per run of taps.
std::vector<ki::Stmt> column_update(const Convolution& v, const std::vector<Tap>& taps) {
  const Window& w = v.w;
  std::vector<ki::Stmt> column;
  for (size_t i = 0; i < taps.size(); ++i) {
    ki::Expr plane = ki::add(ki::add(ki::mul(ki::var("n"), w.channels), ki::var("first_channel")), taps[i].channel);
    ki::Expr shift = column_shift(w, taps[i].kw);
    ki::Expr value = ki::load(v.k.operand(0), v.dtype, tap_offset(w, plane, shift));
    column.push_back(ki::let("x" + std::to_string(i), v.dtype, value));
  }
  for (int64_t b = 0; b < v.block; ++b) {
    ki::Expr sum = accumulator(v.dtype, column_element("acc", v.dtype, w, b));
    for (size_t i = 0; i < taps.size(); ++i) {
      ki::Expr x = ki::var("x" + std::to_string(i), v.dtype);
      ki::Expr weight = ki::var(taps[i].weights + "_" + std::to_string(b), v.dtype);
      sum = multiply_add(v.dtype, x, weight, sum);
    }
    column.push_back(set_column("acc", w, sum, b));
  }
  return column;
}

// The taps' weight lets, then a simd loop over columns [begin, end) adding them.
std::vector<ki::Stmt> add_taps(const Convolution& v, const std::vector<Tap>& taps, const ki::Expr& begin,
                               const ki::Expr& end) {
  std::vector<ki::Stmt> out;
  for (const Tap& tap : taps)
    for (ki::Stmt& s : weight_lets(v, tap)) out.push_back(std::move(s));
  out.push_back(loop("ow", begin, end, column_update(v, taps), ki::LoopKind::kSimd));
  return out;
}

// Whether input column ow * stride_w + kw * dilation_w - pad.left lies in the image.
bool column_inside(const Window& w, int64_t ow, int64_t kw) {
  int64_t iw = ow * w.stride_w + kw * w.dilation_w - w.pad.left;
  return 0 <= iw && iw < w.width;
}

// The output columns where some kw tap reads padding: those before
// `middle.first` and from `middle.second` on.
std::pair<int64_t, int64_t> constant_middle(const Window& w) {
  auto first_at = [&](int64_t shift, int64_t limit) {
    return (std::max<int64_t>(limit - shift, 0) + w.stride_w - 1) / w.stride_w;
  };
  int64_t begin = std::min(w.out_w, first_at(-w.pad.left, 0));
  int64_t end = std::max(begin, std::min(w.out_w, first_at((w.kernel_w - 1) * w.dilation_w - w.pad.left, w.width)));
  return {begin, end};
}

// The most edge columns constant_row_taps writes out one by one.
constexpr int64_t kMostEdgeColumns = 8;

// Whether a row of taps can be written for constant columns: one column
// tile, few edge columns, few weights live.
bool has_constant_row(const Convolution& v) {
  auto [begin, end] = constant_middle(v.w);
  return v.w.tiles == 1 && begin + (v.w.out_w - end) <= kMostEdgeColumns &&
         v.w.kernel_w * v.block <= kMostLiveWeights;
}

// Window row kh of input channel c over a whole output row: the weights of
// every kw tap once, each edge column's taps inside the image in one
// statement, and the middle columns every tap in one statement.
std::vector<ki::Stmt> constant_row_taps(const Convolution& v) {
  const Window& w = v.w;
  std::vector<ki::Stmt> row;
  std::vector<Tap> all;
  for (int64_t kw = 0; kw < w.kernel_w; ++kw) {
    all.push_back({ki::var("c"), ki::index(kw), "w" + std::to_string(kw)});
    for (ki::Stmt& s : weight_lets(v, all.back())) row.push_back(std::move(s));
  }
  auto [begin, end] = constant_middle(w);
  for (int64_t ow = 0; ow < w.out_w; ++ow) {
    if (ow == begin) ow = end;
    if (ow >= w.out_w) break;
    std::vector<Tap> inside;
    for (int64_t kw = 0; kw < w.kernel_w; ++kw)
      if (column_inside(w, ow, kw)) inside.push_back(all[size_t(kw)]);
    if (!inside.empty()) row.push_back(loop("ow", ki::index(ow), ki::index(ow + 1), column_update(v, inside)));
  }
  row.push_back(loop("ow", ki::index(begin), ki::index(end), column_update(v, all), ki::LoopKind::kSimd));
  return row;
}

// The taps of window row kh (ih inside the image) one tap at a time, for
// the columns [from, to).
ki::Stmt single_taps(const Convolution& v, const ki::Expr& from, const ki::Expr& to) {
  auto [begin, end] = tap_columns(v.w, ki::var("kw"), from, to);
  std::vector<ki::Stmt> body = {let_index("column_begin", begin), let_index("column_end", end)};
  for (ki::Stmt& s : add_taps(v, {{ki::var("c"), ki::var("kw"), "w"}}, ki::var("column_begin"), ki::var("column_end")))
    body.push_back(std::move(s));
  return loop("kw", v.w.kernel_w, std::move(body));
}

// Input channel c's taps: per window row inside the image, over a whole
// row of constant columns where it can (constant_row_taps); otherwise the
// columns left and right of the middle tap by tap, the middle ones all kw
// taps in one statement when that keeps few enough weights live. Columns
// are independent, so each still takes its taps in order.
ki::Stmt row_taps(const Convolution& v) {
  const Window& w = v.w;
  ki::Expr first = ki::var("first"), last = ki::add(first, ki::var("columns"));
  std::vector<ki::Stmt> row;
  if (has_constant_row(v)) {
    row = constant_row_taps(v);
  } else if (w.kernel_w * v.block > kMostLiveWeights) {
    row.push_back(single_taps(v, first, last));
  } else {
    row.push_back(single_taps(v, first, ki::var("middle_begin")));
    row.push_back(single_taps(v, ki::var("middle_end"), last));
    std::vector<Tap> taps;
    for (int64_t kw = 0; kw < w.kernel_w; ++kw) taps.push_back({ki::var("c"), ki::index(kw), "w" + std::to_string(kw)});
    for (ki::Stmt& s : add_taps(v, taps, ki::var("middle_begin"), ki::var("middle_end"))) row.push_back(std::move(s));
  }
  return loop("kh", w.kernel_h, {let_input_row(w), ki::if_then_else(row_inside(w), std::move(row))});
}

// A 1x1 window: consecutive input channels are consecutive taps, added
// four to a statement, then the rest one by one.
ki::Stmt pointwise_taps(const Convolution& v) {
  const Window& w = v.w;
  constexpr int64_t kChannels = 4;
  int64_t runs = v.block * kChannels <= kMostLiveWeights ? v.group_in / kChannels : 0;
  ki::Expr first = ki::var("first"), last = ki::add(first, ki::var("columns"));
  auto [begin, end] = tap_columns(w, ki::index(0), first, last);
  std::vector<ki::Stmt> row = {let_index("column_begin", begin), let_index("column_end", end)};
  if (runs > 0) {
    std::vector<Tap> taps;
    for (int64_t i = 0; i < kChannels; ++i)
      taps.push_back({ki::add(ki::mul(ki::var("run"), kChannels), i), ki::index(0), "w" + std::to_string(i)});
    row.push_back(loop("run", runs, add_taps(v, taps, ki::var("column_begin"), ki::var("column_end"))));
  }
  if (runs * kChannels < v.group_in)
    row.push_back(loop("c", ki::index(runs * kChannels), ki::index(v.group_in),
                       add_taps(v, {{ki::var("c"), ki::index(0), "w"}}, ki::var("column_begin"), ki::var("column_end"))));
  return loop("kh", 1, {let_input_row(w), ki::if_then_else(row_inside(w), std::move(row))});
}

// count_include_pad's divisor: each column counts the taps inside the padded
// image (a ceil_mode window reaches past it), the image's own included.
ki::Stmt padded_counts(const Window& w) {
  ki::Expr shift = column_shift(w, ki::var("kw"));
  ki::Expr last = ki::add(ki::var("first"), ki::var("columns"));
  std::vector<ki::Stmt> columns = {
      let_index("shift", shift),
      let_index("column_end", smaller(last, first_column_at(ki::var("shift"), w.width + w.pad.right, w.stride_w))),
      loop("ow", ki::var("first"), ki::var("column_end"),
           {set_column("count", w, ki::add(column_element("count", DType::kInt64, w), 1))}, ki::LoopKind::kSimd),
  };
  ki::Expr inside = ki::binary(BinaryOp::kLess, ki::var("ih"), ki::index(w.height + w.pad.bottom));
  return loop("kh", w.kernel_h,
              {let_input_row(w), ki::if_then_else(inside, {loop("kw", w.kernel_w, std::move(columns))})});
}

// A global average pool: each plane's mean, its contiguous elements summed
// by a simd loop.
ki::Stmt global_pool_loops(const CpuKernel& k, const Window& w) {
  const CallNode& call = *k.master;
  DType dtype = dtype_of(call.args[0]);
  int64_t elements = w.height * w.width;
  ki::Expr plane = ki::var("plane"), sum = ki::in_accumulator(ki::var("sum", DType::kFloat32));
  ki::Expr value = ki::load(k.operand(0), dtype, ki::add(ki::mul(plane, elements), ki::var("i")));
  std::vector<ki::Stmt> body = {ki::declare("sum", sum_start(DType::kFloat32)),
                                ki::simd_reduction("i", ki::index(0), ki::index(elements), ki::Reduction::kSum, "sum",
                                                   {ki::assign("sum", ki::binary(BinaryOp::kAdd, sum,
                                                                                 widened(DType::kFloat32, value)))})};
  // An empty plane's mean is NaN.
  ki::Expr divisor = ki::in_accumulator(ki::float_value(DType::kFloat32, double(elements)));
  ki::Expr mean = elements == 0 ? ki::float_value(DType::kFloat32, std::numeric_limits<double>::quiet_NaN())
                                : ki::binary(BinaryOp::kDiv, sum, divisor);
  body.push_back(ki::let("result", dtype, ki::cast(dtype, ki::in_accumulator(mean))));
  int counter = 0;
  k.lower_store_result(body, counter, ki::var("result", dtype), IndexAt::at_offset(plane));
  int64_t grain = std::max<int64_t>(1, kElementGrain / std::max<int64_t>(elements, 1));
  return ki::parallel("window", w.batch * w.channels, grain,
                      {loop("plane", ki::var("begin"), ki::var("end"), std::move(body))},
                      ops::global_avg_pool2d()->name + at_span(call.span()) + ", planes summed in simd lanes");
}

}  // namespace

ki::Stmt convolution_loops(const CpuKernel& k) {
  const CallNode& call = *k.master;
  Convolution v{k, describe_window(call), dtype_of(call.args[0])};
  const Window& w = v.w;
  int64_t groups = window_attrs(call).groups, out_channels = shape_of(call.args[1])[0];
  v.group_in = w.channels / groups;
  int64_t group_out = out_channels / groups;
  v.block = channel_block(group_out);
  int64_t blocks = out_channels / v.block;
  ki::Expr n = ki::var("n"), o = ki::var("o");
  std::vector<ki::Stmt> body = row_coordinates(w, ki::var("item"));
  body.push_back(let_index("n", quotient(ki::var("outer"), blocks)));
  body.push_back(let_index("o", ki::mul(remainder(ki::var("outer"), blocks), v.block)));  // the block's first
  body.push_back(let_index("first_channel", ki::mul(quotient(o, group_out), v.group_in)));
  body.push_back(ki::declare_array("acc", v.dtype, accumulator_precision(v.dtype), v.block * w.row_stride));
  std::vector<ki::Stmt> clear;
  ki::Expr zero = sums_in_float(v.dtype) ? ki::float_value(v.dtype, 0.0) : sum_start(v.dtype);
  for (int64_t b = 0; b < v.block; ++b) clear.push_back(set_column("acc", w, zero, b));
  body.push_back(over_columns(std::move(clear)));
  if (w.kernel_h == 1 && w.kernel_w == 1) {
    body.push_back(pointwise_taps(v));
  } else {
    if (!has_constant_row(v))
      for (ki::Stmt& s : middle_columns(w)) body.push_back(std::move(s));
    body.push_back(loop("c", v.group_in, {row_taps(v)}));
  }
  // Each result through the epilogue.
  ki::Expr column = ki::add(minus(ki::var("ow"), ki::var("first")), ki::mul(ki::var("b"), w.row_stride));
  ki::Expr acc = ki::element("acc", v.dtype, column);
  ki::Expr result = sums_in_float(v.dtype) ? acc : finished_sum(v.dtype, ki::in_accumulator(acc));
  std::vector<ki::Stmt> store = {ki::let("result", v.dtype, result)};
  int counter = 0;
  k.lower_store_result(store, counter, ki::var("result", v.dtype),
                       output_at(w, ki::add(ki::mul(n, out_channels), ki::add(o, ki::var("b")))));
  body.push_back(loop("b", v.block, {over_columns(std::move(store))}));
  std::string comment = ops::conv2d()->name + at_span(call.span()) + ", " + std::to_string(v.block) +
                        " output channels of one output row at a time";
  return parallel_rows(comment, w.batch * blocks * w.out_h * w.tiles,
                       v.block * v.group_in * w.kernel_h * w.kernel_w * w.tile, std::move(body));
}

ki::Stmt pool_loops(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const OpNode* op = as<OpNode>(call.op);
  DType dtype = dtype_of(call.args[0]);
  bool global = op == ops::global_avg_pool2d(), is_max = op == ops::max_pool2d();
  Window w = describe_window(call);
  if (global) return global_pool_loops(k, w);
  bool include_pad = op == ops::avg_pool2d() && window_attrs(call).count_include_pad;
  std::vector<ki::Stmt> body = row_coordinates(w, ki::var("item"));
  for (ki::Stmt& s : middle_columns(w)) body.push_back(std::move(s));
  ki::Expr plane = ki::var("outer");
  std::vector<ki::Stmt> clear, finish;
  TakeIn take_in;
  ki::Expr result;
  if (is_max) {
    body.push_back(ki::declare_array("best", dtype, ki::Precision::kCompute, w.tile));
    clear.push_back(set_column("best", w, lowest_value(dtype)));
    take_in = [&w, dtype](const std::vector<ki::Expr>& values) {
      // Each step named: max_step reads `best` thrice.
      std::vector<ki::Stmt> steps;
      ki::Expr best = column_element("best", dtype, w);
      for (size_t i = 0; i < values.size(); ++i) {
        std::string name = "best" + std::to_string(i);
        steps.push_back(ki::let(name, dtype, max_step(best, values[i])));  // NaN wins, as in max
        best = ki::var(name, dtype);
      }
      steps.push_back(set_column("best", w, best));
      return steps;
    };
    result = column_element("best", dtype, w);
  } else {
    body.push_back(ki::declare_array("sum", DType::kFloat32, ki::Precision::kAccumulator, w.tile));
    body.push_back(ki::declare_array("count", DType::kInt64, ki::Precision::kCompute, w.tile));
    clear.push_back(set_column("sum", w, sum_start(DType::kFloat32)));
    clear.push_back(set_column("count", w, ki::index(0)));
    ki::Expr count = column_element("count", DType::kInt64, w);
    take_in = [&w, include_pad, count](const std::vector<ki::Expr>& values) {
      ki::Expr sum = ki::in_accumulator(column_element("sum", DType::kFloat32, w));
      for (const ki::Expr& value : values) sum = ki::binary(BinaryOp::kAdd, sum, widened(DType::kFloat32, value));
      std::vector<ki::Stmt> update = {set_column("sum", w, sum)};
      if (!include_pad) update.push_back(set_column("count", w, ki::add(count, int64_t(values.size()))));
      return update;
    };
    // An empty window (all padding, under ceil_mode) is 0.
    ki::Expr sum = ki::in_accumulator(column_element("sum", DType::kFloat32, w));
    ki::Expr mean = ki::select(ki::binary(BinaryOp::kNotEqual, count, ki::index(0)),
                               ki::binary(BinaryOp::kDiv, sum, ki::in_accumulator(ki::cast(DType::kFloat32, count))),
                               ki::in_accumulator(ki::float_value(DType::kFloat32, 0.0)));
    finish.push_back(ki::let("result", dtype, ki::cast(dtype, mean)));
    result = ki::var("result", dtype);
  }
  body.push_back(over_columns(std::move(clear)));
  body.push_back(pool_taps(w, plane, dtype, k.operand(0), take_in));
  if (include_pad) body.push_back(padded_counts(w));
  int counter = 0;
  k.lower_store_result(finish, counter, result, output_at(w, plane));
  body.push_back(over_columns(std::move(finish)));
  std::string comment = op->name + at_span(call.span()) + ", one output row of one plane at a time";
  return parallel_rows(comment, w.batch * w.channels * w.out_h * w.tiles, w.kernel_h * w.kernel_w * w.tile,
                       std::move(body));
}

}  // namespace switchyard
