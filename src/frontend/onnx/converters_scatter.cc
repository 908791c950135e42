// Converters of ONNX's scatters: ScatterND, ScatterElements and the
// deprecated Scatter. The IR has no scatter operator, so a scatter whose
// indices are known at import (exports compute them from constants) is
// planned here: which update lands on each row of the data, then the result
// is the data where nothing lands and the gathered (reduced) updates where
// something does — a take of the updates at constant positions and a where
// over a constant mask, per round of duplicates. Indices computed at run
// time are refused.
#include <algorithm>
#include <map>

#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

// How duplicates combine (ONNX's `reduction`); kNone keeps the last update.
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// Past this many output rows times rounds of duplicates the masks and
// positions built at import would outgrow the data by too much.
constexpr int64_t kScatterPlanLimit = int64_t(1) << 26;

Reduction read_reduction(NodeContext& c, bool has_reduction, bool has_extremes) {
  if (!has_reduction) return Reduction::kNone;
  std::string r = c.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (has_extremes && r == "max") return Reduction::kMax;
  if (has_extremes && r == "min") return Reduction::kMin;
  c.fail("reduction '" + r + "' is not one of " + (has_extremes ? "none, add, mul, max, min" : "none, add, mul"));
}

// The indices input's values as int64, or a refusal when they are only
// known at run time.
std::vector<int64_t> known_indices(NodeContext& c) {
  if (!dtype_is_int(c.input_dtype(1))) c.fail("indices must be integers");
  const NDArray* known = c.constant_input(1);
  if (!known)
    c.fail("the indices are computed at run time; Switchyard converts a scatter only when its indices are known at "
           "import (initializers, constants, or values computed from them)");
  std::vector<int64_t> values(size_t(known->numel()));
  for (int64_t i = 0; i < known->numel(); ++i)
    values[size_t(i)] = known->dtype() == DType::kInt64 ? known->as<int64_t>()[i] : int64_t(known->get_as_double(i));
  return values;
}

int64_t checked_index(NodeContext& c, int64_t index, int64_t dim, size_t axis) {
  if (index < -dim || index >= dim)
    c.fail("index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) + " of size " +
           std::to_string(dim));
  return index < 0 ? index + dim : index;
}

// data viewed as (rows, width), updates as (targets.size(), width); update
// row u lands on data row targets[u]. Duplicates are applied in order:
// round r holds, for each data row, its r-th update.
Expr scatter_rows(NodeContext& c, const std::vector<int64_t>& targets, int64_t rows, int64_t width,
                  Reduction reduction) {
  std::vector<std::vector<int64_t>> rounds;
  std::vector<int64_t> seen(size_t(rows), 0);
  for (size_t u = 0; u < targets.size(); ++u) {
    int64_t t = targets[u];
    size_t round = reduction == Reduction::kNone ? 0 : size_t(seen[size_t(t)]++);
    if (round == rounds.size()) {
      if (int64_t(round + 1) * rows > kScatterPlanLimit)
        c.fail(std::to_string(round + 1) + " updates land on one row of " + std::to_string(rows) +
               ": too many duplicates to convert");
      rounds.emplace_back(size_t(rows), -1);
    }
    rounds[round][size_t(t)] = int64_t(u);
  }
  DType dtype = c.input_dtype(0);
  Expr result = reshape_to(c, c.input(0), {rows, width});
  Expr updates = reshape_to(c, c.input(2), {int64_t(targets.size()), width});
  // Bool has no add or multiply: or and and are its maximum and minimum.
  bool boolean = dtype == DType::kBool;
  const char* combine = reduction == Reduction::kAdd   ? (boolean ? "maximum" : "add")
                        : reduction == Reduction::kMul ? (boolean ? "minimum" : "multiply")
                        : reduction == Reduction::kMax ? "maximum"
                                                       : "minimum";
  for (const std::vector<int64_t>& round : rounds) {
    NDArray mask(DType::kBool, {rows, 1});
    NDArray positions(DType::kInt64, {rows});
    for (int64_t r = 0; r < rows; ++r) {
      mask.as<bool>()[r] = round[size_t(r)] >= 0;
      positions.as<int64_t>()[r] = std::max<int64_t>(round[size_t(r)], 0);
    }
    Expr gathered = c.call("take", {updates, c.constant(std::move(positions))},
                           {{"axis", int64_t(0)}, {"mode", std::string("clip")}});
    Expr value = reduction == Reduction::kNone ? gathered : c.call(combine, {result, gathered});
    result = c.call("where", {c.constant(std::move(mask)), value, result});
  }
  return reshape_to(c, result, c.input_shape(0));
}

