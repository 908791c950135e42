// Window attributes of convolutions and pools (see window_attrs.h).
#include "frontend/onnx/window_attrs.h"

namespace switchyard {

namespace {

// A 1-D attribute list becomes 2-D with the height's entry `height_value`.
std::vector<int64_t> widen(const std::vector<int64_t>& v, int64_t height_value) {
  return v.size() == 1 ? std::vector<int64_t>{height_value, v[0]} : v;
}

}  // namespace

Window2d read_window(NodeContext& c, const std::vector<int64_t>& spatial, std::vector<int64_t> kernel,
                     bool transposed, bool dilated) {
  size_t n = spatial.size();
  if (n != 1 && n != 2) c.fail(std::to_string(n) + "-D windows are not supported (only 1-D and 2-D)");
  std::vector<int64_t> kernel_attr = c.attr_ints("kernel_shape", kernel);
  if (kernel_attr.size() != n) c.fail("kernel_shape must have " + std::to_string(n) + " entries");
  if (!kernel.empty() && kernel_attr != kernel) c.fail("kernel_shape does not match the weight");
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dilations = dilated ? c.attr_ints("dilations", std::vector<int64_t>(n, 1)) : std::vector<int64_t>(n, 1);
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    c.fail("strides, dilations and pads must have one entry (pads two) per spatial axis");
  for (int64_t v : strides)
    if (v <= 0) c.fail("strides must be positive");
  for (int64_t v : dilations)
    if (v <= 0) c.fail("dilations must be positive");
  for (int64_t v : pads)
    if (v < 0) c.fail("negative pads are not supported");
  if (auto_pad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // A transposed window's output_padding counts towards its output, which
    // SAME makes input * stride.
    std::vector<int64_t> output_padding(n, 0);
    if (transposed) output_padding = c.attr_ints("output_padding", output_padding);
    if (output_padding.size() != n) c.fail("output_padding must have one entry per spatial axis");
    for (size_t i = 0; i < n; ++i) {
      int64_t extent = (kernel_attr[i] - 1) * dilations[i] + 1;
      int64_t total = 0;
      if (transposed) {
        total = (spatial[i] - 1) * strides[i] + output_padding[i] + extent - spatial[i] * strides[i];
      } else {
        int64_t out = (spatial[i] + strides[i] - 1) / strides[i];
        total = std::max<int64_t>(0, (out - 1) * strides[i] + extent - spatial[i]);
      }
      if (total < 0) {
        // A kernel shorter than the stride leaves the transposed output
        // short of input * stride: a negative pad at the end lengthens it
        // (the caller pads with zeros there), as output_padding would.
        pads[i] = 0;
        pads[i + n] = total;
        continue;
      }
      int64_t small = total / 2, large = total - small;
      bool upper = auto_pad == "SAME_UPPER";
      pads[i] = upper ? small : large;
      pads[i + n] = upper ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  Window2d w;
  w.kernel = widen(kernel_attr, 1);
  w.strides = widen(strides, 1);
  w.dilations = widen(dilations, 1);
  w.padding = n == 1 ? std::vector<int64_t>{0, pads[0], 0, pads[1]} : pads;
  return w;
}

Expr as_nchw(NodeContext& c, const Expr& x) {
  const TensorTypeNode& t = tensor_type_of(x);
  if (t.ndim() == 4) return x;
  if (t.ndim() != 3) c.fail("expects a 3-D or 4-D input, got " + type_to_string(x->checked_type()));
  return c.call("expand_dims", {x}, {{"axis", int64_t(2)}});
}

Expr from_nchw(NodeContext& c, const Expr& y, int original_rank) {
  if (original_rank == 4) return y;
  return c.call("squeeze", {y}, {{"axis", std::vector<int64_t>{2}}});
}

}  // namespace switchyard
