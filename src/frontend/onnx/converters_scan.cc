// Converters of ONNX's TopK and CumSum, onto the IR operators topk_indices
// and cumsum (op/scan_ops.cc); TopK's values are the input gathered at the
// chosen indices.
#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

void require_numeric(NodeContext& c) {
  if (c.input_dtype(0) == DType::kBool) c.fail("needs a numeric input, got bool");
}

// TopK: k an attribute in version 1, an input from 10; largest and sorted
// came with 11 (unsorted results may come in any order, so sorted ones do).
void convert_top_k(NodeContext& c, int version) {
  require_numeric(c);
  const std::vector<int64_t>& shape = c.input_shape(0);
  int64_t axis = normalize_axis(c, c.attr_int("axis", -1), int64_t(shape.size()));
  int64_t k = 0;
  if (version < 10) {
    k = c.attr_int("k");
  } else {
    if (!dtype_is_int(c.input_dtype(1))) c.fail("k must be an integer");
    std::vector<int64_t> known = c.constant_ints(1, "k");
    if (known.size() != 1) c.fail("k must hold one value, got " + std::to_string(known.size()));
    k = known[0];
  }
  bool largest = version < 11 || c.attr_int("largest", 1) != 0;
  if (version >= 11) c.attr_int("sorted", 1);
  if (k < 1 || k > shape[size_t(axis)])
    c.fail("k = " + std::to_string(k) + " is outside [1, " + std::to_string(shape[size_t(axis)]) + "], the extent of axis " +
           std::to_string(axis) + (k == 0 ? " (empty outputs are not supported)" : ""));
  Expr indices = c.call("topk_indices", {c.input(0)}, {{"k", k}, {"axis", axis}, {"largest", largest}});
  c.set_output(0, gather_elements(c, c.input(0), indices, axis));
  c.set_output(1, indices);
}

// CumSum: the axis is an input (a scalar or one value) that must be known.
void convert_cum_sum(NodeContext& c) {
  require_numeric(c);
  if (!dtype_is_int(c.input_dtype(1))) c.fail("axis must be an integer");
  std::vector<int64_t> axis = c.constant_ints(1, "axis");
  if (axis.size() != 1) c.fail("axis must hold one value, got " + std::to_string(axis.size()));
  int64_t normalized = normalize_axis(c, axis[0], c.input_type(0).ndim());
  bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  set_single_output(c, c.call("cumsum", {c.input(0)},
                              {{"axis", normalized}, {"exclusive", exclusive}, {"reverse", reverse}}));
}

}  // namespace

void register_scan_converters() {
  add_onnx_converter("TopK", {1, 10, 11}, {{1, [](NodeContext& c) { convert_top_k(c, 1); }},
                                           {10, [](NodeContext& c) { convert_top_k(c, 10); }},
                                           {11, [](NodeContext& c) { convert_top_k(c, 11); }}});
  add_onnx_converter("CumSum", {11, 14}, {{11, convert_cum_sum}});
}

}  // namespace switchyard
