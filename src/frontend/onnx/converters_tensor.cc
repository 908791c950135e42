// Converters of ONNX's tensor-manipulation operators: shapes, reshapes,
// slicing, gathering, concatenation, constants and reductions. Shapes are
// resolved at import, so Shape, Size, Range and ConstantOfShape become
// constants and Reshape, Squeeze and Unsqueeze become reshapes to explicit
// dimensions; over symbolic dimensions Shape gives a shape value and those
// reshapes copy or infer the symbolic ones (symbolic_shapes.h).
#include <cmath>
#include <cstring>
#include <numeric>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_tensor.h"
#include "frontend/onnx/symbolic_shapes.h"

namespace switchyard {

namespace {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

// Reshape over symbolic dimensions: to a shape value computed from them
// (Shape -> ... -> Concat), or to known numbers with 0 and -1, which the IR's
// reshape reads as ONNX does.
void convert_symbolic_reshape(NodeContext& c, bool allow_zero) {
  std::optional<std::vector<DimExpr>> target = c.shape_value_input(1);
  if (!target) c.require_constant(1, "shape");
  if (allow_zero) c.fail("allowzero=1 with symbolic shapes is not supported yet (fix the dimensions with --input-shape)");
  bool numbers = std::all_of(target->begin(), target->end(), [](const DimExpr& d) { return d.is_constant(); });
  if (!numbers) return set_single_output(c, reshape_to_dims(c, c.input(0), *target));
  std::vector<int64_t> spec;
  for (const DimExpr& d : *target) spec.push_back(*d.constant());
  set_single_output(c, c.call("reshape", {c.input(0)}, {{"newshape", spec}}));
}

// Reshape; allowzero came with version 14.
void convert_reshape(NodeContext& c, bool has_allow_zero) {
  if (!c.input_type(0).is_static() || c.is_shape_value(1))
    return convert_symbolic_reshape(c, has_allow_zero && c.attr_int("allowzero", 0) != 0);
  std::vector<int64_t> in = c.input_shape(0);
  std::vector<int64_t> spec = c.constant_ints(1, "shape");
  bool allow_zero = has_allow_zero && c.attr_int("allowzero", 0) != 0;
  std::vector<int64_t> out(spec.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) c.fail("shape entry 0 at position " + std::to_string(i) + " has no input dimension to copy");
      d = in[i];
    }
    if (d == -1) {
      if (infer >= 0) c.fail("shape has more than one -1");
      infer = int(i);
      continue;
    }
    if (d < 0) c.fail("shape entry " + std::to_string(d) + " is invalid");
    out[i] = d;
    if (__builtin_mul_overflow(known, d, &known)) c.fail("the shape's element count overflows int64");
  }
  int64_t total = product(in, 0, in.size());
  if (infer >= 0) {
    if (known == 0 || total % known != 0) c.fail("cannot infer the -1 in the shape");
    out[size_t(infer)] = total / known;
  } else if (known != total) {
    c.fail("cannot reshape " + shape_to_string(in) + " to " + shape_to_string(out));
  }
  set_single_output(c, reshape_to(c, c.input(0), out));
}

void convert_flatten(NodeContext& c) {
  const std::vector<DimExpr>& in = c.input_dims(0);
  int64_t rank = int64_t(in.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -rank || axis > rank) c.fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rank;
  std::vector<DimExpr> before(in.begin(), in.begin() + axis), after(in.begin() + axis, in.end());
  set_single_output(c, reshape_to_dims(c, c.input(0), {dim_product(before), dim_product(after)}));
}

// Squeeze and Unsqueeze: the axes are an attribute before version 13
// (Unsqueeze's required), the second input from 13 (Squeeze's optional:
// without axes, every axis of 1 goes).
void convert_squeeze(NodeContext& c, bool unsqueeze, bool axes_input) {
  const std::vector<DimExpr>& in = c.input_dims(0);
  std::vector<int64_t> axes;
  if (axes_input && (unsqueeze || c.has_input(1))) axes = c.constant_ints(1, "axes");
  if (!axes_input) axes = unsqueeze ? c.attr_ints("axes") : c.attr_ints("axes", std::vector<int64_t>{});
  std::vector<DimExpr> out;
  if (unsqueeze) {
    int64_t rank = int64_t(in.size() + axes.size());
    std::vector<bool> inserted(size_t(rank), false);
    for (int64_t a : axes) {
      int64_t n = normalize_axis(c, a, rank);
      if (inserted[size_t(n)]) c.fail("axis " + std::to_string(a) + " is given twice");
      inserted[size_t(n)] = true;
    }
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[size_t(i)] ? DimExpr(1) : in[next++]);
  } else {
    std::vector<bool> removed(in.size(), axes.empty());
    for (int64_t a : axes) {
      int64_t n = normalize_axis(c, a, int64_t(in.size()));
      if (in[size_t(n)] != DimExpr(1))
        c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + dim_to_string(in[size_t(n)]));
      removed[size_t(n)] = true;
    }
    for (size_t i = 0; i < in.size(); ++i)
      if (!(removed[i] && in[i] == DimExpr(1))) out.push_back(in[i]);
  }
  set_single_output(c, reshape_to_dims(c, c.input(0), out));
}

