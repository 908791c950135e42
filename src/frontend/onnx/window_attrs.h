// The window attributes shared by ONNX's Conv, ConvTranspose and pools
// (kernel_shape, strides, dilations, pads, auto_pad), read and checked once,
// one entry per spatial axis (1, 2 or 3 of them). How a window of each rank
// becomes the IR's 2-D operators is spatial_windows.h's job.
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/onnx/node_context.h"

namespace switchyard {

struct WindowAxes {
  std::vector<int64_t> kernel;      // (k1, ..., kn)
  std::vector<int64_t> strides;     // one per spatial axis
  std::vector<int64_t> dilations;   // one per spatial axis
  std::vector<int64_t> pads_begin;  // one per spatial axis; a transposed window's may be negative
  std::vector<int64_t> pads_end;
  size_t rank() const { return kernel.size(); }
};

// Reads the attributes for a window over `spatial` (the input's spatial
// extents, 1 to 3 of them); `kernel` is the kernel extents when a weight
// gives them (else kernel_shape is required). `transposed` resolves
// auto_pad as ConvTranspose does; without `dilated` (a pool's version
// before they came) the window is undilated and the attribute is left
// unread, so a node that states it is refused. Fails naming the node for
// windows of other ranks or inconsistent attributes.
WindowAxes read_window(NodeContext& c, const std::vector<int64_t>& spatial, std::vector<int64_t> kernel,
                       bool transposed = false, bool dilated = true);

}  // namespace switchyard
