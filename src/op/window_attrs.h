// The window family's attributes as one typed struct: a convolution's or a
// pool's strides, dilation, padding, window, groups and modes, read from the
// call's attributes in one place (their names and defaults are the
// registry's, op/window_ops.cc), so back ends never spell an attribute name.
// The registry checks the lists' lengths and signs when the call is built
// (op/window_ops.cc), so reading them here needs no check.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expr.h"
#include "op/shape_rules.h"

namespace switchyard {

struct WindowAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;  // 1: dense
  Padding2D padding;
  int64_t pool_h = 0, pool_w = 0;  // a pool's window (a convolution's is its weights')
  int64_t groups = 1;              // a convolution's
  bool ceil_mode = false;          // a pool's
  bool count_include_pad = false;  // an average pool's
  // "NCHW" (the activations), and a convolution's "OIHW" weights.
  std::string data_layout = "NCHW", kernel_layout;
};

// The window attributes of a call of nn.conv2d, nn.max_pool2d, nn.avg_pool2d
// or nn.global_avg_pool2d (the last: a whole-plane window, no attributes but
// its layout); what the call lacks keeps the defaults above.
WindowAttrs window_attrs(const CallNode& call);
WindowAttrs window_attrs(const AttrsNode& attrs);

}  // namespace switchyard
