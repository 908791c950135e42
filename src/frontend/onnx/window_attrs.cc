// Window attributes of convolutions and pools (see window_attrs.h).
#include "frontend/onnx/window_attrs.h"

namespace switchyard {

WindowAxes read_window(NodeContext& c, const std::vector<int64_t>& spatial, std::vector<int64_t> kernel,
                       bool transposed, bool dilated) {
  size_t n = spatial.size();
  if (n < 1 || n > 3) c.fail(std::to_string(n) + "-D windows are not supported (only 1-D, 2-D and 3-D)");
  std::vector<int64_t> kernel_attr = c.attr_ints("kernel_shape", kernel);
  if (kernel_attr.size() != n)
    c.fail("kernel_shape " + shape_to_string(kernel_attr) + " has " + std::to_string(kernel_attr.size()) +
           " entries, but the input has " + std::to_string(n) + " spatial axes");
  for (int64_t v : kernel_attr)
    if (v <= 0) c.fail("kernel_shape " + shape_to_string(kernel_attr) + " must be positive");
  if (!kernel.empty() && kernel_attr != kernel)
    c.fail("kernel_shape " + shape_to_string(kernel_attr) + " does not match the weight's kernel " +
           shape_to_string(kernel));
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
  WindowAxes w;
  w.kernel = kernel_attr;
  w.strides = strides;
  w.dilations = dilations;
  w.pads_begin.assign(pads.begin(), pads.begin() + long(n));
  w.pads_end.assign(pads.begin() + long(n), pads.end());
  return w;
}

}  // namespace switchyard