void require_same_dtype(NodeContext& c) {
  if (c.input_dtype(2) != c.input_dtype(0))
    c.fail(std::string("updates are ") + dtype_name(c.input_dtype(2)) + " but the data is " +
           dtype_name(c.input_dtype(0)));
}

// ScatterND: each index tuple (the last axis of `indices`, k long) names a
// slice data[i0, ..., ik-1] that an update slice replaces (or combines with).
void convert_scatter_nd(NodeContext& c, bool has_reduction, bool has_extremes) {
  Reduction reduction = read_reduction(c, has_reduction, has_extremes);
  const std::vector<int64_t>& data = c.input_shape(0);
  const std::vector<int64_t>& index_shape = c.input_shape(1);
  const std::vector<int64_t>& update_shape = c.input_shape(2);
  require_same_dtype(c);
  std::vector<int64_t> indices = known_indices(c);
  if (index_shape.empty()) c.fail("indices must have rank 1 or more");
  int64_t k = index_shape.back();
  if (k < 1 || k > int64_t(data.size()))
    c.fail("index tuples of " + std::to_string(k) + " do not fit data of rank " + std::to_string(data.size()));
  std::vector<int64_t> expected(index_shape.begin(), index_shape.end() - 1);
  expected.insert(expected.end(), data.begin() + k, data.end());
  if (update_shape != expected)
    c.fail("updates are " + shape_to_string(update_shape) + " but indices " + shape_to_string(index_shape) +
           " and data " + shape_to_string(data) + " need " + shape_to_string(expected));
  int64_t rows = product(data, 0, size_t(k)), width = product(data, size_t(k), data.size());
  std::vector<int64_t> targets(indices.size() / size_t(k));
  for (size_t u = 0; u < targets.size(); ++u) {
    int64_t row = 0;
    for (size_t j = 0; j < size_t(k); ++j) row = row * data[j] + checked_index(c, indices[u * size_t(k) + j], data[j], j);
    targets[u] = row;
  }
  set_single_output(c, scatter_rows(c, targets, rows, width, reduction));
}

// ScatterElements (and Scatter-9): update element p lands on the data
// element at p with its `axis` coordinate replaced by indices[p].
void convert_scatter_elements(NodeContext& c, bool has_reduction, bool has_extremes) {
  Reduction reduction = read_reduction(c, has_reduction, has_extremes);
  const std::vector<int64_t>& data = c.input_shape(0);
  const std::vector<int64_t>& index_shape = c.input_shape(1);
  int64_t rank = int64_t(data.size());
  size_t axis = size_t(normalize_axis(c, c.attr_int("axis", 0), rank));
  require_same_dtype(c);
  if (c.input_shape(2) != index_shape)
    c.fail("updates " + shape_to_string(c.input_shape(2)) + " and indices " + shape_to_string(index_shape) +
           " must have the same shape");
  if (int64_t(index_shape.size()) != rank) c.fail("indices must have the data's rank");
  for (size_t a = 0; a < data.size(); ++a)
    if (a != axis && index_shape[a] > data[a])
      c.fail("indices " + shape_to_string(index_shape) + " are larger than the data " + shape_to_string(data) +
             " off the axis");
  std::vector<int64_t> indices = known_indices(c);
  std::vector<int64_t> targets(indices.size());
  for (size_t u = 0; u < indices.size(); ++u) {
    int64_t rest = int64_t(u), flat = 0, stride = 1;
    for (size_t a = data.size(); a-- > 0;) {
      int64_t coordinate = rest % index_shape[a];
      rest /= index_shape[a];
      if (a == axis) coordinate = checked_index(c, indices[u], data[a], a);
      flat += coordinate * stride;
      stride *= data[a];
    }
    targets[u] = flat;
  }
  set_single_output(c, scatter_rows(c, targets, product(data, 0, data.size()), 1, reduction));
}

}  // namespace

void register_scatter_converters() {
  // `reduction` came with version 16 (none, add, mul), max and min with 18.
  for (const char* op : {"ScatterND", "ScatterElements"}) {
    auto convert = std::string(op) == "ScatterND" ? convert_scatter_nd : convert_scatter_elements;
    add_onnx_converter(op, {11, 13, 16, 18},
                       {{11, [convert](NodeContext& c) { convert(c, false, false); }},
                        {16, [convert](NodeContext& c) { convert(c, true, false); }},
                        {18, [convert](NodeContext& c) { convert(c, true, true); }}});
  }
  // Scatter-9 is ScatterElements without reduction; ONNX deprecated it in 11.
  add_onnx_converter("Scatter", {9, 11},
                     {{9, [](NodeContext& c) { convert_scatter_elements(c, false, false); }},
                      refused_from(11, "is deprecated: ONNX replaced it by ScatterElements in opset 11 (export the "
                                       "model with ScatterElements, or at an opset below 11)")});
}

}  // namespace switchyard
