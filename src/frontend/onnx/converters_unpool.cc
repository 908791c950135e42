// Converter of ONNX's MaxUnpool (9, 11) for 2-D pools: each output element
// receives the value whose index (into the whole output, as MaxPool's
// Indices count) names it, among the inputs whose pooling window covers
// it (at most ceil(k / s) per axis, looked up in constant tables built at
// import): a `take` of the candidates' values and indices per candidate
// slot, and a `where` on the index matching. An index outside its own
// window, which MaxPool never gives, fails the run: the general scatter
// it would need has no IR operator.
#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

struct UnpoolAxis {
  int64_t in = 0, out = 0, kernel = 0, stride = 1, pad = 0;
  int64_t window_start(int64_t i) const { return i * stride - pad; }
  int64_t slots() const { return (kernel + stride - 1) / stride; }
  // The `slot`-th input (ascending) whose window covers output position o; -1 if none.
  int64_t candidate(int64_t o, int64_t slot) const {
    int64_t found = 0;
    for (int64_t i = 0; i < in; ++i)
      if (window_start(i) <= o && o < window_start(i) + kernel && found++ == slot) return i;
    return -1;
  }
};

// An added 0 that fails the run, through take's "fast" mode, unless every
// index (planes, H_in * W_in) lies in its input's window of the output.
Expr check_windows(NodeContext& c, const Expr& indices, int64_t planes, const UnpoolAxis& y, const UnpoolAxis& x,
                   DType dtype) {
  NDArray low_y(DType::kInt64, {1, y.in * x.in}), low_x(DType::kInt64, {1, y.in * x.in});
  for (int64_t i = 0; i < y.in * x.in; ++i) {
    low_y.as<int64_t>()[i] = y.window_start(i / x.in);
    low_x.as<int64_t>()[i] = x.window_start(i % x.in);
  }
  auto k = [&](int64_t v) { return c.scalar(double(v), DType::kInt64); };
  auto both = [&](const Expr& a, const Expr& b) { return c.call("where", {a, b, a}); };
  auto at_least = [&](const Expr& a, const Expr& b) { return c.call("greater", {a, c.call("subtract", {b, k(1)})}); };
  Expr local = c.call("subtract", {indices, c.constant(multiples_of(y.out * x.out, {planes, 1}))});
  Expr row = c.call("divide", {local, k(x.out)});
  Expr column = c.call("subtract", {local, c.call("multiply", {row, k(x.out)})});
  Expr start_y = c.constant(std::move(low_y)), start_x = c.constant(std::move(low_x));
  Expr inside = both(at_least(local, k(0)), c.call("less", {local, k(y.out * x.out)}));
  inside = both(inside, both(at_least(row, start_y), c.call("less", {row, c.call("add", {start_y, k(y.kernel)})})));
  inside = both(inside, both(at_least(column, start_x), c.call("less", {column, c.call("add", {start_x, k(x.kernel)})})));
  Expr outside = c.call("max", {c.call("where", {inside, k(0), k(1)})});  // 1: past the one-element array
  NDArray zero(dtype, {1});
  zero.set_from_double(0, 0);
  return c.call("take", {c.constant(std::move(zero)), reshape_to(c, outside, {1})},
                {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
}

void convert_max_unpool(NodeContext& c) {
  const std::vector<int64_t>& shape = c.input_shape(0);
  if (shape.size() != 4) c.fail("only 2-D pools (N, C, H, W) are supported, got " + shape_to_string(shape));
  if (c.input_shape(1) != shape || c.input_dtype(1) != DType::kInt64)
    c.fail("I must be int64 of X's shape " + shape_to_string(shape));
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>{1, 1});
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>{0, 0, 0, 0});
  if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4)
    c.fail("kernel_shape and strides need 2 values and pads 4 for a 2-D pool");
  UnpoolAxis y{shape[2], 0, kernel[0], strides[0], pads[0]}, x{shape[3], 0, kernel[1], strides[1], pads[1]};
  if (y.kernel < 1 || x.kernel < 1 || y.stride < 1 || x.stride < 1) c.fail("kernel_shape and strides must be positive");
  y.out = (y.in - 1) * y.stride + y.kernel - pads[0] - pads[2];
  x.out = (x.in - 1) * x.stride + x.kernel - pads[1] - pads[3];
  if (c.has_input(2)) {
    std::vector<int64_t> given = c.constant_ints(2, "output_shape");
    if (given.size() != 4 || given[0] != shape[0] || given[1] != shape[1])
      c.fail("output_shape must be (N, C, H, W) with X's N and C");
    y.out = given[2];
    x.out = given[3];
  }
  if (y.out < 1 || x.out < 1) c.fail("the output would be empty");
  int64_t planes = shape[0] * shape[1], points = y.out * x.out;
  Expr values = reshape_to(c, c.input(0), {planes * y.in * x.in});
  Expr indices = reshape_to(c, c.input(1), {planes, y.in * x.in});
  Expr flat_indices = reshape_to(c, c.input(1), {planes * y.in * x.in});
  Expr target = c.constant(multiples_of(1, {planes, points}));  // each output element's own index
  Expr in_planes = c.constant(multiples_of(y.in * x.in, {planes, 1}));
  Expr result = c.scalar(0, c.input_dtype(0));
  for (int64_t a = 0; a < y.slots(); ++a)
    for (int64_t b = 0; b < x.slots(); ++b) {
      NDArray source(DType::kInt64, {1, points}), present(DType::kBool, {1, points});
      for (int64_t o = 0; o < points; ++o) {
        int64_t i = y.candidate(o / x.out, a), k = x.candidate(o % x.out, b);
        present.as<bool>()[o] = i >= 0 && k >= 0;
        source.as<int64_t>()[o] = i >= 0 && k >= 0 ? i * x.in + k : 0;
      }
      Expr index = c.call("add", {in_planes, c.constant(std::move(source))});
      Expr named = c.call("take", {flat_indices, index}, {{"axis", int64_t(0)}, {"mode", std::string("clip")}});
      Expr value = c.call("take", {values, index}, {{"axis", int64_t(0)}, {"mode", std::string("clip")}});
      Expr covered = c.constant(std::move(present));
      Expr match = c.call("where", {covered, c.call("equal", {named, target}), covered});
      result = c.call("where", {match, value, result});
    }
  result = c.call("add", {result, check_windows(c, indices, planes, y, x, c.input_dtype(0))});
  set_single_output(c, reshape_to(c, result, {shape[0], shape[1], y.out, x.out}));
}

}  // namespace

void register_unpool_converters() { add_onnx_converter("MaxUnpool", {9, 11}, {{9, convert_max_unpool}}); }

}  // namespace switchyard