// Where Split's sizes come from in each version.
enum class SplitSizes {
  kAttribute,              // before 13: the `split` attribute
  kInput,                  // 13: the `split` input
  kInputOrNumOutputs,      // 18: the input, or num_outputs parts with the last one smaller
};

// Without sizes, the outputs are equal parts.
void convert_split(NodeContext& c, SplitSizes from) {
  const std::vector<DimExpr>& in = c.input_dims(0);
  int64_t axis = normalize_axis(c, c.attr_int("axis", 0), int64_t(in.size()));
  if (!in[size_t(axis)].is_constant())
    c.fail("splits symbolic dimension '" + dim_to_string(in[size_t(axis)]) + "' (axis " + std::to_string(axis) +
           "); Split along a symbolic axis is not supported yet (fix it with --input-shape)");
  int64_t extent = in[size_t(axis)].coefficient();
  std::vector<int64_t> sizes;
  if (from == SplitSizes::kAttribute && c.has_attr("split")) sizes = c.attr_ints("split");
  if (from != SplitSizes::kAttribute && c.has_input(1)) sizes = c.constant_ints(1, "split");
  int64_t parts = int64_t(c.output_count());
  if (from == SplitSizes::kInputOrNumOutputs && c.has_attr("num_outputs")) {
    if (c.has_input(1)) c.fail("give the split input or num_outputs, not both");
    int64_t count = c.attr_int("num_outputs");
    if (count != parts) c.fail("num_outputs is " + std::to_string(count) + ", but the node has " + std::to_string(parts) + " outputs");
    int64_t chunk = (extent + count - 1) / std::max<int64_t>(count, 1);
    for (int64_t i = 0; i < count; ++i) sizes.push_back(std::min(chunk, extent - i * chunk));
  }
  if (sizes.empty()) {
    if (extent % parts != 0) c.fail("cannot split " + std::to_string(extent) + " into " + std::to_string(parts) + " equal parts");
    sizes.assign(size_t(parts), extent / parts);
  }
  if (sizes.size() != c.output_count()) c.fail("split sizes do not match the number of outputs");
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent) c.fail("split sizes do not add up to the axis");
  for (int64_t s : sizes)
    if (s <= 0) c.fail("empty split parts are not supported");
  if (sizes.size() == 1) {
    c.set_output(0, c.input(0));
    return;
  }
  std::vector<int64_t> indices;
  int64_t at = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) indices.push_back(at += sizes[i]);
  Expr pieces = c.call("split", {c.input(0)}, {{"indices_or_sections", indices}, {"axis", axis}});
  for (size_t i = 0; i < sizes.size(); ++i) c.set_output(i, c.tuple_item(pieces, int(i)));
}

