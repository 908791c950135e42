// ONNX's convolutions and pools of 1 to 3 spatial axes as the IR's 2-D
// window operators (nn.conv2d, nn.max_pool2d, nn.avg_pool2d), so every
// backend that runs those (the interpreter, generated loops, oneDNN) runs
// these. A 1-D window is a 2-D one of height 1. A 3-D window is split at
// its depth: a convolution gathers each output plane's depth taps into
// channels and convolves the planes as a batch (one nn.conv2d); a pool,
// being separable, pools each depth plane's height and width, then the
// depth as a (KD, 1) window.
#pragma once

#include <string>

#include "frontend/onnx/window_attrs.h"

namespace switchyard {

// x (N, C, spatial...) convolved by w (O, C/groups, kernel...) over
// `window` (pads not negative), as ONNX Conv without its bias.
Expr window_convolution(NodeContext& c, const Expr& x, const Expr& w, const WindowAxes& window, int64_t groups);

// x (N, C, spatial...) pooled by `op` (nn.max_pool2d or nn.avg_pool2d)
// over `window`, as ONNX MaxPool and AveragePool.
Expr window_pool(NodeContext& c, const std::string& op, const Expr& x, const WindowAxes& window, bool ceil_mode,
                 bool count_include_pad);

}  // namespace switchyard
