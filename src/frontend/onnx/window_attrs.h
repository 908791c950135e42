// The window attributes shared by ONNX's Conv, ConvTranspose and pools
// (kernel_shape, strides, dilations, pads, auto_pad), resolved to the 2-D
// form the IR operators take. A 1-D operator is imported as 2-D with a
// height of 1.
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/onnx/node_context.h"

namespace switchyard {

struct Window2d {
  std::vector<int64_t> kernel;     // (kh, kw)
  std::vector<int64_t> strides;    // (sh, sw)
  std::vector<int64_t> dilations;  // (dh, dw)
  std::vector<int64_t> padding;    // (top, left, bottom, right), as nn.conv2d
};

// Reads the attributes for a window over `spatial` (the input's spatial
// extents, 1 or 2 of them); `kernel` is the kernel extents when a weight
// gives them (else kernel_shape is required). `transposed` resolves
// auto_pad as ConvTranspose does; without `dilated` (a pool's version
// before they came) the window is undilated and the attribute is left
// unread, so a node that states it is refused. Fails naming the node for
// 3-D windows or inconsistent attributes.
Window2d read_window(NodeContext& c, const std::vector<int64_t>& spatial, std::vector<int64_t> kernel,
                     bool transposed = false, bool dilated = true);

// The input as 4-D NCHW: a 3-D (N, C, L) input gets a height of 1.
Expr as_nchw(NodeContext& c, const Expr& x);
// Undoes as_nchw on a result when the original input was 3-D.
Expr from_nchw(NodeContext& c, const Expr& y, int original_rank);

}  // namespace switchyard