// Slice with ONNX's clamping; a negative step becomes a take of the
// selected indices (the IR's strided_slice cannot express an end before 0).
// Before version 10 starts, ends and axes are attributes and steps are 1;
// from 10 they are inputs (`inputs`).
void convert_slice(NodeContext& c, bool inputs) {
  const std::vector<DimExpr>& in = c.input_dims(0);
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> starts = inputs ? c.constant_ints(1, "starts") : c.attr_ints("starts");
  // Ends computed from a symbolic shape (position_ids[:, :seq]) are
  // dimensions; a symbolic one slices a static axis from 0 (strided_slice's
  // symbolic end), its entry in `ends` a stand-in never read.
  std::vector<DimExpr> end_dims;
  if (inputs && c.is_shape_value(2)) {
    end_dims = *c.shape_value_input(2);
  } else {
    for (int64_t e : inputs ? c.constant_ints(2, "ends") : c.attr_ints("ends")) end_dims.emplace_back(e);
  }
  std::vector<int64_t> ends;
  for (const DimExpr& e : end_dims) ends.push_back(e.constant().value_or(0));
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (inputs && c.has_input(3)) axes = c.constant_ints(3, "axes");
  if (!inputs && c.has_attr("axes")) axes = c.attr_ints("axes");
  std::vector<int64_t> steps(starts.size(), 1);
  if (inputs && c.has_input(4)) steps = c.constant_ints(4, "steps");
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps must have equal lengths");
  Expr x = c.input(0);
  std::vector<int64_t> begin, end, strides, slice_axes;
  std::vector<std::string> end_texts;  // `end` as dimensions, used when one is symbolic
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = normalize_axis(c, axes[i], rank);
    if (!in[size_t(axis)].is_constant())
      c.fail("slices symbolic dimension '" + dim_to_string(in[size_t(axis)]) + "' (axis " + std::to_string(axis) +
             "); Slice along a symbolic axis is not supported yet (fix it with --input-shape)");
    int64_t dim = *in[size_t(axis)].constant(), step = steps[i];
    if (step == 0) c.fail("a step of 0");
    auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
    if (!end_dims[i].is_constant()) {
      if (step != 1 || clamp(starts[i] < 0 ? starts[i] + dim : starts[i], 0, dim) != 0)
        c.fail("ends axis " + std::to_string(axis) + " at symbolic '" + dim_to_string(end_dims[i]) +
               "' with start " + std::to_string(starts[i]) + " and step " + std::to_string(step) +
               "; a symbolic end is supported from start 0 with step 1 (fix the dimension with --input-shape)");
      begin.push_back(0), end.push_back(0), strides.push_back(1), slice_axes.push_back(axis);
      end_texts.push_back(dim_to_string(end_dims[i]));
      continue;
    }
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (ends[i] <= std::numeric_limits<int64_t>::min() / 2) e = -1;  // INT64_MIN: "to the very start"
    s = step > 0 ? clamp(s, 0, dim) : clamp(s, 0, dim - 1);
    e = step > 0 ? clamp(e, 0, dim) : clamp(e, -1, dim - 1);
    int64_t count = step > 0 ? (e - s + step - 1) / step : (s - e + (-step) - 1) / (-step);
    if (count <= 0) {
      // Shape computations slice known shapes empty (the prefix before
      // axis 0): an empty constant, which Concat drops.
      if (!c.constant_input(0))
        c.fail("the slice of axis " + std::to_string(axis) + " is empty (empty tensors are not supported)");
      std::vector<int64_t> shape = c.input_shape(0);
      shape[size_t(axis)] = 0;
      return set_single_output(c, c.constant(NDArray(c.input_dtype(0), shape)));
    }
    if (step > 0) {
      begin.push_back(s), end.push_back(e), strides.push_back(step), slice_axes.push_back(axis);
      end_texts.push_back(std::to_string(e));
      continue;
    }
    std::vector<int64_t> picked;
    for (int64_t k = 0; k < count; ++k) picked.push_back(s + k * step);
    x = c.call("take", {x, c.constant(int64_vector(picked))}, {{"axis", axis}});
  }
  if (!begin.empty()) {
    AttrValue end_attr = end;
    if (std::any_of(end_dims.begin(), end_dims.end(), [](const DimExpr& e) { return !e.is_constant(); }))
      end_attr = end_texts;
    x = c.call("strided_slice", {x}, {{"begin", begin}, {"end", end_attr}, {"strides", strides}, {"axes", slice_axes}});
  }
  set_single_output(c, x);
}

void convert_gather(NodeContext& c) {
  int64_t axis = normalize_axis(c, c.attr_int("axis", 0), c.input_type(0).ndim());
  const DimExpr& extent = c.input_dims(0)[size_t(axis)];
  if (!extent.is_constant()) {
    // Constant indices the axis is sure to hold, whatever its value (h[:, 0],
    // a sequence's first token): below the dimension's least value, its
    // coefficient (no dimension is 0).
    const NDArray* known = c.constant_input(1);
    bool within = known && dtype_is_int(known->dtype());
    for (int64_t i = 0; within && i < known->numel(); ++i) {
      const double v = known->get_as_double(i);
      within = v >= 0 && v < double(extent.coefficient());
    }
    if (!within)
      c.fail("gathers along symbolic dimension '" + dim_to_string(extent) + "' (axis " + std::to_string(axis) +
             ") at indices that are not constants below " + std::to_string(extent.coefficient()) +
             "; Gather along a symbolic axis is supported only there (fix the dimension with --input-shape)");
    return set_single_output(c, c.call("take", {c.input(0), c.input(1)}, {{"axis", axis}, {"mode", "clip"}}));
  }
  int64_t dim = *extent.constant();
  if (!dtype_is_int(c.input_dtype(1))) c.fail("indices must be integers");
  Expr indices = c.input(1);
  // Indices known only at run time: negative ones count from the end, and
  // any outside [-dim, dim) is an error (take's "fast" mode), as ONNX says.
  std::string mode = "fast";
  if (const NDArray* known = c.constant_input(1)) {
    NDArray fixed(DType::kInt64, known->shape());
    for (int64_t i = 0; i < known->numel(); ++i) {
      int64_t v = int64_t(known->get_as_double(i));
      if (v < -dim || v >= dim) c.fail("index " + std::to_string(v) + " is out of range for an axis of " + std::to_string(dim));
      fixed.as<int64_t>()[i] = v < 0 ? v + dim : v;
    }
    indices = c.constant(std::move(fixed));
    mode = "clip";
  } else {
    DType index_dtype = c.input_dtype(1);
    Expr negative = c.call("less", {indices, c.scalar(0, index_dtype)});
    indices = c.call("where", {negative, c.call("add", {indices, c.scalar(double(dim), index_dtype)}), indices});
  }
  set_single_output(c, c.call("take", {c.input(0), indices}, {{"axis", axis}, {"mode", mode}}));
}

// A node's input `i` that says a shape: a shape value's dimensions (maybe
// symbolic) or a constant's numbers.
std::vector<DimExpr> shape_input(NodeContext& c, size_t i, const char* what) {
  if (c.is_shape_value(i)) return *c.shape_value_input(i);
  return constant_dims(c.constant_ints(i, what));
}

void convert_expand(NodeContext& c) {
  const std::vector<DimExpr> shape = shape_input(c, 1, "shape");
  const std::vector<DimExpr>& in = c.input_dims(0);
  // Bidirectional broadcasting: the result is the broadcast of both shapes.
  // Of two dimensions, equal ones or a 1 and another broadcast; whether a
  // symbolic one is 1, or equals another, is known only at run time.
  size_t rank = std::max(shape.size(), in.size());
  std::vector<DimExpr> out(rank);
  const DimExpr one(int64_t(1));
  for (size_t i = 0; i < rank; ++i) {
    DimExpr a = i < rank - in.size() ? one : in[i - (rank - in.size())];
    DimExpr b = i < rank - shape.size() ? one : shape[i - (rank - shape.size())];
    if (a != b && a != one && b != one)
      c.fail("cannot expand " + dims_to_string(in) + " to " + dims_to_string(shape) + " (dimension " +
             std::to_string(i) + ": " + dim_to_string(a) + " vs " + dim_to_string(b) +
             (a.is_constant() && b.is_constant() ? ")" : "; whether they are equal is known only at run time)"));
    out[i] = a == one ? b : a;
  }
  set_single_output(c, out == in ? c.input(0) : c.call("broadcast_to", {c.input(0)}, {{"shape", dims_attr(out)}}));
}

// Constant: a tensor `value`; from version 12 also value_float, value_int
// and their lists (`scalars`). Strings and sparse_value (11) are refused.
void convert_constant(NodeContext& c, bool scalars) {
  if (c.has_attr("value")) return set_single_output(c, c.constant(c.attr_tensor("value")));
  if (!scalars) c.fail("attribute 'value' is required");
  if (c.has_attr("value_float")) return set_single_output(c, c.scalar(c.attr_float("value_float"), DType::kFloat32));
  if (c.has_attr("value_int")) return set_single_output(c, c.scalar(double(c.attr_int("value_int")), DType::kInt64));
  if (c.has_attr("value_ints")) return set_single_output(c, c.constant(int64_vector(c.attr_ints("value_ints"))));
  if (c.has_attr("value_floats")) {
    std::vector<float> v = c.attr_floats("value_floats");
    NDArray a(DType::kFloat32, {int64_t(v.size())});
    std::copy(v.begin(), v.end(), a.as<float>());
    return set_single_output(c, c.constant(std::move(a)));
  }
  c.fail("only tensor, float, int, floats and ints values are supported");
}

void convert_constant_of_shape(NodeContext& c) {
  NDArray fill = c.has_attr("value") ? c.attr_tensor("value") : NDArray(DType::kFloat32, {1});
  if (fill.numel() != 1) c.fail("value must hold one element");
  // The shape of a symbolic tensor (a mask's zeros like the scores): the
  // value broadcast to it.
  if (c.is_shape_value(0)) {
    const std::vector<DimExpr> dims = *c.shape_value_input(0);
    NDArray scalar(fill.dtype(), {});
    std::memcpy(scalar.data(), fill.data(), dtype_bytes(fill.dtype()));
    return set_single_output(c, c.call("broadcast_to", {c.constant(std::move(scalar))}, {{"shape", dims_attr(dims)}}));
  }
  std::vector<int64_t> shape = c.constant_ints(0, "shape");
  for (int64_t d : shape)
    if (d <= 0) c.fail("empty tensors are not supported");
  NDArray out(fill.dtype(), shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set_from_double(i, fill.get_as_double(0));
  if (fill.dtype() == DType::kInt64)
    std::fill(out.as<int64_t>(), out.as<int64_t>() + out.numel(), fill.as<int64_t>()[0]);
  set_single_output(c, c.constant(std::move(out)));
}

void convert_range(NodeContext& c) {
  DType t = c.input_dtype(0);
  double start = c.constant_floats(0, "start")[0], limit = c.constant_floats(1, "limit")[0];
  double delta = c.constant_floats(2, "delta")[0];
  if (delta == 0) c.fail("delta is 0");
  int64_t n = std::max<int64_t>(int64_t(std::ceil((limit - start) / delta)), 0);
  if (n == 0) c.fail("the range is empty (empty tensors are not supported)");
  NDArray out(t, {n});
  for (int64_t i = 0; i < n; ++i) out.set_from_double(i, start + double(i) * delta);
  set_single_output(c, c.constant(std::move(out)));
}

void convert_gather_elements(NodeContext& c) {
  int64_t axis = normalize_axis(c, c.attr_int("axis", 0), c.input_type(0).ndim());
  set_single_output(c, gather_elements(c, c.input(0), c.input(1), axis));
}

// GatherND: each index tuple (the last axis of `indices`) picks a slice of
// data; the tuples become rows of data viewed as (batch * indexed, rest...),
// the row of a tuple being its dot product with the indexed axes' strides
// plus its batch's first row.
// batch_dims came with version 12.
void convert_gather_nd(NodeContext& c, bool has_batch_dims) {
  const std::vector<int64_t>& d = c.input_shape(0);
  const std::vector<int64_t>& i = c.input_shape(1);
  if (!dtype_is_int(c.input_dtype(1))) c.fail("indices must be integers");
  int64_t b = has_batch_dims ? c.attr_int("batch_dims", 0) : 0;
  if (i.empty() || b < 0 || b >= int64_t(i.size()) || b >= int64_t(d.size())) c.fail("batch_dims is out of range");
  int64_t k = i.back();
  if (k < 1 || b + k > int64_t(d.size())) c.fail("the index tuples (" + std::to_string(k) + " long) do not fit the data");
  for (int64_t a = 0; a < b; ++a)
    if (i[size_t(a)] != d[size_t(a)]) c.fail("indices and data differ in the batch dimensions");
  std::vector<int64_t> rest(d.begin() + b + k, d.end());
  int64_t batches = product(d, 0, size_t(b)), indexed = product(d, size_t(b), size_t(b + k));
  NDArray extents(DType::kInt64, {k}), strides(DType::kInt64, {k});
  for (int64_t j = 0; j < k; ++j) {
    extents.as<int64_t>()[j] = d[size_t(b + j)];
    strides.as<int64_t>()[j] = product(d, size_t(b + j + 1), size_t(b + k));
  }
  std::vector<int64_t> tuples(i.begin(), i.end() - 1);
  NDArray first_row(DType::kInt64, tuples);
  int64_t per_batch = first_row.numel() / std::max<int64_t>(batches, 1);
  for (int64_t p = 0; p < first_row.numel(); ++p) first_row.as<int64_t>()[p] = p / per_batch * indexed;
  Expr index = c.call("cast", {c.input(1)}, {{"dtype", std::string("int64")}});
  Expr extent = c.constant(std::move(extents));
  Expr negative = c.call("less", {index, c.scalar(0, DType::kInt64)});
  index = c.call("where", {negative, c.call("add", {index, extent}), index});
  Expr row = c.call("sum", {c.call("multiply", {index, c.constant(std::move(strides))})},
                    {{"axis", std::vector<int64_t>{-1}}, {"keepdims", false}});
  row = c.call("add", {row, c.constant(std::move(first_row))});
  std::vector<int64_t> view{batches * indexed};
  view.insert(view.end(), rest.begin(), rest.end());
  set_single_output(c, c.call("take", {reshape_to(c, c.input(0), view), row},
                              {{"axis", int64_t(0)}, {"mode", std::string("clip")}}));
}

// Trilu keeps the triangle on and above (upper) or below diagonal k of the
// last two axes: a where over the mask "column - row >= k" (upper) or
// "<= k", with the differences a constant and k known or not.
void convert_trilu(NodeContext& c) {
  const std::vector<int64_t>& in = c.input_shape(0);
  if (in.size() < 2) c.fail("needs an input of rank 2 or more");
  bool upper = c.attr_int("upper", 1) != 0;
  Expr k = c.scalar(0, DType::kInt64);
  if (c.has_input(1)) {
    if (c.input_dtype(1) != DType::kInt64 || c.input_type(1).numel() != 1) c.fail("k must hold one int64");
    k = reshape_to(c, c.input(1), {});
  }
  int64_t rows = in[in.size() - 2], cols = in.back();
  NDArray diagonal(DType::kInt64, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) diagonal.as<int64_t>()[i * cols + j] = j - i;
  Expr outside = c.call(upper ? "less" : "greater", {c.constant(std::move(diagonal)), k});
  set_single_output(c, c.call("where", {outside, c.scalar(0, c.input_dtype(0)), c.input(0)}));
}

// DepthToSpace and SpaceToDepth: a reshape to six dimensions, a transpose,
// and a reshape back to four.
// DepthToSpace's mode came with version 11 (before, DCR).
void convert_depth_space(NodeContext& c, bool to_space, bool has_mode = false) {
  const std::vector<int64_t>& in = c.input_shape(0);
  if (in.size() != 4) c.fail("needs an (N, C, H, W) input");
  int64_t b = c.attr_int("blocksize");
  if (b <= 0) c.fail("blocksize must be positive");
  int64_t n = in[0], ch = in[1], h = in[2], w = in[3];
  std::vector<int64_t> split, perm, out;
  if (to_space) {
    std::string mode = has_mode ? c.attr_string("mode", "DCR") : "DCR";
    if (ch % (b * b) != 0) c.fail("the channels (" + std::to_string(ch) + ") are not a multiple of blocksize squared");
    if (mode == "DCR") split = {n, b, b, ch / (b * b), h, w}, perm = {0, 3, 4, 1, 5, 2};
    else if (mode == "CRD") split = {n, ch / (b * b), b, b, h, w}, perm = {0, 1, 4, 2, 5, 3};
    else c.fail("mode '" + mode + "' is not one of DCR, CRD");
    out = {n, ch / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) c.fail("the height and width must be multiples of blocksize");
    split = {n, ch, h / b, b, w / b, b}, perm = {0, 3, 5, 1, 2, 4};
    out = {n, ch * b * b, h / b, w / b};
  }
  Expr y = c.call("transpose", {reshape_to(c, c.input(0), split)}, {{"axes", perm}});
  set_single_output(c, reshape_to(c, y, out));
}

void convert_eye_like(NodeContext& c) {
  const std::vector<int64_t>& in = c.input_shape(0);
  if (in.size() != 2) c.fail("needs a 2-D input");
  DType t = c.input_dtype(0);
  if (c.has_attr("dtype")) {
    int onnx_type = int(c.attr_int("dtype"));
    std::optional<DType> d = dtype_from_onnx(onnx_type);
    if (!d) c.fail("dtype " + onnx_type_name(onnx_type) + " is not supported");
    t = *d;
  }
  int64_t k = c.attr_int("k", 0);
  NDArray eye(t, in);
  for (int64_t i = 0; i < in[0]; ++i)
    if (i + k >= 0 && i + k < in[1]) eye.set_from_double(i * in[1] + i + k, 1);
  set_single_output(c, c.constant(std::move(eye)));
}

// OneHot: indices compared with 0..depth-1 along the new axis; from
// version 11 (`negative_from_end`) negative indices count from depth; any
// other index out of range is all off.
void convert_one_hot(NodeContext& c, bool negative_from_end) {
  std::vector<double> depth_value = c.constant_floats(1, "depth");
  if (depth_value.size() != 1) c.fail("depth must hold one value");
  int64_t depth = int64_t(depth_value[0]);
  if (depth <= 0) c.fail("depth must be positive");
  if (c.input_type(2).numel() != 2) c.fail("values must hold two elements (off, on)");
  int64_t rank = c.input_type(0).ndim() + 1;
  int64_t axis = normalize_axis(c, c.attr_int("axis", -1), rank);
  Expr indices = c.call("cast", {c.input(0)}, {{"dtype", std::string("int64")}});
  if (negative_from_end) {
    Expr negative = c.call("less", {indices, c.scalar(0, DType::kInt64)});
    indices = c.call("where", {negative, c.call("add", {indices, c.scalar(double(depth), DType::kInt64)}), indices});
  }
  indices = c.call("expand_dims", {indices}, {{"axis", axis}});
  std::vector<int64_t> iota_shape(size_t(rank), 1);
  iota_shape[size_t(axis)] = depth;
  NDArray iota(DType::kInt64, iota_shape);
  std::iota(iota.as<int64_t>(), iota.as<int64_t>() + depth, int64_t(0));
  Expr hot = c.call("equal", {indices, c.constant(std::move(iota))});
  Expr values = reshape_to(c, c.input(2), {2});
  Expr off = c.call("take", {values, c.scalar(0, DType::kInt64)}, {{"axis", int64_t(0)}});
  Expr on = c.call("take", {values, c.scalar(1, DType::kInt64)}, {{"axis", int64_t(0)}});
  set_single_output(c, c.call("where", {hot, on, off}));
}

}  // namespace

// The element of `data` at each position of `indices`, with the index along
// `axis` from `indices`: one take from the flattened data, at flat offsets
// whose other-axis part is a constant built at import.
Expr gather_elements(NodeContext& c, const Expr& data, const Expr& indices, int64_t axis) {
  const std::vector<int64_t>& d = static_shape_of(data);
  const TensorTypeNode& it = tensor_type_of(indices);
  const std::vector<int64_t>& i = it.shape;
  if (!dtype_is_int(it.dtype)) c.fail("indices must be integers");
  if (i.size() != d.size()) c.fail("indices must have the data's rank");
  std::vector<int64_t> strides(d.size(), 1);
  for (size_t k = d.size(); k-- > 1;) strides[k - 1] = strides[k] * d[k];
  for (size_t k = 0; k < d.size(); ++k)
    if (int64_t(k) != axis && i[k] > d[k])
      c.fail("indices " + shape_to_string(i) + " are larger than the data " + shape_to_string(d) + " off the axis");
  NDArray base(DType::kInt64, i);
  for (int64_t flat = 0; flat < base.numel(); ++flat) {
    int64_t rest = flat, offset = 0;
    for (size_t k = i.size(); k-- > 0;) {
      if (int64_t(k) != axis) offset += (rest % i[k]) * strides[k];
      rest /= i[k];
    }
    base.as<int64_t>()[flat] = offset;
  }
  int64_t dim = d[size_t(axis)];
  Expr index = c.call("cast", {indices}, {{"dtype", std::string("int64")}});
  const ConstantNode* known = as<ConstantNode>(indices);
  if (known)
    for (int64_t k = 0; k < known->data.numel(); ++k) {
      double v = known->data.get_as_double(k);
      if (v < double(-dim) || v >= double(dim))
        c.fail("index " + std::to_string(int64_t(v)) + " is out of range for an axis of " + std::to_string(dim));
    }
  Expr zero = c.scalar(0, DType::kInt64);
  Expr negative = c.call("less", {index, zero});
  index = c.call("where", {negative, c.call("add", {index, c.scalar(double(dim), DType::kInt64)}), index});
  Expr flat = c.call("add", {c.call("multiply", {index, c.scalar(double(strides[size_t(axis)]), DType::kInt64)}),
                             c.constant(std::move(base))});
  Expr flat_data = reshape_to(c, data, {tensor_type_of(data).numel()});
  if (known) return c.call("take", {flat_data, flat}, {{"axis", int64_t(0)}, {"mode", std::string("clip")}});
  // Indices known only at run time: one outside [-dim, dim) would land in
  // another row of the flattened data, so it becomes -1, which take's
  // "fast" mode reports as an error (as Gather's run-time indices do).
  Expr outside = c.scalar(-1, DType::kInt64);
  flat = c.call("where", {c.call("less", {index, zero}), outside, flat});
  flat = c.call("where", {c.call("greater", {index, c.scalar(double(dim - 1), DType::kInt64)}), outside, flat});
  return c.call("take", {flat_data, flat}, {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
}

// Dropout in inference: the input itself, and a mask of all true (of the
// input's type before version 10). The ratio is an attribute before 12,
// then an input beside training_mode and a seed attribute. Training with a
// ratio of 0 drops nothing, so it is the same (torchvision's Swin exports
// its attention dropout so).
void convert_dropout(NodeContext& c, int version) {
  if (version < 12) c.attr_float("ratio", 0.5f);
  if (version >= 12 && c.has_attr("seed")) c.attr_int("seed");
  if (version >= 12 && c.has_input(2)) {
    const NDArray& training = c.require_constant(2, "training_mode");
    const NDArray* ratio = c.has_input(1) ? c.constant_input(1) : nullptr;
    bool drops_nothing = ratio && ratio->numel() == 1 && ratio->get_as_double(0) == 0;
    if (training.get_as_double(0) != 0 && !drops_nothing)
      c.fail("training_mode=true is not supported (inference only) unless the ratio is a known 0");
  }
  if (version >= 12) c.has_input(1);  // the ratio: no effect in inference
  c.set_output(0, c.input(0));
  if (c.output_used(1)) {
    DType mask = version < 10 ? c.input_dtype(0) : DType::kBool;
    c.set_output(1, c.call("broadcast_to", {c.scalar(1, mask)}, {{"shape", dims_attr(c.input_dims(0))}}));
  }
}

void register_tensor_converters() {
  add_onnx_converter("Identity", {1, 13, 14, 16, 19, 21}, {{1, [](NodeContext& c) { set_single_output(c, c.input(0)); }}});
  add_onnx_converter("Dropout", {1, 6, 7, 10, 12, 13}, {{7, [](NodeContext& c) { convert_dropout(c, 7); }},
                                                        {10, [](NodeContext& c) { convert_dropout(c, 10); }},
                                                        {12, [](NodeContext& c) { convert_dropout(c, 12); }}});
  add_onnx_converter("Reshape", {1, 5, 13, 14, 19, 21}, {{5, [](NodeContext& c) { convert_reshape(c, false); }},
                                                         {14, [](NodeContext& c) { convert_reshape(c, true); }}});
  add_onnx_converter("Flatten", {1, 9, 11, 13, 21}, {{1, convert_flatten}});
  for (bool unsqueeze : {false, true})
    add_onnx_converter(unsqueeze ? "Unsqueeze" : "Squeeze", {1, 11, 13, 21},
                       {{1, [unsqueeze](NodeContext& c) { convert_squeeze(c, unsqueeze, false); }},
                        {13, [unsqueeze](NodeContext& c) { convert_squeeze(c, unsqueeze, true); }}});
  add_onnx_converter("Transpose", {1, 13, 21}, {{1, [](NodeContext& c) {
                       AttrValue perm = c.has_attr("perm") ? AttrValue(c.attr_ints("perm")) : AttrValue();
                       set_single_output(c, c.call("transpose", {c.input(0)}, {{"axes", perm}}));
                     }}});
  add_onnx_converter("Concat", {1, 4, 11, 13}, {{4, [](NodeContext& c) {
                       std::vector<Expr> parts;
                       int64_t axis = normalize_axis(c, c.attr_int("axis"), c.input_type(0).ndim());
                       // An empty known part (a slice of a shape) adds nothing.
                       for (size_t i = 0; i < c.input_count(); ++i)
                         if (!c.constant_input(i) || c.input_type(i).numel() > 0) parts.push_back(c.input(i));
                       if (parts.empty())
                         for (size_t i = 0; i < c.input_count(); ++i) parts.push_back(c.input(i));
                       set_single_output(c, parts.size() == 1 ? parts[0]
                                                              : c.call("concatenate", {c.tuple(parts)}, {{"axis", axis}}));
                     }}});
  add_onnx_converter("Split", {1, 2, 11, 13, 18},
                     {{2, [](NodeContext& c) { convert_split(c, SplitSizes::kAttribute); }},
                      {13, [](NodeContext& c) { convert_split(c, SplitSizes::kInput); }},
                      {18, [](NodeContext& c) { convert_split(c, SplitSizes::kInputOrNumOutputs); }}});
  add_onnx_converter("Slice", {1, 10, 11, 13}, {{1, [](NodeContext& c) { convert_slice(c, false); }},
                                                {10, [](NodeContext& c) { convert_slice(c, true); }}});
  add_onnx_converter("Gather", {1, 11, 13}, {{1, convert_gather}});
  add_onnx_converter("Expand", {8, 13}, {{8, convert_expand}});
  // Shape-15 may take a [start, end) range of the dimensions.
  auto shape = [](bool range) {
    return [range](NodeContext& c) {
      const std::vector<DimExpr>& dims = c.input_dims(0);
      int64_t rank = int64_t(dims.size());
      auto bound = [rank](int64_t v) { return std::min(std::max(v < 0 ? v + rank : v, int64_t(0)), rank); };
      int64_t start = range ? bound(c.attr_int("start", 0)) : 0, end = range ? bound(c.attr_int("end", rank)) : rank;
      std::vector<DimExpr> picked(dims.begin() + start, dims.begin() + std::max(start, end));
      set_single_output(c, c.shape_value(picked, {int64_t(picked.size())}));
    };
  };
  add_onnx_converter("Shape", {1, 13, 15, 19, 21}, {{1, shape(false)}, {15, shape(true)}});
  add_onnx_converter("Size", {1, 13, 19, 21}, {{1, [](NodeContext& c) {
                       set_single_output(c, c.scalar(double(c.input_type(0).numel()), DType::kInt64));
                     }}});
  add_onnx_converter("Constant", {1, 9, 11, 12, 13, 19, 21}, {{1, [](NodeContext& c) { convert_constant(c, false); }},
                                                              {12, [](NodeContext& c) { convert_constant(c, true); }}});
  add_onnx_converter("ConstantOfShape", {9, 20, 21}, {{9, convert_constant_of_shape}});
  add_onnx_converter("Range", {11}, {{11, convert_range}});
  add_onnx_converter("GatherElements", {11, 13}, {{11, convert_gather_elements}});
  add_onnx_converter("GatherND", {11, 12, 13}, {{11, [](NodeContext& c) { convert_gather_nd(c, false); }},
                                               {12, [](NodeContext& c) { convert_gather_nd(c, true); }}});
  add_onnx_converter("Trilu", {14}, {{14, convert_trilu}});
  add_onnx_converter("DepthToSpace", {1, 11, 13}, {{1, [](NodeContext& c) { convert_depth_space(c, true); }},
                                                   {11, [](NodeContext& c) { convert_depth_space(c, true, true); }}});
  add_onnx_converter("SpaceToDepth", {1, 13}, {{1, [](NodeContext& c) { convert_depth_space(c, false); }}});
  add_onnx_converter("EyeLike", {9}, {{9, convert_eye_like}});
  add_onnx_converter("OneHot", {9, 11}, {{9, [](NodeContext& c) { convert_one_hot(c, false); }},
                                         {11, [](NodeContext& c) { convert_one_hot(c, true); }}});
}

}  // namespace switchyard
